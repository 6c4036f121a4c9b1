package telegram_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// In a group with LEASHD_TELEGRAM_APPROVERS and a quorum of 2, an allowed
// user who is no approver cannot approve; an approver who is not an
// allowed user can tap (counted, "1 of 2 approvals"), and another such
// approver's typed reason denies at once, naming them; the agent gets the
// reason. A command from an approver-only user is refused.
func TestGroupApproversAndQuorum(t *testing.T) {
	const group, dev, alice, bob = int64(-900), int64(42), int64(7), int64(8)
	h := newHarness(t, setup{
		allowed:    []int64{dev},
		connOpts:   []telegram.Option{telegram.WithApprovers([]int64{alice, bob})},
		engineOpts: []enginetest.Setup{func(_ *engine.Deps, c *engine.Config) { c.ApprovalQuorum = 2 }},
		turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
			ask(ctx, th, "Bash", map[string]any{"command": "rm -rf build"})
			return agent.Result{}, nil
		},
	})
	h.fake.SetUserName(alice, "Alice")
	h.fake.SetUserName(bob, "Bob")
	h.fake.Text(group, dev, "clean up")
	msg := h.botMessage(group, "rm -rf build")

	a := h.answer(h.tap(group, dev, msg.ID, "Allow"))
	assert.Contains(t, a.Text, "only approvers")
	a = h.answer(h.tap(group, alice, msg.ID, "Allow"))
	assert.Equal(t, telegram.CountedText, a.Text)
	h.waitMessage(group, msg.ID, "1 of 2 approvals", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "1 of 2 approvals — Alice") && len(m.Buttons()) > 0
	})
	a = h.answer(h.tap(group, alice, msg.ID, "Allow"))
	assert.Equal(t, telegram.AlreadyApprovedText, a.Text)

	h.fake.Text(group, bob, "/clear")
	h.botMessage(group, telegram.ApproverOnlyText)
	h.fake.Text(group, bob, "not the build dir")
	r := h.response(1)
	assert.False(t, r.Allow)
	assert.Contains(t, r.Message, "not the build dir")
	h.waitMessage(group, msg.ID, "denied by Bob", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Denied — by Bob: not the build dir") && len(m.Buttons()) == 0
	})
	assert.Equal(t, []string{"clean up"}, h.prompts(), "no prompt from the approvers' text")
}

// A permission with the agent's own options (an ACP agent's) decides what
// the agent may do like any tool approval: in a group only approvers may
// answer it; an allowed user who is no approver is refused.
func TestAgentOptionsAreForApproversOnly(t *testing.T) {
	const group, dev, alice = int64(-901), int64(42), int64(7)
	h := newHarness(t, setup{
		allowed:  []int64{dev},
		connOpts: []telegram.Option{telegram.WithApprovers([]int64{alice})},
		turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
			th.Permission(ctx, agent.PermissionRequest{ToolName: "Bash", Input: []byte(`{"command":"make deploy"}`),
				Options: []agent.PermissionOption{{ID: "yes", Name: "Yes", Kind: "allow_once"}, {ID: "no", Name: "No", Kind: "reject_once"}}})
			return agent.Result{}, nil
		},
	})
	h.fake.Text(group, dev, "deploy")
	msg := h.botMessage(group, "make deploy")
	a := h.answer(h.tap(group, dev, msg.ID, "✅ Yes"))
	assert.Contains(t, a.Text, "only approvers")
	h.answer(h.tap(group, alice, msg.ID, "✅ Yes"))
	r := h.response(1)
	assert.True(t, r.Allow)
	assert.Equal(t, "yes", r.OptionID, "the agent's own option goes back")
}

