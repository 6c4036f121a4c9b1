package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/interactions"
)

// acpOptions are an ACP agent's own permission options.
var acpOptions = []agent.PermissionOption{
	{ID: "once", Name: "Allow", Kind: "allow_once"},
	{ID: "always", Name: "Always allow", Kind: "allow_always"},
	{ID: "no", Name: "Reject", Kind: "reject_once"},
	{ID: "never", Name: "Never", Kind: "reject_always"},
}

func acpRequest(tool string, in map[string]string) agent.PermissionRequest {
	return agent.PermissionRequest{ToolName: tool, Input: mustJSON(in), Title: "Run the build", Options: acpOptions}
}

// An ACP agent's permission with its own options is a tool approval whose
// buttons are those options, allow-like ones styled Approve and reject-like
// ones Deny, and it takes the engine's quorum: one approval is counted, the
// second allows with the option tapped; in the next one, one deny decides.
func TestAgentOptionsAreAToolApprovalWithTheQuorum(t *testing.T) {
	req := acpRequest("Bash", map[string]string{"command": "make all"})
	r := startPolicy(t, "rules: []\n", []agent.PermissionRequest{req, req}, func(_ *engine.Deps, c *engine.Config) { c.ApprovalQuorum = 2 })
	send(t, r.e, "group:1", "go")
	it := r.conn.WaitShown(t, 1)
	assert.Equal(t, interactions.KindToolApproval, it.Kind)
	assert.Equal(t, "Bash", it.ToolName)
	assert.Equal(t, "make all", it.ToolSummary)
	assert.Contains(t, it.Reason, "Run the build", "the agent's title is shown")
	assert.Equal(t, 2, it.Quorum)
	assert.True(t, it.Decides())
	var got []interactions.Choice
	for _, o := range it.Options {
		got = append(got, interactions.Choice{Label: o.Label, Style: o.Style})
	}
	assert.Equal(t, []interactions.Choice{
		{Label: "Allow", Style: interactions.StyleApprove}, {Label: "Always allow", Style: interactions.StyleApprove},
		{Label: "Reject", Style: interactions.StyleDeny}, {Label: "Never", Style: interactions.StyleDeny},
	}, got)

	out, err := r.coord.Reply(it.ID, interactions.Reply{By: "u1", Answers: []string{"Always allow"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Counted, out, "one approval is not enough")
	_, err = r.coord.Reply(it.ID, interactions.Reply{By: "u1", Answers: []string{"Always allow"}})
	assert.ErrorIs(t, err, interactions.ErrAlreadyApproved)
	out, err = r.coord.Reply(it.ID, interactions.Reply{By: "u2", Answers: []string{"Always allow"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
	resp := r.next(t)
	assert.True(t, resp.Allow)
	assert.Equal(t, "always", resp.OptionID)

	it2 := r.conn.WaitShown(t, 2)
	out, err = r.coord.Reply(it2.ID, interactions.Reply{By: "u1", Answers: []string{"Never"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out, "one deny decides")
	resp = r.next(t)
	assert.False(t, resp.Allow)
	assert.Equal(t, "never", resp.OptionID)

	recs := r.audit(t)
	require.Len(t, recs, 2)
	assert.Equal(t, interactions.KindToolApproval, recs[0].Interaction.Kind)
	assert.Equal(t, interactions.StyleDeny, recs[0].Interaction.Options[3].Style, "the journal keeps the agent's options")
	assert.Equal(t, interactions.StatusRejected, recs[1].Resolution.Status)
	assert.Equal(t, "Never", recs[1].Resolution.Answer)
}

// Typed text at an ACP permission rejects it with the agent's first
// reject option, the text as the reason.
func TestAgentOptionsTypedTextRejects(t *testing.T) {
	r := startPolicy(t, "rules: []\n", []agent.PermissionRequest{acpRequest("Bash", map[string]string{"command": "make all"})})
	send(t, r.e, "web:1", "go")
	it := r.conn.WaitShown(t, 1)
	_, _, err := r.coord.ReplyText(it.ChatID, interactions.Reply{By: "u1", Text: "not today"})
	require.NoError(t, err)
	resp := r.next(t)
	assert.False(t, resp.Allow)
	assert.Equal(t, "no", resp.OptionID)
	assert.Equal(t, "not today", resp.Reason)
}

// The policy's ask and quorum rules apply to an ACP permission as to any
// tool approval: a quorum rule needs its approvers in a group chat, and is
// refused at once (the agent's reject option) where one person decides.
func TestPolicyQuorumRuleAppliesToAgentOptions(t *testing.T) {
	write := acpRequest("Write", map[string]string{"file_path": "/repo/deploy/app.yaml", "content": "x"})
	edit := acpRequest("Edit", map[string]string{"file_path": "/repo/a.go", "old_string": "a", "new_string": "b"})
	r := startPolicy(t, testPolicy, []agent.PermissionRequest{write, edit})
	send(t, r.e, "web:1", "go")
	resp := r.next(t)
	assert.False(t, resp.Allow)
	assert.Equal(t, "no", resp.OptionID)
	assert.Contains(t, resp.Message, "it needs 2 approvers and this chat has one person")
	it := r.conn.WaitShown(t, 1)
	assert.Equal(t, "Edit", it.ToolName, "the ask rule asks")
	_, err := r.coord.Reply(it.ID, interactions.Reply{By: "u1", Answers: []string{"Allow"}})
	require.NoError(t, err)
	resp = r.next(t)
	assert.True(t, resp.Allow)
	assert.Equal(t, "once", resp.OptionID)

	r2 := startPolicy(t, testPolicy, []agent.PermissionRequest{write})
	send(t, r2.e, "group:1", "go")
	it = r2.conn.WaitShown(t, 1)
	assert.Equal(t, 2, it.Quorum)
	out, err := r2.coord.Reply(it.ID, interactions.Reply{By: "u1", Answers: []string{"Allow"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Counted, out)
}
