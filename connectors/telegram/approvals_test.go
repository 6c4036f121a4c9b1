package telegram_test

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/interactions"
)

// A program's yes/no approval is an approval card: the action in bold,
// its details beneath, Approve marked ✅ and Reject ❌; a rejection shows
// as Denied, and the caller is told it was not approved.
func TestYesNoApprovalIsAnApprovalCard(t *testing.T) {
	h := newHarness(t, setup{})
	it, err := h.eng.Ask(context.Background(), interactions.Interaction{ChatID: "telegram:42", Kind: interactions.KindQuestion,
		Approval: true, Header: "Approval", Question: "Deploy v1.2 to production\n\n3 services, 40 s downtime",
		Options: []interactions.Choice{{Label: "Approve"}, {Label: "Reject"}}}, 0)
	require.NoError(t, err)
	m := h.botMessage(me, "Deploy v1.2")
	assert.Contains(t, m.Text, "<b>Deploy v1.2 to production</b>\n3 services, 40 s downtime")
	assert.Equal(t, []string{"✅ Approve", "❌ Reject"}, m.Buttons())
	assert.Contains(t, m.Text, "type a reason to reject")
	assert.NotContains(t, m.Text, "in your own words")
	h.answer(h.tap(me, me, m.ID, "❌ Reject"))
	m = h.waitMessage(me, m.ID, "the rejection shown", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "🚫 <b>Denied</b>")
	assert.NotContains(t, m.Text, "✅")
	_, res, resolved, err := h.eng.Outcome(context.Background(), it.ID)
	require.NoError(t, err)
	require.True(t, resolved)
	assert.Equal(t, "Reject", res.Answer)
}

var preRe = regexp.MustCompile(`(?s)<pre>(.*?)</pre>`)

// A Bash command far over one message is shown whole, over several
// messages, the card saying so, with the buttons under its end.
func TestLongCommandShownWhole(t *testing.T) {
	var b strings.Builder
	for i := range 900 {
		b.WriteString("echo step-" + strings.Repeat("x", i%7) + " && test -f <in> \n")
	}
	b.WriteString("the-end")
	cmd := b.String() // about 26k characters
	h := newHarness(t, setup{turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
		ask(ctx, th, "Bash", map[string]any{"command": cmd})
		return agent.Result{}, nil
	}})
	h.fake.Text(me, me, "run it")
	first := h.botMessage(me, "The agent wants to run a command")
	assert.Contains(t, first.Text, "is shown below, continued over the next messages")
	last := h.botMessage(me, "the-end")
	assert.Equal(t, []string{"Allow", "Allow for this session", "Deny"}, last.Buttons())
	var shown strings.Builder
	for _, m := range h.fake.BotMessages(me) {
		if m.ID < first.ID || m.ID > last.ID {
			continue
		}
		for _, p := range preRe.FindAllStringSubmatch(m.Text, -1) {
			shown.WriteString(html.UnescapeString(p[1]))
		}
	}
	assert.Equal(t, strings.ReplaceAll(cmd, "\n", ""), strings.ReplaceAll(shown.String(), "\n", ""), "every character of the command")
	assert.Greater(t, last.ID-first.ID, 4, "over several messages")
}

// A plan review says what each decision does, and marks the recommended
// one.
func TestPlanReviewSaysWhatEachDecisionDoes(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn(agent.ToolExitPlanMode, func() any { return map[string]any{"plan": "1. do it"} })})
	h.fake.Text(me, me, "plan it")
	m := h.botMessage(me, "Tap a decision")
	assert.Equal(t, "Approve, fresh session (recommended)", m.Buttons()[0])
	assert.Contains(t, m.Text, "• <b>Approve, fresh session (recommended)</b> — Starts afresh with only the plan; edits files without asking")
	assert.Contains(t, m.Text, "• <b>Adjust</b> — Not yet: type what should change and it keeps planning")
}
