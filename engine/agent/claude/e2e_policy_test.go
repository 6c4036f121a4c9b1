package claude_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
	"github.com/leashd/leashd/engine/policy"
	"github.com/leashd/leashd/interactions"
)

// An approval policy through the real CLI: a Bash `git push` is denied by
// a rule before anyone is asked (the model reads the rule's reason in the
// tool_result, the chat sees which rule), and a command matching a quorum
// rule is put to people with the quorum on the interaction shown.
func TestE2EPolicyDeniesAndRequiresQuorum(t *testing.T) {
	p, perr := policy.Parse("policy.yaml", []byte(`rules:
  - tool: Bash
    command: '\bgit\s+push\b'
    decision: deny
    reason: Pushing is done by CI.
  - tool: Bash
    command: '^touch '
    decision: {quorum: 2}
`))
	require.NoError(t, perr)
	s := newStack(t, func(d *engine.Deps, _ *engine.Config) { d.Policy = policy.NewHolder("", p) })
	s.conn.GroupChats = true // a team's chat: a quorum can be met there
	s.api.Reply(bash("git push origin main"), bash("touch deployed.txt"), fakeapi.Text("Done."))
	s.send(t, "ship it")

	it := s.conn.WaitShown(t, 1)
	assert.Equal(t, "Bash", it.ToolName)
	assert.Contains(t, it.ToolSummary, "touch deployed.txt")
	assert.Equal(t, 2, it.Quorum, "the interaction shown carries the quorum")
	out, err := s.e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Counted, out, "one approval of two")
	_, err = s.e.Reply(context.Background(), it.ID, interactions.Reply{By: "u2", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	assert.Equal(t, "Done.", s.conn.WaitDone(t, 1).Result)
	assert.Equal(t, 1, s.conn.ShownCount(), "the git push was not put to anyone")
	assert.Contains(t, s.conn.SaidText(), "Denied by policy rule 1 (line 2): Pushing is done by CI. — Bash: git push origin main")
	assert.FileExists(t, filepath.Join(s.dir, "deployed.txt"))

	calls := s.api.Calls()
	require.Len(t, calls, 3)
	res, ok := calls[1].ToolResult(calls[0].Reply.Tools[0].ID)
	require.True(t, ok)
	assert.True(t, res.IsError)
	assert.Contains(t, res.ResultText(), "Denied by leashd policy rule 1 (line 2): Pushing is done by CI.", "the model reads the rule's reason")
	t.Logf("tool_result the model read: %s", res.ResultText())
	res, ok = calls[2].ToolResult(calls[1].Reply.Tools[0].ID)
	require.True(t, ok)
	assert.False(t, res.IsError, "the touch ran")
}
