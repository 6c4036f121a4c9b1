package slack_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/slack/slackfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// memRecovery is what the persistence layer would keep across a restart.
type memRecovery struct {
	engine.Store // sessions: in memory
	mu           sync.Mutex
	left         []engine.Interrupted
	done         map[string]interactions.Resolution
}

func (m *memRecovery) Interrupt(context.Context) ([]engine.Interrupted, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.left, nil
}

func (m *memRecovery) Recovered(_ context.Context, id string, res interactions.Resolution) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.done[id]; ok {
		return false, nil
	}
	m.done[id] = res
	return true, nil
}

// A question and a tool approval left pending by a crash: their old
// buttons still answer after the restart, once.
func TestButtonsWorkAfterRestart(t *testing.T) {
	qBlocks := json.RawMessage(`[{"type":"actions","elements":[{"type":"button","action_id":"leashd:qOld:1","value":"qOld:1","text":{"type":"plain_text","text":"SQLite"}}]}]`)
	tBlocks := json.RawMessage(`[{"type":"actions","elements":[{"type":"button","action_id":"leashd:tOld:t0","value":"tOld:t0","text":{"type":"plain_text","text":"Allow"}}]}]`)
	var qMsg, tMsg slackfake.Message
	rec := &memRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{}}
	e := start(t, envOpt{recovery: rec, before: func(fake *slackfake.Server) {
		// What the last run posted, and what the store kept of it.
		qMsg = fake.Seed(slackfake.Message{Channel: "D1", Text: "Question", Blocks: qBlocks})
		tMsg = fake.Seed(slackfake.Message{Channel: "C1", ThreadTS: "1700000000.000001", Text: "Tool", Blocks: tBlocks})
		rec.left = []engine.Interrupted{
			{Interaction: interactions.Interaction{ID: "qOld", ChatID: "slack:D1", Kind: interactions.KindQuestion, Question: "Which database?",
				Options: []interactions.Choice{{Label: "Postgres"}, {Label: "SQLite"}}}, Ref: "D1:" + qMsg.TS},
			{Interaction: interactions.Interaction{ID: "tOld", ChatID: "slack:C1:1700000000.000001", Kind: interactions.KindToolApproval, ToolName: "Bash",
				ToolSummary: "make deploy", Options: interactions.ToolOptions}, Ref: "C1:" + tMsg.TS},
		}
	}})
	// At start-up the messages say what happened; the buttons stay.
	upd := e.waitMsg("D1", "the interrupted notice", func(m slackfake.Message) bool { return m.TS == qMsg.TS && m.Edits > 0 })
	assert.Contains(t, slackfake.Texts(upd.Blocks), "leashd restarted")
	assert.NotEmpty(t, slackfake.Buttons(upd.Blocks))

	e.tap(allowedUser, qMsg, "SQLite")
	p := e.waitPrompt(t, "SQLite")
	assert.True(t, strings.HasPrefix(p, agent.RecoveredPromptPrefix))
	e.waitText("D1", "✅ *Answer:* SQLite — <@U1>")
	e.tap(allowedUser, qMsg, "SQLite") // a second tap: already answered
	e.waitEphemeral(allowedUser, "This question has expired.")

	e.tap(allowedUser, tMsg, "Allow") // not an approver in a channel
	e.waitEphemeral(allowedUser, "only approvers")
	e.tap(approverUser, tMsg, "Allow")
	e.waitPrompt(t, "The user allowed it")
	e.waitText("C1", "✅ *Allow* — <@U2>")
	require.Len(t, e.agent.Prompts(), 2)
}

func (e *env) waitPrompt(t *testing.T, substr string) string {
	t.Helper()
	var got string
	require.Eventually(t, func() bool {
		for _, p := range e.agent.Prompts() {
			if strings.Contains(p, substr) {
				got = p
				return true
			}
		}
		return false
	}, wait, 10_000_000, "no prompt with %q; prompts: %q", substr, e.agent.Prompts())
	return got
}

func TestSocketModeReconnects(t *testing.T) {
	e := start(t, envOpt{})
	e.fake.Disconnect()
	require.True(t, e.fake.WaitFor(wait, func() bool { return e.fake.Accepted() >= 2 }), "no reconnection")
	require.Eventually(t, func() bool { return e.conn.Ready() == nil }, wait, 10_000_000)
	e.dm(allowedUser, "after")
	e.waitText("D1", "echo: after")
}

