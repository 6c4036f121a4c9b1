package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/store"
)

// Agents' notices are appended to the audit log and read back by chat,
// time and limit, oldest first; a read-only reader sees them and the log
// cannot be rewritten.
func TestNoticesAreAudited(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "leashd.db")
	s, err := store.Open(ctx, path)
	require.NoError(t, err)
	defer s.Close()
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	require.NoError(t, s.RecordNotice(ctx, "telegram:42", "permission_denied", "denied Bash", t0))
	require.NoError(t, s.RecordNotice(ctx, "slack:C1", "session_writes_lost", "disk full", t0.Add(time.Minute)))
	require.NoError(t, s.RecordNotice(ctx, "telegram:42", "conversation_reset", "fresh conversation", t0.Add(2*time.Minute)))

	r, err := store.Open(ctx, path, store.ReadOnly())
	require.NoError(t, err)
	defer r.Close()
	all, err := r.Notices(ctx, store.AuditFilter{})
	require.NoError(t, err)
	require.Len(t, all, 3)
	assert.Equal(t, store.Notice{ChatID: "telegram:42", Kind: "permission_denied", Text: "denied Bash", At: t0}, all[0])

	one, err := r.Notices(ctx, store.AuditFilter{ChatID: "telegram:42", Since: t0.Add(time.Second)})
	require.NoError(t, err)
	require.Len(t, one, 1)
	assert.Equal(t, "conversation_reset", one[0].Kind)

	last, err := r.Notices(ctx, store.AuditFilter{Limit: 2})
	require.NoError(t, err)
	require.Len(t, last, 2)
	assert.Equal(t, "session_writes_lost", last[0].Kind, "the newest two, oldest first")

	_, err = r.Notices(ctx, store.AuditFilter{Limit: -1})
	assert.ErrorContains(t, err, "limit -1 is negative")
	assert.Error(t, r.RecordNotice(ctx, "x", "k", "t", t0), "a read-only store records nothing")
}
