package discord_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/discord/discordfake"
)

// A question in a DM: its buttons, the options' descriptions beside
// them; a tap answers it, the message then shows the answer and who gave
// it (no buttons), and the agent gets the option.
func TestQuestionSingleSelect(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(dev, "ask")
	q := e.waitComponents(dmChan, "Which database?")
	assert.Contains(t, q.Content, "**DB**")
	assert.Contains(t, q.Content, "**Postgres** — a server")
	assert.Equal(t, "Postgres | SQLite", q.Labels())

	e.click(dev, q, "SQLite")
	r := e.agent.WaitResponses(t, 1)[0]
	assert.True(t, r.Allow)
	assert.Contains(t, string(r.UpdatedInput), `"Which database?":"SQLite"`)
	done := e.waitMsg(dmChan, "the answer on the question", func(m discordfake.Message) bool { return m.ID == q.ID && !m.HasComponents() })
	assert.Contains(t, done.Content, "✅ **Answer:** SQLite — <@"+dev+">")
	e.waitText(dmChan, "asked:")
}

// Typed text answers the pending question in the person's own words.
func TestQuestionTypedAnswer(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(dev, "ask")
	q := e.waitComponents(dmChan, "Which database?")
	e.dm(dev, "DuckDB, please")
	r := e.agent.WaitResponses(t, 1)[0]
	assert.Contains(t, string(r.UpdatedInput), "DuckDB, please")
	done := e.waitMsg(dmChan, "the typed answer", func(m discordfake.Message) bool { return m.ID == q.ID && !m.HasComponents() })
	assert.Contains(t, done.Content, "DuckDB, please")
	assert.Equal(t, []string{"ask"}, e.agent.Prompts(), "the answer is no prompt")
}

// A multi-select question is a select menu with every option; picking
// two answers with both, in option order.
func TestQuestionMultiSelect(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(dev, "multi")
	q := e.waitComponents(dmChan, "Which features?")
	menus := discordfake.Menus(q.Components)
	require.Len(t, menus, 1)
	assert.Equal(t, 3, menus[0].MaxValues)
	assert.Equal(t, "Auth | Search | Billing", q.Labels())
	assert.Empty(t, discordfake.Buttons(q.Components))

	e.pick(dev, q, "Billing", "Auth")
	r := e.agent.WaitResponses(t, 1)[0]
	assert.Contains(t, string(r.UpdatedInput), "Auth, Billing")
	done := e.waitMsg(dmChan, "the answer", func(m discordfake.Message) bool { return m.ID == q.ID && !m.HasComponents() })
	assert.Contains(t, done.Content, "✅ **Answer:** Auth, Billing — <@"+dev+">")
}

// A plan review in a server: the mention starts a thread where the plan
// and its decisions are posted; a teammate who is no approver is told so
// privately and nothing changes; the approver's tap lets the agent go on.
func TestPlanReviewInAThread(t *testing.T) {
	e := start(t, envOpt{approvers: []string{lead}})
	th := e.mention(dev, "plan")
	e.waitText(th, "Add **tests**")
	d := e.waitComponents(th, "Plan review")
	assert.Contains(t, d.Content, "Only approvers can decide")
	assert.Equal(t, "Approve, fresh session (recommended) | Approve, auto-accept edits | Approve, review edits | Adjust", d.Labels())

	e.click(dev, d, "Approve, auto-accept edits")
	e.waitEphemeral(dev, "only approvers")
	assert.True(t, e.current(d).HasComponents(), "a refused tap leaves the plan waiting")

	e.click(lead, d, "Approve, auto-accept edits")
	r := e.agent.WaitResponses(t, 1)[0]
	assert.True(t, r.Allow)
	done := e.waitMsg(th, "the decision", func(m discordfake.Message) bool { return m.ID == d.ID && !m.HasComponents() })
	assert.Contains(t, done.Content, "✅ **Approve, auto-accept edits** — <@"+lead+">")
	e.waitText(th, "plan allow=true")
	assert.Equal(t, []string{"plan"}, e.agent.Prompts())
}

// A plan longer than a message is posted whole over several, each within
// Discord's 2,000 characters (the fake refuses longer ones).
func TestLongPlanIsSplit(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(dev, "plan long")
	e.waitComponents(dmChan, "Plan review")
	var all strings.Builder
	n := 0
	for _, m := range e.fake.Messages(dmChan) {
		if strings.Contains(m.Content, "Step") {
			n++
			all.WriteString(m.Content)
		}
	}
	assert.Greater(t, n, 3)
	assert.Contains(t, all.String(), "Step 0:")
	assert.Contains(t, all.String(), "A long plan")
}

