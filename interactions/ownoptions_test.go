package interactions_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// agentOptions is a tool approval with an agent's own options.
func agentOptions(chat string) interactions.Interaction {
	it := toolApproval(chat)
	it.Options = []interactions.Choice{
		{Label: "Allow once", Style: interactions.StyleApprove},
		{Label: "Always allow", Style: interactions.StyleApprove},
		{Label: "Reject", Style: interactions.StyleDeny},
	}
	return it
}

// A tool approval may carry the agent's own options: they are kept as
// given, a reply is one of their labels, an approve option answers (Answer:
// its label) and a deny option rejects; typed text rejects with the text
// as the reason.
func TestToolApprovalWithTheAgentsOwnOptions(t *testing.T) {
	c, p := newCoord(t)
	ch := request(t.Context(), c, agentOptions("c"))
	shown := p.Next(t)
	assert.True(t, shown.OwnOptions())
	assert.Equal(t, []string{"Allow once", "Always allow", "Reject"}, labels(shown.Options))
	assert.Equal(t, shown.Options, interactions.ToolOptionsFor(shown))
	_, err := c.Reply(shown.ID, interactions.Reply{Answers: []string{interactions.DecisionAllow}})
	require.ErrorIs(t, err, interactions.ErrInvalidReply, "leashd's own decisions are not options here")
	_, err = c.Reply(shown.ID, interactions.Reply{By: "u", Answers: []string{"Always allow"}})
	require.NoError(t, err)
	r := await(t, ch)
	assert.Equal(t, interactions.StatusAnswered, r.res.Status)
	assert.Equal(t, interactions.DecisionAllow, r.res.Decision)
	assert.Equal(t, "Always allow", r.res.Answer)

	ch = request(t.Context(), c, agentOptions("c"))
	shown = p.Next(t)
	_, err = c.Reply(shown.ID, interactions.Reply{By: "u", Answers: []string{"Reject"}})
	require.NoError(t, err)
	r = await(t, ch)
	assert.Equal(t, interactions.StatusRejected, r.res.Status)
	assert.Equal(t, interactions.DecisionDeny, r.res.Decision)
	assert.Equal(t, "Reject", r.res.Answer)
	assert.True(t, interactions.Refusal(shown, r.res))

	ch = request(t.Context(), c, agentOptions("c"))
	p.Next(t)
	_, _, err = c.ReplyText("c", interactions.Reply{By: "u", Text: "not now"})
	require.NoError(t, err)
	r = await(t, ch)
	assert.Equal(t, interactions.StatusRejected, r.res.Status)
	assert.Equal(t, interactions.DecisionDeny, r.res.Decision)
	assert.Empty(t, r.res.Answer)
	assert.Equal(t, "not now", r.res.Text)
}

// With a quorum of 2, an approve option of the agent's needs two approvers;
// one deny option decides at once.
func TestQuorumToolApprovalWithOwnOptions(t *testing.T) {
	c, p := newCoord(t)
	it := agentOptions("c")
	it.Quorum = 2
	ch := request(t.Context(), c, it)
	shown := p.Next(t)
	out, err := c.Reply(shown.ID, interactions.Reply{By: "a", Answers: []string{"Allow once"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Counted, out)
	notYet(t, ch)
	out, err = c.Reply(shown.ID, interactions.Reply{By: "b", Answers: []string{"Always allow"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
	r := await(t, ch)
	assert.Equal(t, "Always allow", r.res.Answer, "the last approver's option decides which")
	assert.Len(t, r.res.Approvals, 2)

	ch = request(t.Context(), c, it)
	shown = p.Next(t)
	out, err = c.Reply(shown.ID, interactions.Reply{By: "a", Answers: []string{"Reject"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out, "one deny decides")
	assert.Equal(t, interactions.StatusRejected, await(t, ch).res.Status)
}

// The agent's options must each approve or deny, with a label given once.
func TestToolApprovalOwnOptionsChecked(t *testing.T) {
	c, _ := newCoord(t)
	it := agentOptions("c")
	it.Options[1].Style = ""
	_, _, err := c.Request(t.Context(), it)
	require.ErrorIs(t, err, interactions.ErrInvalidReply)
	assert.Contains(t, err.Error(), `options[1].style of the tool approval is ""`)
	it = agentOptions("c")
	it.Options[1].Label = "Allow once"
	_, _, err = c.Request(t.Context(), it)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "given twice")
}

// A restored tool approval keeps the agent's options, and a standard one
// leashd's own.
func TestRestoredToolApprovalKeepsOwnOptions(t *testing.T) {
	c, _ := newCoord(t)
	it := agentOptions("c")
	it.ID = "restored1"
	ch := restore(t, t.Context(), c, interactions.Restored{Interaction: it, Ref: "m1"})
	got := waitPending(t, c, "restored1")
	assert.Equal(t, it.Options, got.Options)
	_, err := c.Reply("restored1", interactions.Reply{By: "u", Answers: []string{"Reject"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusRejected, (<-ch).Status)
}

// A program's yes/no approval gets approve and deny styles on its two
// options, whatever door it came through: connectors show it as an
// approval. A reason typed, or its second option, is a refusal.
func TestYesNoApprovalIsStyled(t *testing.T) {
	c, p := newCoord(t)
	it := question("c", "Deploy?\n\nversion 1.2 to production", "Go", "Stop")
	it.Approval = true
	ch := request(t.Context(), c, it)
	shown := p.Next(t)
	assert.Equal(t, interactions.StyleApprove, shown.Options[0].Style)
	assert.Equal(t, interactions.StyleDeny, shown.Options[1].Style)
	assert.True(t, shown.Styled())
	assert.Empty(t, it.Options[0].Style, "the caller's options are not changed")
	action, details := interactions.ActionAndDetails(shown.Question)
	assert.Equal(t, "Deploy?", action)
	assert.Equal(t, "version 1.2 to production", details)
	_, _, err := c.ReplyText("c", interactions.Reply{By: "u", Text: "not on Friday"})
	require.NoError(t, err)
	r := await(t, ch)
	assert.True(t, interactions.Refusal(shown, r.res))
	assert.False(t, interactions.Refusal(shown, interactions.Resolution{Status: interactions.StatusAnswered, Answer: "Go"}))
	assert.True(t, interactions.Refusal(shown, interactions.Resolution{Status: interactions.StatusAnswered, Answer: "Stop"}))

	plain := question("c", "Which?", "A", "B")
	ch = request(t.Context(), c, plain)
	shown = p.Next(t)
	assert.False(t, shown.Styled(), "a question's options stay plain")
	_, err = c.Reply(shown.ID, interactions.Reply{Answers: []string{"A"}})
	require.NoError(t, err)
	await(t, ch)
}
