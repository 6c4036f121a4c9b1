package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/approval"
	"github.com/leashd/leashd/interactions"
)

// A program's tool approval (POST /api/interactions kind tool_approval)
// meets the policy an agent's does: a deny rule denies it at once, the
// caller's outcome names the rule, the chat is told, and nobody is asked.
func TestProgramToolApprovalDeniedByPolicy(t *testing.T) {
	r := startPolicy(t, testPolicy, nil)
	it, err := r.e.Ask(context.Background(), interactions.Interaction{ChatID: "group:1", Kind: interactions.KindToolApproval,
		ToolName: "Bash", ToolInput: mustJSON(map[string]string{"command": "git push --force"})}, 0)
	require.NoError(t, err)
	require.NotEmpty(t, it.ID)
	_, res, resolved, err := r.e.Outcome(waitCtx(t), it.ID)
	require.NoError(t, err)
	require.True(t, resolved)
	assert.Equal(t, interactions.StatusRejected, res.Status)
	assert.Equal(t, interactions.DecisionDeny, res.Decision)
	assert.Equal(t, "denied by policy rule 1 (line 2): Pushing is done by CI.", res.Text)
	assert.Equal(t, approval.PolicyBy, res.By)
	r.conn.WaitSaid(t, "Denied by policy rule 1 (line 2): Pushing is done by CI. — Bash: git push --force")
	r.conn.Lock()
	assert.Empty(t, r.conn.Shown, "nobody is asked")
	r.conn.Unlock()
	recs := r.audit(t)
	require.Len(t, recs, 1)
	assert.Equal(t, approval.PolicyBy, recs[0].Resolution.By)
}

// An allow rule allows a program's tool approval at once; a quorum rule
// puts it to as many approvers in a group chat, and denies it at once in
// a chat of one person.
func TestProgramToolApprovalAllowAndQuorumRules(t *testing.T) {
	r := startPolicy(t, testPolicy, nil)
	ask := func(chat, tool string, in map[string]string) interactions.Interaction {
		t.Helper()
		it, err := r.e.Ask(context.Background(), interactions.Interaction{ChatID: chat, Kind: interactions.KindToolApproval,
			ToolName: tool, ToolInput: mustJSON(in)}, 0)
		require.NoError(t, err)
		return it
	}
	it := ask("group:1", "Bash", map[string]string{"command": "npm test"})
	_, res, resolved, err := r.e.Outcome(waitCtx(t), it.ID)
	require.NoError(t, err)
	require.True(t, resolved)
	assert.Equal(t, interactions.StatusAnswered, res.Status)
	assert.Equal(t, "allowed by policy rule 2 (line 6)", res.Text)

	it = ask("web:1", "Write", map[string]string{"file_path": "/repo/deploy/app.yaml"})
	_, res, _, err = r.e.Outcome(waitCtx(t), it.ID)
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusRejected, res.Status)
	assert.Contains(t, res.Text, "it needs 2 approvers and this chat has one person")

	it = ask("group:1", "Write", map[string]string{"file_path": "/repo/deploy/app.yaml"})
	shown := r.conn.WaitShown(t, 1)
	assert.Equal(t, it.ID, shown.ID)
	assert.Equal(t, 2, shown.Quorum)
	out, err := r.coord.Reply(it.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Counted, out, "one approval is not enough")
}

// waitCtx bounds a wait for an outcome: one that never comes fails the
// test instead of hanging it.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A program's approval and plan review in a group chat get the chat's
// quorum: an approval is counted, and the approval's second option
// decides at once; in a one-person chat one answer is enough.
func TestProgramApprovalAndPlanReviewGetTheQuorum(t *testing.T) {
	r := startPolicy(t, testPolicy, nil, func(_ *engine.Deps, c *engine.Config) { c.ApprovalQuorum = 2 })
	approve := []interactions.Choice{{Label: "Approve"}, {Label: "Reject"}}
	it, err := r.e.Ask(context.Background(), interactions.Interaction{ChatID: "group:1", Kind: interactions.KindQuestion,
		Question: "Deploy?", Options: approve, Approval: true}, 0)
	require.NoError(t, err)
	shown := r.conn.WaitShown(t, 1)
	assert.Equal(t, 2, shown.Quorum)
	out, err := r.coord.Reply(it.ID, interactions.Reply{By: "u1", Answers: []string{"Approve"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Counted, out)
	out, err = r.coord.Reply(it.ID, interactions.Reply{By: "u2", Answers: []string{"Reject"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out, "a rejection decides at once")
	_, res, resolved, err := r.e.Outcome(waitCtx(t), it.ID)
	require.NoError(t, err)
	require.True(t, resolved)
	assert.Equal(t, "Reject", res.Answer)

	it, err = r.e.Ask(context.Background(), interactions.Interaction{ChatID: "group:1", Kind: interactions.KindPlanReview, Plan: "# Plan"}, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, r.conn.WaitShown(t, 2).Quorum)
	out, err = r.coord.Reply(it.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionEdit}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Counted, out)

	it, err = r.e.Ask(context.Background(), interactions.Interaction{ChatID: "web:1", Kind: interactions.KindQuestion,
		Question: "Deploy?", Options: approve, Approval: true}, 0)
	require.NoError(t, err)
	assert.Zero(t, r.conn.WaitShown(t, 3).Quorum)
	out, err = r.coord.Reply(it.ID, interactions.Reply{By: "u1", Answers: []string{"Approve"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
}
