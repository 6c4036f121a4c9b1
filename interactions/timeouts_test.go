package interactions_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// The tests here run in a synctest bubble: its clock is fake and moves only
// when every goroutine in it waits, so a timeout fires exactly at its
// deadline, at once, however busy the machine is.

// An interaction nobody answers expires at its deadline, of every kind;
// observers get its message back to mark it expired, and a late tap is
// told it expired (not that it is unknown).
func TestTimeout(t *testing.T) {
	for _, mk := range []func(string) interactions.Interaction{
		func(c string) interactions.Interaction { return question(c, "Q?", "a", "b") },
		planReview, toolApproval,
	} {
		it0 := mk("c")
		t.Run(string(it0.Kind), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { expiresUnanswered(t, it0) })
		})
	}
}

func expiresUnanswered(t *testing.T, it0 interactions.Interaction) {
	c, p := newCoord(t, interactions.WithTimeout(5*time.Millisecond))
	ch, stop := c.Subscribe()
	defer stop()
	r := await(t, request(t.Context(), c, it0))
	require.NoError(t, r.err)
	assert.Equal(t, interactions.StatusExpired, r.res.Status)
	assert.False(t, r.res.Approved())
	assert.Contains(t, r.res.Text, "No answer came within 5ms")
	assert.Empty(t, r.res.By)
	assert.Equal(t, r.it.Deadline, r.res.At, "expired at its deadline")
	assert.Empty(t, c.Pending("c"))
	assert.Zero(t, c.PendingCount())

	evs := eventsFor(t, ch, 2)
	assert.Equal(t, interactions.EventResolved, evs[1].Type)
	assert.Equal(t, interactions.StatusExpired, evs[1].Resolution.Status)
	assert.Equal(t, refOf(r.it), evs[1].Ref, "the connector gets its message back to mark it expired")
	assert.Equal(t, r.res, evs[1].Resolution)

	shown := p.Next(t)
	_, err := c.Reply(shown.ID, interactions.Reply{Answers: []string{shown.Options[0].Label}})
	require.ErrorIs(t, err, interactions.ErrNotPending)
	assert.Contains(t, err.Error(), "expired")
	assert.True(t, interactions.IsStale(err))
}

// Each interaction expires at its own deadline: not at an earlier one's
// when that one was answered, and not never once nothing else is pending.
func TestExpiryEachAtItsOwnDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 300 * time.Millisecond
		c, p := newCoord(t, interactions.WithTimeout(timeout))
		ctx := t.Context()

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
		assert.Equal(t, shownSecond.Deadline, r.res.At)
		assert.Zero(t, c.PendingCount())

		// Nothing is pending any more; the next one is timed out all the same.
		third := request(ctx, c, interactions.Interaction{ChatID: "a", Kind: interactions.KindQuestion, Question: "third?"})
		shownThird := p.Next(t)
		r = await(t, third)
		assert.Equal(t, interactions.StatusExpired, r.res.Status)
		assert.False(t, r.res.At.Before(shownThird.Deadline))
		assert.Equal(t, shownThird.Deadline, r.res.At)
	})
}

// A request with a shorter timeout of its own (Start) expires first even
// when asked after one with a longer timeout, which stays pending.
func TestExpiryShorterTimeoutAskedLaterExpiresFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newCoord(t, interactions.WithTimeout(time.Hour))
		ctx := context.Background()

		long := request(ctx, c, interactions.Interaction{ChatID: "a", Kind: interactions.KindQuestion, Question: "long?"})
		p.Next(t)
		it, short, err := c.Start(ctx, interactions.Interaction{ChatID: "a", Kind: interactions.KindQuestion, Question: "short?"}, 50*time.Millisecond)
		require.NoError(t, err)
		p.Next(t)
		res := await(t, short)
		assert.Equal(t, interactions.StatusExpired, res.Status)
		assert.False(t, res.At.Before(it.Deadline))
		assert.Equal(t, it.Deadline, res.At)
		notYet(t, long)
		assert.Equal(t, 1, c.PendingCount())
		assert.Len(t, c.CancelPending("a", "done"), 1)
		assert.Equal(t, interactions.StatusCancelled, await(t, long).res.Status)
	})
}
