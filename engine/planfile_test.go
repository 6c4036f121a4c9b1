package engine_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
)

// TestPlanFileOutsideThePlanDirectoryIsNotRead: an ExitPlanMode whose plan
// is only a planFilePath is read from the agent's plan directory and from
// nowhere else — not an absolute path elsewhere, not "..", not a symlink
// that leads out, not a FIFO, not with no plan directory at all. People see
// nothing of the file, and the agent is told to send the plan inline.
func TestPlanFileOutsideThePlanDirectoryIsNotRead(t *testing.T) {
	root := t.TempDir()
	plans := filepath.Join(root, "plans")
	require.NoError(t, os.Mkdir(plans, 0o700))
	secret := filepath.Join(root, "secret.env")
	require.NoError(t, os.WriteFile(secret, []byte("BOT_TOKEN=123:SECRET"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(plans, "link.md")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(plans, "fifo.md"), 0o600))
	for _, tc := range []struct{ name, path, dir string }{
		{"absolute elsewhere", secret, plans},
		{"proc environ", "/proc/self/environ", plans},
		{"dot dot", "../secret.env", plans},
		{"symlink out", "link.md", plans},
		{"fifo", "fifo.md", plans},
		{"the directory itself", plans, plans},
		{"no plan directory", secret, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan agent.PermissionResponse, 1)
			e, conn, _ := start(t, planFileAgent(tc.path, tc.dir, got), nil, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = root }, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModePlan })
			send(t, e, "c1", "plan it")
			resp := <-got
			assert.False(t, resp.Allow)
			assert.Contains(t, resp.Message, "call ExitPlanMode again with the whole plan in \"plan\"")
			assert.NotContains(t, resp.Message, "SECRET")
			conn.Lock()
			defer conn.Unlock()
			assert.Empty(t, conn.Shown, "nothing to review was shown")
			for _, s := range conn.Said {
				assert.NotContains(t, s, "SECRET")
			}
		})
	}
}
