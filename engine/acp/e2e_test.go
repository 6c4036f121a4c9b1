package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine/claude/fakeapi"
)

// The real claude-agent-acp asks for a Bash command that writes: the
// person sees the agent's own options by their names, taps "Yes" and the
// command runs; the next one is rejected with a typed reason, which the
// model reads as a follow-up prompt.
func TestRealACPBashAllowedThenRejectedWithReason(t *testing.T) {
	s := newStack(t)
	s.api.Reply(
		fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_bash1", Name: "Bash", Input: map[string]any{"command": "touch made-by-agent.txt", "description": "Create a file"}}}},
		fakeapi.Text("Created the file."),
	)
	s.say("make a file")
	m := s.botMessage("touch made-by-agent.txt")
	assert.Contains(t, m.Text, "Tool approval")
	assert.Contains(t, m.Buttons(), "Yes")
	assert.Contains(t, m.Buttons(), "No")
	s.tap(m, "Yes")
	out, isErr := s.toolResult("toolu_bash1")
	assert.False(t, isErr, "the command ran: %s", out)
	s.botMessage("Created the file.")
	s.botMessage("Done")
	_, err := os.Stat(filepath.Join(s.dir, "made-by-agent.txt"))
	require.NoError(t, err, "the agent ran the command in LEASHD_WORKDIR")

	s.api.Reply(
		fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_bash2", Name: "Bash", Input: map[string]any{"command": "rm made-by-agent.txt"}}}},
		fakeapi.Text("Understood, I left it."),
		fakeapi.Text("I will keep the file then."),
	)
	s.say("remove it")
	m = s.botMessage("rm made-by-agent.txt")
	s.say("keep it, we need it for the demo")
	out, isErr = s.toolResult("toolu_bash2")
	assert.True(t, isErr, "the rejection reached the model as an error: %s", out)
	c := s.userTextCall("keep it, we need it for the demo")
	assert.True(t, c.HasUserText("rejected"), "the follow-up says it was a rejection: %q", c.UserTexts())
	s.botMessage("I will keep the file then.")
	m = s.waitMessage(m.ID, "the approval to show its outcome", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "keep it, we need it for the demo")
	_, err = os.Stat(filepath.Join(s.dir, "made-by-agent.txt"))
	require.NoError(t, err, "the rejected command did not run")
	assert.Zero(t, s.api.Unscripted(), "calls: %d", len(s.api.Calls()))
	_ = strings.Contains
}
