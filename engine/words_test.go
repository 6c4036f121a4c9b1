package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/interactions"
)

// A turn's summary says what the agent did, not its tools' names:
// the agent's AskUserQuestion, Bash or MultiEdit mean nothing to the
// people in the chat. An MCP server's tool keeps the name its operator
// gave it.
func TestSummarySaysWhatTheAgentDidInPlainWords(t *testing.T) {
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		for _, name := range []string{"AskUserQuestion", "Bash", "Edit", "MultiEdit", "Edit", "Grep", "mcp__github__create_issue", "mcp__github__create_issue", "ExitPlanMode", "Write"} {
			h.ToolUse(name, mustJSON(map[string]string{}))
		}
		return agent.Result{Text: "ok", NumTurns: 2}, nil
	}}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "go")
	line := conn.WaitDone(t, 1).Line()
	assert.Equal(t, "Done · asked you, ran 1 command, made 3 edits, searched the files, mcp__github__create_issue×2, proposed a plan, wrote 1 file · 2 steps", line)
	for _, internal := range []string{"AskUserQuestion", "ExitPlanMode", "Bash", "MultiEdit"} {
		assert.NotContains(t, line, internal)
	}
}

// An agent waiting for a person's answer keeps its slot: with both slots
// held by unanswered requests, a third chat is told it queues because
// of them, and /status shows it. Answering one frees a slot.
func TestQueueAndStatusSayWhichSlotsWaitForAnAnswer(t *testing.T) {
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if prompt == "ask" {
			h.Permission(ctx, bashReq("git push"))
		}
		return agent.Result{Text: prompt}, nil
	}}
	e, conn, coord := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = 2 })
	send(t, e, "a", "ask")
	send(t, e, "b", "ask")
	conn.WaitShown(t, 2)
	send(t, e, "c", "hello")
	conn.WaitSaid(t, "c|All 2 agent slots are busy; you are number 1 in the queue. Your prompt runs as soon as one frees up. 2 chats are waiting for an answer, and each keeps its agent's slot until it comes: answering one frees a slot.")

	send(t, e, "a", "/status")
	conn.WaitSaid(t, "a|Agent: ")
	status := lastSaid(conn, "a|Agent: ")
	assert.Contains(t, status, "\nAgent slots: 2 of 2 in use; 2 chats are waiting for an answer, and each keeps its agent's slot until it comes; 1 chat in the queue\n")
	assert.Contains(t, status, "\nPending: 1\n  • a request to use a tool: git push")
	assert.NotContains(t, status, "tool_approval")

	pending := coord.Pending("a")
	require.Len(t, pending, 1)
	_, err := coord.Reply(pending[0].ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	conn.WaitFor(t, "c ran", func() bool { return len(conn.Summaries) == 2 })
}

// lastSaid is the last message said that begins with prefix ("chat|text").
func lastSaid(conn *enginetest.Conn, prefix string) string {
	conn.Lock()
	defer conn.Unlock()
	for i := len(conn.Said) - 1; i >= 0; i-- {
		if strings.HasPrefix(conn.Said[i], prefix) {
			return conn.Said[i]
		}
	}
	return ""
}