// A Bash approval: the command in a code block, Allow lets it run; the
// next one is denied by typing a reason, which the agent reads and the
// message shows.
func TestBashApprovalAllowAndDenyWithReason(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(dev, "tool")
	a := e.waitComponents(dmChan, "The agent wants to run a command")
	assert.Contains(t, a.Content, "```\nrm -rf build && make\n```")
	assert.Equal(t, "Allow | Allow for this session | Deny", a.Labels())
	e.click(dev, a, "Allow")
	assert.True(t, e.agent.WaitResponses(t, 1)[0].Allow)
	done := e.waitMsg(dmChan, "allowed", func(m discordfake.Message) bool { return m.ID == a.ID && !m.HasComponents() })
	assert.Contains(t, done.Content, "✅ **Allow** — <@"+dev+">")
	e.waitText(dmChan, "tool allow=true")

	e.dm(dev, "tool")
	b := e.waitMsg(dmChan, "the second approval", func(m discordfake.Message) bool { return m.HasComponents() && m.ID != a.ID })
	e.dm(dev, "not the build dir")
	r := e.agent.WaitResponses(t, 2)[1]
	assert.False(t, r.Allow)
	assert.Contains(t, r.Message, "not the build dir")
	denied := e.waitMsg(dmChan, "denied", func(m discordfake.Message) bool { return m.ID == b.ID && !m.HasComponents() })
	assert.Contains(t, denied.Content, "❌ **Deny** — <@"+dev+">: not the build dir")
	assert.Equal(t, []string{"tool", "tool"}, e.agent.Prompts(), "the reason is no prompt")
}

// A file change's approval shows its diff in a block Discord colours as
// one, removed lines red and added ones green; Allow still decides it.
func TestEditApprovalShowsTheDiff(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(dev, "edit")
	a := e.waitComponents(dmChan, "main.go")
	assert.Contains(t, a.Content, "```diff\n")
	assert.Contains(t, a.Content, "-return 1\n+return 2")
	e.click(dev, a, "Allow")
	assert.True(t, e.agent.WaitResponses(t, 1)[0].Allow)
	e.waitText(dmChan, "edit allow=true")
}

// Agent text streams into a message edited in place and continued in new
// ones before 2,000 characters; the turn ends with its summary line.
func TestStreamAndSummary(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(dev, "stream")
	e.waitText(dmChan, "Done")
	var text strings.Builder
	for _, m := range e.fake.Messages(dmChan) {
		text.WriteString(m.Content)
	}
	for _, want := range []string{"line 0:", "line 29:"} {
		assert.Contains(t, text.String(), want)
	}
	assert.Greater(t, len(e.fake.Messages(dmChan)), 2, "over 2,000 characters take several messages")
}

// Adjust asks for what should change: the message says so (buttons
// kept), and the text typed next is the feedback the agent reads, not a
// prompt.
func TestPlanAdjustWithTypedFeedback(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(dev, "plan")
	d := e.waitComponents(dmChan, "Plan review")
	e.click(dev, d, "Adjust")
	e.waitMsg(dmChan, "the adjust prompt", func(m discordfake.Message) bool {
		return m.ID == d.ID && strings.Contains(m.Content, "✏️ **Adjust** chosen: reply here with what should change.") && m.HasComponents()
	})
	e.dm(dev, "split step 2 in two")
	r := e.agent.WaitResponses(t, 1)[0]
	assert.False(t, r.Allow)
	assert.Contains(t, r.Message, "split step 2 in two")
	done := e.waitMsg(dmChan, "the adjustment", func(m discordfake.Message) bool { return m.ID == d.ID && !m.HasComponents() })
	assert.Contains(t, done.Content, "split step 2 in two")
	assert.Equal(t, []string{"plan"}, e.agent.Prompts())
}

// A command too long to sit with the buttons is shown whole in messages
// before them, each within 2,000 characters; the buttons message says so.
func TestLongCommandShownWhole(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(dev, "longbash")
	a := e.waitComponents(dmChan, "The agent wants to run a command")
	assert.Contains(t, a.Content, "is shown in the messages above")
	var shown strings.Builder
	for _, m := range e.fake.Messages(dmChan) {
		if strings.HasPrefix(m.Content, "```") {
			shown.WriteString(strings.TrimSuffix(strings.TrimPrefix(m.Content, "```\n"), "\n```"))
		}
	}
	assert.Contains(t, shown.String(), "echo END")
	assert.Equal(t, len(long), len(strings.ReplaceAll(shown.String(), "\n", "")), "nothing of it is cut")
	e.click(dev, a, "Deny")
	assert.False(t, e.agent.WaitResponses(t, 1)[0].Allow)
}
