package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/sandbox"
	"github.com/leashd/leashd/engine/agent/sandbox/bwrap"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// allowAll picks the agent's first allowing option for every permission
// request, as a person tapping Allow does, and ignores the stream.
type allowAll struct{}

func (allowAll) Text(string)                     {}
func (allowAll) ToolUse(string, json.RawMessage) {}
func (allowAll) Permission(_ context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	for _, o := range req.Options {
		if o.Allows() {
			return agent.PermissionResponse{Allow: true, OptionID: o.ID}
		}
	}
	return agent.PermissionResponse{Message: "no allowing option"}
}

// The real ACP adapter (and the Claude Code it starts) runs inside
// bubblewrap: a command the person allowed writes the working directory
// and finds neither leashd's variables nor its database.
func TestRealACPInBwrap(t *testing.T) {
	t.Setenv("LEASHD_SLACK_BOT_TOKEN", "xoxb-the-slack-token")
	home, state, dir := t.TempDir(), t.TempDir(), t.TempDir()
	db := filepath.Join(state, "leashd.db")
	require.NoError(t, os.WriteFile(db, []byte("SQLite format 3 leashd"), 0o600))
	w, err := bwrap.New(bwrap.Options{Program: testenv.Bwrap(t), Home: home, Hide: []string{state}, Network: true})
	require.NoError(t, err)
	require.NoError(t, w.Check(t.Context()))
	api := fakeapi.New(t)
	api.Reply(fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_env", Name: "Bash", Input: map[string]string{
		"command": "echo made > made.txt; env; cat " + db + " || echo no-database", "description": "look around"}}}},
		fakeapi.Text("looked"))
	ag := New([]string{testenv.ACPAgent(t)}, WithEnv(append(api.Env(home), "IS_SANDBOX=1")...),
		WithCloseTimeout(3*time.Second), WithSandbox(&sandbox.Host{Wrap: w}))
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	s, err := ag.Open(ctx, agent.SessionOptions{ChatID: "sb", WorkDir: dir, Mode: agent.ModeDefault})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	res, err := s.Turn(ctx, agent.Text("look around"), allowAll{})
	require.NoError(t, err)
	assert.Equal(t, "looked", res.Text)
	var out string
	for _, c := range api.Calls() {
		if b, ok := c.ToolResult("toolu_env"); ok {
			out = b.ResultText()
		}
	}
	assert.Contains(t, out, "no-database")
	assert.Contains(t, out, "ANTHROPIC_BASE_URL=")
	assert.NotContains(t, out, "xoxb-the-slack-token")
	assert.NotContains(t, out, "LEASHD_")
	assert.NotContains(t, out, "SQLite format 3")
	b, err := os.ReadFile(filepath.Join(dir, "made.txt"))
	require.NoError(t, err)
	assert.Equal(t, "made\n", string(b))
}
