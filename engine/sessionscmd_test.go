package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/enginetest/clocktest"
)

// saidAfter waits for the n-th thing said to the chat and returns it.
func saidAfter(t *testing.T, conn *enginetest.Conn, n int) string {
	t.Helper()
	var replies []string
	conn.WaitFor(t, "a reply", func() bool {
		replies = replies[:0]
		for _, e := range conn.Said {
			// A prompt sent as the last turn's worker winds down is
			// queued behind nothing: that notice is not a reply.
			if _, text := enginetest.Entry(e); !strings.HasPrefix(text, "The agent is busy; your message is queued") {
				replies = append(replies, text)
			}
		}
		return len(replies) > n
	})
	return replies[n]
}

// /sessions lists the chat's sessions with their first prompt and cost,
// /cost adds up the tokens and cost the agent reported, and /resume N
// makes the next prompt continue the chosen session.
func TestSessionsResumeAndCost(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 11, 27, 21, 40, 0, 0, time.UTC))
	ag := &enginetest.ScriptAgent{Turn: func(_ context.Context, _ *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		h.Text("ok: " + prompt)
		return agent.Result{Text: "ok", CostUSD: 0.25, InputTokens: 1500, OutputTokens: 20}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(d *engine.Deps, _ *engine.Config) { d.Clock = clock })
	turn := func(text string, n int) {
		send(t, e, "c1", text)
		conn.WaitFor(t, "turn "+text, func() bool { return len(conn.Summaries) == n })
	}
	send(t, e, "c1", "/sessions")
	assert.Equal(t, "No sessions in this chat yet: send a message to start one.", saidAfter(t, conn, 0))
	turn("fix the   login\nbug", 1)
	turn("and the tests", 2)
	send(t, e, "c1", "/clear")
	saidAfter(t, conn, 1)
	turn("write docs", 3)

	send(t, e, "c1", "/sessions")
	assert.Equal(t, "Sessions in this chat, most recent first:\n"+
		"1. 27 Nov 21:40 · \"write docs\" · $0.25 · 1 turn ← current\n"+
		"2. 27 Nov 21:40 · \"fix the login bug\" · $0.50 · 2 turns\n"+
		"/resume N goes back to one.", saidAfter(t, conn, 2))
	send(t, e, "c1", "/cost")
	assert.Equal(t, "This session: 1 turn · 1,500 tokens in, 20 out · $0.25\n"+
		"Today in this chat: 3 turns · 4,500 tokens in, 60 out · $0.75\nCosts are the agent's own estimates.", saidAfter(t, conn, 3))

	send(t, e, "c1", "/resume 3")
	assert.Equal(t, "Usage: /resume N, where N is a session's number from /sessions (1 to 2).", saidAfter(t, conn, 4))
	send(t, e, "c1", "/resume 2")
	assert.Equal(t, "Back to session 2 (\"fix the login bug\", started 27 Nov 21:40): your next message continues it.", saidAfter(t, conn, 5))
	turn("go on", 4)
	opened := ag.Opened()
	require.Len(t, opened, 3)
	assert.Equal(t, "sess-1", opened[2].ResumeID, "the resumed session is the first one")
	send(t, e, "c1", "/sessions")
	assert.True(t, strings.HasPrefix(saidAfter(t, conn, 6), "Sessions in this chat, most recent first:\n1. 27 Nov 21:40 · \"fix the login bug\" · $0.75 · 3 turns ← current\n"))
}
