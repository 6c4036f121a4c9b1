package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/sqlite"
)

// `leashd audit --notices` lists what agents reported beside their
// interactions, filtered by chat, as a table or JSON lines; flags that
// select interactions are refused with it.
func TestAuditNotices(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testenv.PrivateDir(t), "leashd.db")
	s, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	t0 := time.Now().Add(-time.Minute)
	require.NoError(t, s.RecordNotice(ctx, "telegram:42", "permission_denied", "Claude Code denied Bash without asking: rm is denied", t0))
	require.NoError(t, s.RecordNotice(ctx, "slack:C1", "session_writes_lost", "Claude Code could not save the session transcript (the disk is full)", t0.Add(time.Second)))
	require.NoError(t, s.Close())
	d := auditDB{path: path}

	out, _, err := d.audit(t, "--notices")
	require.NoError(t, err)
	assert.Contains(t, out, "AT")
	assert.Contains(t, out, "telegram:42  permission_denied    Claude Code denied Bash without asking: rm is denied")
	assert.Contains(t, out, "slack:C1     session_writes_lost  Claude Code could not save")

	out, _, err = d.audit(t, "--notices", "--json", "--chat", "slack:C1")
	require.NoError(t, err)
	lines := jsonLines(t, out)
	require.Len(t, lines, 1)
	assert.Equal(t, "session_writes_lost", lines[0]["kind"])
	assert.Equal(t, "slack:C1", lines[0]["chat_id"])

	_, _, err = d.audit(t, "--notices", "--kind", "question")
	assert.ErrorContains(t, err, "--kind and --status select interactions")
}
