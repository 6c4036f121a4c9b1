package interactions_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// restoredApproval restores a tool approval an earlier run asked for the
// agent's request ref.
func restoredApproval(t *testing.T, c *interactions.Coordinator, id, ref string, within time.Duration) <-chan interactions.Resolution {
	t.Helper()
	old := toolApproval("telegram:1")
	old.ID, old.AgentRef, old.AskedAt = id, ref, time.Now().Add(-time.Minute)
	return restore(t, t.Context(), c, interactions.Restored{Interaction: old, Ref: "telegram:1:9", JoinWithin: within})
}

// requestAsync asks it in the background.
func requestAsync(ctx context.Context, c *interactions.Coordinator, it interactions.Interaction) <-chan interactions.Resolution {
	out := make(chan interactions.Resolution, 1)
	go func() {
		_, res, _ := c.Request(ctx, it)
		out <- res
	}()
	return out
}

// The same agent process, adopted after a restart, asks again for the
// request an earlier run restored: it joins that interaction (nothing is
// presented twice), the person's tap reaches the process, and the restored
// channel closes without a value, so nobody sends the answer on as a
// prompt.
func TestAgentAskingAgainJoinsTheRestoredInteraction(t *testing.T) {
	c, p := newCoord(t, interactions.WithTimeout(time.Hour))
	done := restoredApproval(t, c, "old1", "req-7", time.Minute)
	waitPending(t, c, "old1")

	again := toolApproval("telegram:1")
	again.AgentRef = "req-7"
	got := requestAsync(t.Context(), c, again)
	notYet(t, got)
	assert.Len(t, c.Pending("telegram:1"), 1, "one interaction, not two")

	_, err := c.Reply("old1", interactions.Reply{By: "u", Answers: []string{"allow"}})
	require.NoError(t, err)
	res := await(t, got)
	assert.Equal(t, interactions.StatusAnswered, res.Status)
	assert.Equal(t, interactions.DecisionAllow, res.Decision)
	settled := await(t, done)
	assert.True(t, settled.Joined, "joined: the caller must not send it on")
	assert.Equal(t, interactions.DecisionAllow, settled.Decision, "the caller records the outcome")
	assert.Empty(t, p.Shown(), "nothing presented again")
}

// A person may answer before the runner is back: the answer waits
// JoinWithin for the agent to ask again; then it is the agent's.
func TestAnswerBeforeTheAgentAsksAgainIsKeptForIt(t *testing.T) {
	c, _ := newCoord(t, interactions.WithTimeout(time.Hour))
	done := restoredApproval(t, c, "old1", "req-7", time.Minute)
	waitPending(t, c, "old1")
	_, err := c.Reply("old1", interactions.Reply{By: "u", Answers: []string{"deny"}, Text: "not now"})
	require.NoError(t, err)
	notYet(t, done)

	again := toolApproval("telegram:1")
	again.AgentRef = "req-7"
	res := await(t, requestAsync(t.Context(), c, again))
	assert.Equal(t, interactions.DecisionDeny, res.Decision)
	assert.Equal(t, "u", res.By)
	assert.True(t, await(t, done).Joined)
}

// When the agent never asks again (its runner did not come back), the
// answer goes to Restore's caller after JoinWithin, as before; another
// request, or one from another chat, never joins.
func TestAnswerNobodyJoinsGoesToTheCaller(t *testing.T) {
	c, _ := newCoord(t, interactions.WithTimeout(time.Hour))
	done := restoredApproval(t, c, "old1", "req-7", 50*time.Millisecond)
	waitPending(t, c, "old1")

	other := toolApproval("telegram:2")
	other.AgentRef = "req-7"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	otherRes := requestAsync(ctx, c, other)
	require.Eventually(t, func() bool { return len(c.Pending("telegram:2")) == 1 }, wait, time.Millisecond, "asked on its own")

	_, err := c.Reply("old1", interactions.Reply{By: "u", Answers: []string{"allow"}})
	require.NoError(t, err)
	res := await(t, done)
	assert.False(t, res.Joined)
	assert.Equal(t, interactions.DecisionAllow, res.Decision)
	notYet(t, otherRes)
}

// An adopted agent withdrawing its request (its context ends) cancels the
// restored interaction: its buttons stop working.
func TestJoinedRequestWithdrawnCancelsIt(t *testing.T) {
	c, _ := newCoord(t, interactions.WithTimeout(time.Hour))
	done := restoredApproval(t, c, "old1", "req-7", time.Minute)
	waitPending(t, c, "old1")
	again := toolApproval("telegram:1")
	again.AgentRef = "req-7"
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(interactions.ErrWithdrawn) // withdrawn as soon as it joins
	got := requestAsync(ctx, c, again)
	res := await(t, got)
	assert.Equal(t, interactions.StatusCancelled, res.Status)
	assert.Equal(t, interactions.WithdrawnText, res.Text)
	_, pending := c.Get("old1")
	assert.False(t, pending)
	assert.True(t, await(t, done).Joined)
}

// The agent's request ID comes with the context through the flows: each
// of several questions of one request joins its own restored question.
func TestAgentRefFromTheContextJoinsEachQuestion(t *testing.T) {
	c, _ := newCoord(t, interactions.WithTimeout(time.Hour))
	second := question("telegram:1", "Which db?", "pg", "sqlite")
	second.ID, second.AgentRef, second.Index, second.Total = "old2", "req-9", 2, 2
	done := restore(t, t.Context(), c, interactions.Restored{Interaction: second, JoinWithin: time.Minute})
	waitPending(t, c, "old2")

	ctx := interactions.WithAgentRef(t.Context(), "req-9")
	got := make(chan interactions.AskResult, 1)
	go func() {
		res, _ := c.Ask(ctx, "telegram:1", []interactions.Question{
			{Question: "Which lang?", Options: []interactions.Choice{{Label: "go"}, {Label: "rust"}}},
			{Question: "Which db?", Options: []interactions.Choice{{Label: "pg"}, {Label: "sqlite"}}},
		})
		got <- res
	}()
	var first interactions.Interaction
	require.Eventually(t, func() bool {
		for _, it := range c.Pending("telegram:1") {
			if it.Index == 1 {
				first = it
				return true
			}
		}
		return false
	}, wait, time.Millisecond, "the first question is asked anew: nothing restored for it")
	assert.Equal(t, "req-9", first.AgentRef)
	_, err := c.Reply(first.ID, interactions.Reply{By: "u", Answers: []string{"go"}})
	require.NoError(t, err)
	_, err = c.Reply("old2", interactions.Reply{By: "u", Answers: []string{"sqlite"}})
	require.NoError(t, err)
	res := await(t, got)
	assert.Equal(t, map[string]string{"Which lang?": "go", "Which db?": "sqlite"}, res.Answers)
	assert.True(t, await(t, done).Joined, "the second question was joined")
}
