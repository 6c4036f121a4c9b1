package interactions_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// Interactions that share a timeout share one timer: each must still expire
// at its own deadline — not at an earlier one's when that one was answered,
// and not never when the list emptied and filled again.
func TestExpiryEachAtItsOwnDeadlineWithASharedTimer(t *testing.T) {
	p := newPresenter()
	const timeout = 300 * time.Millisecond
	c := interactions.New(interactions.WithPresenter(p), interactions.WithTimeout(timeout))
	ctx := context.Background()

	first := request(ctx, c, interactions.Interaction{ChatID: "a", Kind: interactions.KindQuestion, Question: "first?"})
	shownFirst := p.Next(t)
	time.Sleep(timeout / 2)
	second := request(ctx, c, interactions.Interaction{ChatID: "b", Kind: interactions.KindQuestion, Question: "second?"})
	shownSecond := p.Next(t)
	_, err := c.Reply(shownFirst.ID, interactions.Reply{By: "u", Text: "yes"})
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusAnswered, await(t, first).res.Status)

	r := await(t, second)
	assert.Equal(t, interactions.StatusExpired, r.res.Status)
	assert.Contains(t, r.res.Text, "No answer came within 300ms")
	assert.False(t, r.res.At.Before(shownSecond.Deadline), "expired at %s, before its deadline %s", r.res.At, shownSecond.Deadline)
	assert.Zero(t, c.PendingCount())

	// The list emptied; the next one is timed out all the same.
	third := request(ctx, c, interactions.Interaction{ChatID: "a", Kind: interactions.KindQuestion, Question: "third?"})
	shownThird := p.Next(t)
	r = await(t, third)
	assert.Equal(t, interactions.StatusExpired, r.res.Status)
	assert.False(t, r.res.At.Before(shownThird.Deadline))
}

// A request with a shorter timeout of its own (Start) expires first even
// when asked after one with a longer timeout, which stays pending.
func TestExpiryShorterTimeoutAskedLaterExpiresFirst(t *testing.T) {
	p := newPresenter()
	c := interactions.New(interactions.WithPresenter(p), interactions.WithTimeout(time.Hour))
	ctx := context.Background()

	long := request(ctx, c, interactions.Interaction{ChatID: "a", Kind: interactions.KindQuestion, Question: "long?"})
	p.Next(t)
	it, short, err := c.Start(ctx, interactions.Interaction{ChatID: "a", Kind: interactions.KindQuestion, Question: "short?"}, 50*time.Millisecond)
	require.NoError(t, err)
	p.Next(t)
	res := await(t, short)
	assert.Equal(t, interactions.StatusExpired, res.Status)
	assert.False(t, res.At.Before(it.Deadline))
	notYet(t, long)
	assert.Equal(t, 1, c.PendingCount())
	assert.Len(t, c.CancelPending("a", "done"), 1)
	assert.Equal(t, interactions.StatusCancelled, await(t, long).res.Status)
}