// With a quorum of 2, a request one approver approved when leashd stops
// keeps saying so: its message says it was interrupted, with "1 of 2
// approvals — Alice" and the buttons. After the restart the approval still
// counts: Bob's tap is the second, and the message names both approvers.
func TestQuorumCountSurvivesARestart(t *testing.T) {
	const group, dev, alice, bob = int64(-902), int64(42), int64(7), int64(8)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "leashd.db")
	fake := tgfake.New()
	t.Cleanup(fake.Close)
	fake.SetUserName(alice, "Alice")
	fake.SetUserName(bob, "Bob")
	run := func(turn turnFunc) *harness {
		st, err := sqlite.Open(ctx, path)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return newHarness(t, setup{
			fakeServer: fake, turn: turn, allowed: []int64{dev},
			connOpts:   []telegram.Option{telegram.WithApprovers([]int64{alice, bob})},
			coordOpts:  []interactions.Opt{interactions.WithJournal(st)},
			engineOpts: []enginetest.Setup{func(d *engine.Deps, c *engine.Config) { d.Store = st; c.ApprovalQuorum = 2 }},
		})
	}
	h1 := run(func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
		ask(ctx, th, "Bash", map[string]any{"command": "rm -rf build"})
		return agent.Result{}, nil
	})
	fake.Text(group, dev, "clean up")
	msg := h1.botMessage(group, "rm -rf build")
	assert.Equal(t, telegram.CountedText, h1.answer(h1.tap(group, alice, msg.ID, "Allow")).Text)
	h1.waitMessage(group, msg.ID, "1 of 2 approvals", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "1 of 2 approvals — Alice")
	})
	h1.stop()
	m := h1.message(group, msg.ID) // edited before the engine's Run returned
	assert.Contains(t, m.Text, telegram.InterruptedText)
	assert.Contains(t, m.Text, "⏳ <b>1 of 2 approvals — Alice</b>", "the count stays on the interrupted message")
	assert.Contains(t, m.Buttons(), "Allow", "the buttons stay")

	h2 := run(nil)
	h2.answer(h2.tap(group, bob, msg.ID, "Allow"))
	m = h2.waitMessage(group, msg.ID, "approved by both", func(m tgfake.Message) bool { return len(m.Buttons()) == 0 })
	// Both counted. (Alice's name is not known to the new connector until
	// she writes again: names are not kept across a restart.)
	assert.Regexp(t, `Allowed — approved by [^,]+, Bob$`, m.Text)
}

// An ACP agent's permission with its own options takes the quorum like
// any tool approval: with a quorum of 2, Alice's ✅ is counted and the
// message says so, Bob's decides with the option he tapped; in the next,
// one ❌ decides at once.
func TestAgentOptionsNeedTheQuorum(t *testing.T) {
	const group, dev, alice, bob = int64(-903), int64(42), int64(7), int64(8)
	h := newHarness(t, setup{
		allowed:    []int64{dev},
		connOpts:   []telegram.Option{telegram.WithApprovers([]int64{alice, bob})},
		engineOpts: []enginetest.Setup{func(_ *engine.Deps, c *engine.Config) { c.ApprovalQuorum = 2 }},
		turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
			for _, cmd := range []string{"make deploy", "make clean"} {
				th.Permission(ctx, agent.PermissionRequest{ToolName: "Bash", Input: []byte(`{"command":"` + cmd + `"}`),
					Options: []agent.PermissionOption{{ID: "yes", Name: "Yes", Kind: "allow_once"}, {ID: "no", Name: "No", Kind: "reject_once"}}})
			}
			return agent.Result{}, nil
		},
	})
	h.fake.Text(group, dev, "deploy")
	msg := h.botMessage(group, "make deploy")
	assert.Equal(t, []string{"✅ Yes", "❌ No"}, msg.Buttons())
	a := h.answer(h.tap(group, alice, msg.ID, "✅ Yes"))
	assert.Equal(t, "✓ Your approval is counted; more approvers are needed", a.Text)
	h.waitMessage(group, msg.ID, "the count shown", func(m tgfake.Message) bool { return strings.Contains(m.Text, "1 of 2 approvals") })
	h.answer(h.tap(group, bob, msg.ID, "✅ Yes"))
	r := h.response(1)
	assert.True(t, r.Allow)
	assert.Equal(t, "yes", r.OptionID)

	msg = h.botMessage(group, "make clean")
	h.answer(h.tap(group, alice, msg.ID, "❌ No"))
	r = h.response(2)
	assert.False(t, r.Allow)
	assert.Equal(t, "no", r.OptionID)
	h.waitMessage(group, msg.ID, "the denial shown", func(m tgfake.Message) bool { return strings.Contains(m.Text, "🚫 Denied") })
}