// A multi-select question left pending by a crash, with one option ticked
// before it: after the restart a ☐ tap toggles (it never answers the whole
// question), quick taps all count, a tap from another channel is refused,
// and Done sends every checked option to the agent.
func TestMultiSelectWorksAfterRestart(t *testing.T) {
	blocks := json.RawMessage(`[{"type":"actions","elements":[
		{"type":"button","action_id":"leashd:ms1:0","value":"ms1:0","text":{"type":"plain_text","text":"✓ lint"}},
		{"type":"button","action_id":"leashd:ms1:1","value":"ms1:1","text":{"type":"plain_text","text":"☐ test"}},
		{"type":"button","action_id":"leashd:ms1:2","value":"ms1:2","text":{"type":"plain_text","text":"☐ vet"}},
		{"type":"button","action_id":"leashd:ms1:done","value":"ms1:done","text":{"type":"plain_text","text":"Done"}}]}]`)
	var msg slackfake.Message
	rec := &memRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{}}
	e := start(t, envOpt{recovery: rec, before: func(fake *slackfake.Server) {
		msg = fake.Seed(slackfake.Message{Channel: "D1", Text: "Which checks?", Blocks: blocks})
		rec.left = []engine.Interrupted{{Interaction: interactions.Interaction{ID: "ms1", ChatID: "slack:D1", Kind: interactions.KindQuestion,
			Question: "Which checks?", MultiSelect: true, Options: []interactions.Choice{{Label: "lint"}, {Label: "test"}, {Label: "vet"}}},
			Ref: "D1:" + msg.TS, Selected: []string{"lint"}}}
	}})
	upd := e.waitMsg("D1", "the interrupted notice", func(m slackfake.Message) bool { return m.TS == msg.TS && m.Edits > 0 })
	assert.Contains(t, slackfake.Texts(upd.Blocks), "leashd restarted")

	elsewhere := msg
	elsewhere.Channel = "C9"
	e.tapRaw(allowedUser, elsewhere, "leashd:ms1:done", "ms1:done")
	e.waitEphemeral(allowedUser, "This question has expired.")

	e.tap(allowedUser, msg, "☐ test")
	e.tap(allowedUser, msg, "☐ vet")
	e.waitMsg("D1", "all three ticked", func(m slackfake.Message) bool {
		if m.TS != msg.TS {
			return false
		}
		var labels []string
		for _, b := range slackfake.Buttons(m.Blocks) {
			labels = append(labels, b.Text)
		}
		return slices.Equal(labels, []string{"✓ lint", "✓ test", "✓ vet", "Done"})
	})
	assert.Empty(t, e.agent.Prompts(), "a toggle answers nothing")
	e.tap(allowedUser, msg, "Done")
	p := e.waitPrompt(t, `The user answered: "lint, test, vet"`)
	assert.True(t, strings.HasPrefix(p, agent.RecoveredPromptPrefix))
	e.waitText("D1", "lint, test, vet")
	require.Len(t, e.agent.Prompts(), 1)
	rec.mu.Lock()
	assert.Equal(t, "lint, test, vet", rec.done["ms1"].Answer, "recorded once")
	rec.mu.Unlock()
}

// A tool approval with a quorum of 2, approved by one approver before a
// crash: at start-up its message says leashd restarted and still shows
// "⏳ 1 of 2 approvals — <@U3>", with the buttons. The approval counts:
// the second approver's tap allows it.
func TestQuorumCountSurvivesRestart(t *testing.T) {
	tBlocks := json.RawMessage(`[{"type":"actions","elements":[{"type":"button","action_id":"leashd:tQ:t0","value":"tQ:t0","text":{"type":"plain_text","text":"Allow"}}]}]`)
	var tMsg slackfake.Message
	rec := &memRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{}}
	e := start(t, envOpt{recovery: rec, approvers: []string{approverUser, "U3"}, before: func(fake *slackfake.Server) {
		tMsg = fake.Seed(slackfake.Message{Channel: "C1", ThreadTS: "1700000000.000001", Text: "Tool", Blocks: tBlocks})
		rec.left = []engine.Interrupted{{Interaction: interactions.Interaction{ID: "tQ", ChatID: "slack:C1:1700000000.000001",
			Kind: interactions.KindToolApproval, ToolName: "Bash", ToolSummary: "make deploy", Options: interactions.ToolOptions, Quorum: 2},
			Ref: "C1:" + tMsg.TS, Approvals: []interactions.Approver{{By: "U3", Decision: interactions.DecisionAllow}}}}
	}})
	upd := e.waitMsg("C1", "the interrupted notice", func(m slackfake.Message) bool { return m.TS == tMsg.TS && m.Edits > 0 })
	texts := slackfake.Texts(upd.Blocks)
	assert.Contains(t, texts, "leashd restarted")
	assert.Contains(t, texts, "⏳ *1 of 2 approvals — <@U3>*", "the count stays on the interrupted message")
	assert.NotEmpty(t, slackfake.Buttons(upd.Blocks))

	e.tap(approverUser, tMsg, "Allow")
	e.waitPrompt(t, "The user allowed it")
	e.waitText("C1", "<@U3>, <@U2>")
}
