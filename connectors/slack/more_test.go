package slack_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/slack/slackfake"
)

func TestQuestionAnsweredByTypedTextInThread(t *testing.T) {
	e := start(t, envOpt{})
	root := e.mention("C1", allowedUser, "", "ask")
	q := e.waitButtons("C1", "Which database?")
	assert.Contains(t, slackfake.Texts(q.Blocks), "Reply in this thread to answer in your own words.")
	// A stranger's reply in the thread answers nothing.
	e.push(slackfake.MessageEvent("C1", "channel", stranger, e.nextTS(), root, "MongoDB!"))
	e.waitEphemeral(stranger, "not allowed to use this bot")
	// The approver (not an allowed user) may not answer a question.
	e.push(slackfake.MessageEvent("C1", "channel", approverUser, e.nextTS(), root, "Oracle"))
	e.waitEphemeral(approverUser, "not prompt the agent")
	e.push(slackfake.MessageEvent("C1", "channel", allowedUser, e.nextTS(), root, "DuckDB, embedded"))
	r := e.agent.WaitResponses(t, 1)
	assert.Equal(t, map[string]string{"Which database?": "DuckDB, embedded"}, answers(t, r[0]))
	e.waitText("C1", "✅ *Answer:* DuckDB, embedded — <@U1>")
	assert.Equal(t, []string{"ask"}, e.agent.Prompts())
}

func TestTapsRacingTheTimeout(t *testing.T) {
	// Each round a tap races the question's deadline: exactly one outcome
	// wins, the agent gets exactly that, and the message shows the same.
	won := map[bool]int{}
	for round := range 8 {
		e := start(t, envOpt{timeout: 150 * time.Millisecond})
		e.dm(allowedUser, "ask")
		q := e.waitText("D1", "Which database?")                  // maybe already expired
		time.Sleep(time.Duration(95+12*round) * time.Millisecond) // around the deadline
		e.tap(allowedUser, q, "SQLite")
		r := e.agent.WaitResponses(t, 1)
		upd := e.waitMsg("D1", "the outcome", func(m slackfake.Message) bool { return m.TS == q.TS && len(slackfake.Buttons(m.Blocks)) == 0 })
		shown := slackfake.Texts(upd.Blocks)
		won[r[0].Allow]++
		if r[0].Allow {
			assert.Equal(t, "SQLite", answers(t, r[0])["Which database?"])
			assert.Contains(t, shown, "✅ *Answer:* SQLite")
		} else {
			assert.Contains(t, r[0].Message, "No answer came")
			assert.Contains(t, shown, "⌛ *Expired*")
			e.waitEphemeral(allowedUser, "This question has expired.")
		}
		e.settle()
		assert.Len(t, e.agent.Responses(), 1)
	}
	t.Logf("tap won %d rounds, the timeout %d", won[true], won[false])
}

func TestShutdownKeepsButtonsWithNotice(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(allowedUser, "tool")
	q := e.waitButtons("D1", "Tool approval")
	e.settle() // shown (Present returned), and nobody answers
	e.cancel() // leashd stops while the approval is pending
	upd := e.waitMsg("D1", "the interrupted notice", func(m slackfake.Message) bool { return m.TS == q.TS && m.Edits > 0 })
	assert.Contains(t, slackfake.Texts(upd.Blocks), "⚠️ leashd restarted — tap again to send this answer to the agent")
	assert.Len(t, slackfake.Buttons(upd.Blocks), 3, "the buttons still work after the restart")
}

func TestConcurrentChatsKeepTheirOwnThreads(t *testing.T) {
	e := start(t, envOpt{})
	roots := make([]string, 5)
	var wg sync.WaitGroup
	for i := range roots {
		roots[i] = e.mention("C"+itoa(i+1), allowedUser, "", "ask")
	}
	for i, root := range roots {
		ch := "C" + itoa(i+1)
		q := e.waitButtons(ch, "Which database?")
		require.Equal(t, root, q.ThreadTS)
		wg.Go(func() { e.tap(allowedUser, q, []string{"Postgres", "SQLite"}[i%2]) })
	}
	wg.Wait()
	rs := e.agent.WaitResponses(t, 5)
	got := map[string]int{}
	for _, r := range rs {
		got[answers(t, r)["Which database?"]]++
	}
	assert.Equal(t, map[string]int{"Postgres": 3, "SQLite": 2}, got)
	for i := range roots {
		ch := "C" + itoa(i+1)
		want := []string{"Postgres", "SQLite"}[i%2]
		e.waitText(ch, "✅ *Answer:* "+want)
		for _, m := range e.fake.Messages(ch) {
			assert.Equal(t, roots[i], m.ThreadTS, "everything for the session stays in its thread")
			assert.False(t, strings.Contains(slackfake.Texts(m.Blocks), "✅ *Answer:* "+[]string{"SQLite", "Postgres"}[i%2]))
		}
	}
}

func TestCleanApprovalAndDenyTap(t *testing.T) {
	e := start(t, envOpt{})
	root := e.mention("C1", allowedUser, "", "plan")
	btn := e.waitButtons("C1", "Plan review")
	e.tap(approverUser, btn, "Approve, fresh session (recommended)")
	r := e.agent.WaitResponses(t, 1)
	assert.False(t, r[0].Allow, "the old session is stopped, not told to go on")
	assert.True(t, r[0].Interrupt)
	e.waitText("C1", "✅ *Approve, fresh session (recommended)* — <@U2>")
	p := e.waitPrompt(t, "Add **tests**") // the approved plan starts a fresh session
	assert.NotEqual(t, "plan", p)

	e.push(slackfake.MessageEvent("C1", "channel", allowedUser, e.nextTS(), root, "tool"))
	q := e.waitButtons("C1", "Tool approval")
	e.tap(approverUser, q, "Deny")
	r = e.agent.WaitResponses(t, 2)
	assert.False(t, r[1].Allow)
	assert.NotEmpty(t, r[1].Message, "the agent is told why")
	e.waitText("C1", "❌ *Deny* — <@U2>")
}
