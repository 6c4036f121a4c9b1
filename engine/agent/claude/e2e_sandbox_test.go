package claude_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/agent/sandbox"
	"github.com/leashd/leashd/engine/agent/sandbox/bwrap"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// The real CLI runs inside bubblewrap: it starts, answers, and the Bash
// command a person allowed writes the working directory but finds neither
// leashd's variables nor its state.
func TestRealCLIInBwrap(t *testing.T) {
	t.Setenv("LEASHD_TELEGRAM_BOT_TOKEN", "123456:the-bot-token")
	home, state := t.TempDir(), t.TempDir()
	db := filepath.Join(state, "leashd.db")
	require.NoError(t, os.WriteFile(db, []byte("SQLite format 3 leashd"), 0o600))
	w, err := bwrap.New(bwrap.Options{Program: testenv.Bwrap(t), Home: home, Hide: []string{state}, Network: true})
	require.NoError(t, err)
	require.NoError(t, w.Check(t.Context()))

	api := fakeapi.New(t)
	c := &realCLI{api: api, home: home, dir: t.TempDir(), agent: claude.New(testenv.Claude(t),
		claude.WithEnv(api.Env(home)), claude.WithLogger(newTestLogger(t)), claude.WithSandbox(&sandbox.Host{Wrap: w}))}
	api.Reply(fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_env", Name: "Bash", Input: map[string]string{
		"command": "echo made > made.txt; env; cat " + db + " || echo no-database", "description": "look around"}}}},
		fakeapi.Text("looked"))
	s := c.open(t, agent.SessionOptions{ChatID: "sb", Mode: agent.ModeDefault})
	h := &recHandler{decide: func(context.Context, agent.PermissionRequest) agent.PermissionResponse {
		return agent.PermissionResponse{Allow: true}
	}}
	res, err := s.Turn(t.Context(), agent.Text("look around"), h)
	require.NoError(t, err)
	assert.Equal(t, "looked", res.Text)
	calls := api.Calls()
	require.Len(t, calls, 2)
	block, ok := calls[1].ToolResult("toolu_env")
	require.True(t, ok, "the model got the command's output")
	out := block.ResultText()
	assert.Contains(t, out, "no-database")
	assert.Contains(t, out, "ANTHROPIC_BASE_URL=", "the agent's own variables are there")
	assert.NotContains(t, out, "the-bot-token")
	assert.NotContains(t, out, "LEASHD_")
	assert.NotContains(t, out, "SQLite format 3")
	b, err := os.ReadFile(filepath.Join(c.dir, "made.txt"))
	require.NoError(t, err)
	assert.Equal(t, "made\n", string(b))
}

// A session closed in bubblewrap (idle shutdown, a restart) resumes in a
// new sandboxed process: its transcript lives in the agent's home, which
// the sandbox keeps.
func TestRealCLIResumesInBwrap(t *testing.T) {
	home, state := t.TempDir(), t.TempDir()
	w, err := bwrap.New(bwrap.Options{Program: testenv.Bwrap(t), Home: home, Hide: []string{state}, Network: true})
	require.NoError(t, err)
	api := fakeapi.New(t)
	c := &realCLI{api: api, home: home, dir: t.TempDir(), agent: claude.New(testenv.Claude(t),
		claude.WithEnv(api.Env(home)), claude.WithLogger(newTestLogger(t)), claude.WithSandbox(&sandbox.Host{Wrap: w}))}
	api.Reply(fakeapi.Text("first answer"), fakeapi.Text("second answer"))
	s := c.open(t, agent.SessionOptions{ChatID: "sb", Mode: agent.ModeDefault})
	res, err := s.Turn(t.Context(), agent.Text("remember the word kumquat"), &recHandler{})
	require.NoError(t, err)
	require.Equal(t, "first answer", res.Text)
	id := s.ID()
	require.NotEmpty(t, id)
	require.NoError(t, s.Close(t.Context()))

	s2 := c.open(t, agent.SessionOptions{ChatID: "sb", Mode: agent.ModeDefault, ResumeID: id})
	res, err = s2.Turn(t.Context(), agent.Text("which word?"), &recHandler{})
	require.NoError(t, err)
	assert.Equal(t, "second answer", res.Text)
	calls := api.Calls()
	require.Len(t, calls, 2)
	assert.True(t, calls[1].HasUserText("remember the word kumquat"), "the resumed session carries the first turn")
	assert.Equal(t, id, s2.ID())
}
