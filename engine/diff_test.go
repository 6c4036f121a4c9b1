package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
)

// A file change's approval carries its diff against the file in the
// chat's working directory: for leashd's own options (a Write over a file
// that exists) and for an agent's own options (an ACP permission whose
// diff the driver shows as an Edit).
func TestApprovalCarriesTheDiff(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644))
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, _ *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		req := agent.PermissionRequest{ToolName: "Write", Input: mustJSON(map[string]string{"file_path": filepath.Join(dir, "a.txt"), "content": "one\n2\n"})}
		if prompt == "acp" {
			req = agent.PermissionRequest{ToolName: "Edit", Input: mustJSON(map[string]string{"file_path": "a.txt", "old_string": "one", "new_string": "1"}),
				Options: []agent.PermissionOption{{ID: "allow", Name: "Allow", Kind: "allow_once"}, {ID: "reject", Name: "Reject", Kind: "reject_once"}}}
		}
		h.Permission(ctx, req)
		return agent.Result{Text: "done", SessionID: "s"}, nil
	}}
	e, conn, coord := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir })
	send(t, e, "c1", "write")
	it := conn.WaitShown(t, 1)
	assert.Equal(t, "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2", it.Diff)
	coord.CancelPending("c1", "enough")
	send(t, e, "c1", "acp")
	it = conn.WaitShown(t, 2)
	assert.Equal(t, "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+1\n two", it.Diff)
}

// TestDiffForAnAgentOnARunnerReadsNothingHere: for an agent on a runner
// the file at the same path on the server is another file, so the diff
// is the edit's own text, never a hunk of the server's copy.
func TestDiffForAnAgentOnARunnerReadsNothingHere(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("server\ncopy\none\n"), 0o644))
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, _ *enginetest.ScriptSession, _ string, h agent.TurnHandler) (agent.Result, error) {
		h.Permission(ctx, agent.PermissionRequest{ToolName: "Edit", Input: mustJSON(map[string]string{"file_path": "a.txt", "old_string": "one", "new_string": "1"})})
		return agent.Result{Text: "done", SessionID: "s"}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir })
	rs := &fakeRunners{remote: map[string]bool{"c1": true}}
	rs.slots.Store(8)
	e.SetRunners(rs)
	send(t, e, "c1", "edit")
	it := conn.WaitShown(t, 1)
	assert.NotContains(t, it.Diff, "server", "the server's copy is not the agent's file")
	assert.Contains(t, it.Diff, "-one\n+1")
}
