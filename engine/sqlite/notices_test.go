package sqlite_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// Agents' notices are appended to the audit log and read back by chat,
// time and limit, oldest first; a read-only reader sees them and the log
// cannot be rewritten.
func TestNoticesAreAudited(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "leashd.db")
	s, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	defer s.Close()
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	require.NoError(t, s.RecordNotice(ctx, "telegram:42", "permission_denied", "denied Bash", t0))
	require.NoError(t, s.RecordNotice(ctx, "slack:C1", "session_writes_lost", "disk full", t0.Add(time.Minute)))
	require.NoError(t, s.RecordNotice(ctx, "telegram:42", "conversation_reset", "fresh conversation", t0.Add(2*time.Minute)))

	r, err := sqlite.Open(ctx, path, sqlite.ReadOnly())
	require.NoError(t, err)
	defer r.Close()
	all, err := r.Notices(ctx, sqlite.AuditFilter{})
	require.NoError(t, err)
	require.Len(t, all, 3)
	assert.Equal(t, sqlite.Notice{ChatID: "telegram:42", Kind: "permission_denied", Text: "denied Bash", At: t0}, all[0])

	one, err := r.Notices(ctx, sqlite.AuditFilter{ChatID: "telegram:42", Since: t0.Add(time.Second)})
	require.NoError(t, err)
	require.Len(t, one, 1)
	assert.Equal(t, "conversation_reset", one[0].Kind)

	last, err := r.Notices(ctx, sqlite.AuditFilter{Limit: 2})
	require.NoError(t, err)
	require.Len(t, last, 2)
	assert.Equal(t, "session_writes_lost", last[0].Kind, "the newest two, oldest first")

	_, err = r.Notices(ctx, sqlite.AuditFilter{Limit: -1})
	assert.ErrorContains(t, err, "limit -1 is negative")
	assert.Error(t, r.RecordNotice(ctx, "x", "k", "t", t0), "a read-only store records nothing")
}

// What the agent said about a tool approval — reason, MCP server, Deny
// first, no session option, show it whole — is kept, so the request shown
// again after a restart looks as it did.
func TestApprovalFieldsSurviveARestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "leashd.db")
	s, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	it := interactions.Interaction{ID: "t1", ChatID: "telegram:42", Kind: interactions.KindToolApproval, ToolName: "mcp__github__create_issue",
		ToolInput: json.RawMessage(`{"title":"x"}`), Options: interactions.ToolOptionsFor(interactions.Interaction{DefaultToNo: true, NoSessionAllow: true}),
		Reason: "Why it asks: Posts to a public repo", MCPServer: "github (user)", DefaultToNo: true, NoSessionAllow: true, RequiresDetails: true,
		AskedAt: time.Now()}
	require.NoError(t, s.Requested(ctx, it))
	require.NoError(t, s.Close()) // a crash: still pending
	s, err = sqlite.Open(ctx, path)
	require.NoError(t, err)
	defer s.Close()
	got, err := s.Interrupt(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	back := got[0].Interaction
	assert.Equal(t, it.Reason, back.Reason)
	assert.Equal(t, it.MCPServer, back.MCPServer)
	assert.True(t, back.DefaultToNo)
	assert.True(t, back.NoSessionAllow)
	assert.True(t, back.RequiresDetails)
	assert.Equal(t, it.Options, back.Options, "Deny first, no session option")
}
