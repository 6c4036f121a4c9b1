package interactions_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInterrupt(t *testing.T) {
	c, p := newCoord(t)
	ctx := t.Context()
	a := request(ctx, c, question("a", "Q1?", "x", "y"))
	p.Next(t)
	b := request(ctx, c, toolApproval("b"))
	p.Next(t)

	got := c.Interrupt("leashd is shutting down")
	assert.Len(t, got, 2)
	for _, ch := range []<-chan result{a, b} {
		r := await(t, ch)
		require.NoError(t, r.err)
		assert.Equal(t, interactions.StatusInterrupted, r.res.Status)
		assert.Equal(t, "leashd is shutting down", r.res.Text)
	}
	assert.Zero(t, c.PendingCount())

	// New requests are refused without being shown.
	r := await(t, request(ctx, c, question("a", "Q2?", "x", "y")))
	require.ErrorIs(t, r.err, interactions.ErrClosed)
	_, err := c.Ask(ctx, "a", []interactions.Question{{Question: "Q3?"}})
	require.ErrorIs(t, err, interactions.ErrClosed)
	p.NothingShown(t)
	assert.Len(t, p.Shown(), 2)
	assert.Empty(t, c.Interrupt("again"))
}

// At shutdown a subscriber stops right after Interrupt; Wait makes sure it
// has been sent every interrupted interaction's resolved event first (each
// is published by its own Request call as it returns), so no chat misses
// its "leashd restarted" edit.
func TestWaitAfterInterruptDeliversEveryResolvedEvent(t *testing.T) {
	c, p := newCoord(t)
	ctx := t.Context()
	events, stop := c.Subscribe()
	const n = 50
	for i := range n {
		request(ctx, c, question(fmt.Sprintf("chat-%d", i), "Q?", "x", "y"))
		p.Next(t)
	}
	require.Len(t, c.Interrupt("restarting"), n)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	require.NoError(t, c.Wait(wctx))
	stop()
	interrupted := 0
	for ev := range events {
		if ev.Type == interactions.EventResolved && ev.Resolution.Status == interactions.StatusInterrupted {
			interrupted++
		}
	}
	assert.Equal(t, n, interrupted)
}

// Wait gives up when its context ends while a request is still being
// resolved, saying so.
func TestWaitIsBoundedByItsContext(t *testing.T) {
	_, p := newCoord(t)
	release := make(chan struct{})
	defer close(release)
	j := &blockingJournal{release: release}
	c := interactions.New(interactions.WithPresenter(p), interactions.WithJournal(j))
	request(t.Context(), c, question("a", "Q?", "x", "y"))
	p.Next(t)
	c.Interrupt("restarting") // the Request now blocks writing its resolution
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := c.Wait(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "interactions still being resolved")
}

// blockingJournal holds every Resolved write until released.
type blockingJournal struct{ release chan struct{} }

func (blockingJournal) Requested(context.Context, interactions.Interaction) error { return nil }
func (blockingJournal) Presented(context.Context, string, string) error           { return nil }

func (j *blockingJournal) Resolved(context.Context, interactions.Interaction, interactions.Resolution) error {
	<-j.release
	return nil
}
