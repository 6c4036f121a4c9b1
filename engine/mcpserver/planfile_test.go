package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/mcpserver"
)

// TestPermissionPromptNeverOpensAPlanFile: a caller's ExitPlanMode with an
// empty plan and a planFilePath — absolute, relative with "..", or
// /proc/self/environ — makes leashd open no file: nothing is shown in the
// chat, and the caller is told to send the plan inline, with nothing of
// the file in the answer.
func TestPermissionPromptNeverOpensAPlanFile(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	require.NoError(t, os.Mkdir(work, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(root, "secret.env"), []byte("BOT_TOKEN=123:SECRET"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(work, "plan.md"), []byte("# Plan SECRET"), 0o600))
	coord, shown := newCoord()
	cs := connectWith(t, coord, mcpserver.Options{WorkDir: work, PermissionResult: claude.PermissionResult})
	for _, path := range []string{filepath.Join(root, "secret.env"), "../secret.env", "plan.md", "/proc/self/environ"} {
		t.Run(path, func(t *testing.T) {
			out, isErr := call(t, cs, mcpserver.ToolPermissionPrompt, map[string]any{"tool_name": "ExitPlanMode", "tool_use_id": "toolu_1",
				"input": map[string]any{"plan": "", "planFilePath": path}})
			assert.False(t, isErr)
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &m))
			assert.Equal(t, "deny", m["behavior"])
			assert.Contains(t, m["message"], "only the plan given inline")
			assert.NotContains(t, out, "SECRET")
			select {
			case it := <-shown:
				t.Fatalf("shown: %+v", it)
			default:
			}
		})
	}
}
