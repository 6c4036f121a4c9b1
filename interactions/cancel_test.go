package interactions_test

import (
	"context"
	"testing"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContextCancellation(t *testing.T) {
	c, p := newCoord(t)
	ctx, cancel := context.WithCancel(t.Context())
	ch, stop := c.Subscribe()
	defer stop()
	done := request(ctx, c, toolApproval("c"))
	it := p.Next(t)
	cancel()
	r := await(t, done)
	require.NoError(t, r.err)
	assert.Equal(t, interactions.StatusCancelled, r.res.Status)
	assert.Contains(t, r.res.Text, "cancelled")
	assert.Empty(t, c.Pending("c"))
	evs := eventsFor(t, ch, 2)
	assert.Equal(t, interactions.StatusCancelled, evs[1].Resolution.Status)
	assert.Equal(t, refOf(it), evs[1].Ref)
	_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"allow"}})
	require.ErrorIs(t, err, interactions.ErrNotPending)
	assert.Contains(t, err.Error(), "cancelled")
}

func TestCancelPendingOnlyThatChat(t *testing.T) {
	c, p := newCoord(t)
	ctx := t.Context()
	a1 := request(ctx, c, question("a", "Q1?", "x", "y"))
	p.Next(t)
	a2 := request(ctx, c, toolApproval("a"))
	p.Next(t)
	b := request(ctx, c, planReview("b"))
	itB := p.Next(t)

	got := c.CancelPending("a", "The chat was cleared.")
	require.Len(t, got, 2)
	assert.Equal(t, "Q1?", got[0].Question, "oldest first")
	assert.Equal(t, interactions.KindToolApproval, got[1].Kind)
	for _, ch := range []<-chan result{a1, a2} {
		r := await(t, ch)
		assert.Equal(t, interactions.StatusCancelled, r.res.Status)
		assert.Equal(t, "The chat was cleared.", r.res.Text)
	}
	notYet(t, b)
	assert.Empty(t, c.CancelPending("a", "again"), "nothing left to cancel")
	assert.Empty(t, c.CancelPending("nobody", "x"))

	// Cancel one by ID.
	assert.True(t, c.Cancel(itB.ID, "The agent withdrew the request."))
	r := await(t, b)
	assert.Equal(t, interactions.StatusCancelled, r.res.Status)
	assert.Equal(t, "The agent withdrew the request.", r.res.Text)
	assert.False(t, c.Cancel(itB.ID, "twice"))
	assert.False(t, c.Cancel("unknown", "x"))
}
