package interactions_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

type evSummary struct {
	Type     interactions.EventType
	ID       string
	Status   interactions.Status
	Selected string
	Feedback bool
	Ref      string
}

func summarize(evs []interactions.Event) []evSummary {
	out := make([]evSummary, len(evs))
	for i, e := range evs {
		out[i] = evSummary{e.Type, e.Interaction.ID, e.Resolution.Status, fmt.Sprint(e.Selected), e.AwaitingFeedback, e.Ref}
	}
	return out
}

func TestEventsToSeveralSubscribersInOrder(t *testing.T) {
	c, p := newCoord(t)
	const subs = 3
	chans := make([]<-chan interactions.Event, subs)
	for i := range chans {
		ch, stop := c.Subscribe()
		defer stop()
		chans[i] = ch
	}

	// A multi-select question with toggles, a plan review with adjust in
	// two steps, and a tool approval that expires... in one chat.
	q := request(t.Context(), c, multi("c", "Which?", "a", "b", "c"))
	itQ := p.Next(t)
	_, err := c.Toggle(itQ.ID, "b", interactions.Reply{})
	require.NoError(t, err)
	_, err = c.Toggle(itQ.ID, "a", interactions.Reply{})
	require.NoError(t, err)
	require.NoError(t, c.Confirm(itQ.ID, interactions.Reply{By: "u"}))
	await(t, q)

	pl := request(t.Context(), c, planReview("c"))
	itP := p.Next(t)
	_, err = c.Reply(itP.ID, interactions.Reply{Answers: []string{"adjust"}})
	require.NoError(t, err)
	_, _, err = c.ReplyText("c", interactions.Reply{Text: "smaller"})
	require.NoError(t, err)
	await(t, pl)

	tl := request(t.Context(), c, toolApproval("c"))
	itT := p.Next(t)
	c.CancelPending("c", "cleared")
	await(t, tl)

	want := []evSummary{
		{interactions.EventRequested, itQ.ID, "", "[]", false, ""},
		// Every event after Present carries its message reference, and a
		// multi-select's the selection (the last one included).
		{interactions.EventUpdated, itQ.ID, "", "[b]", false, refOf(itQ)},
		{interactions.EventUpdated, itQ.ID, "", "[a b]", false, refOf(itQ)},
		{interactions.EventResolved, itQ.ID, interactions.StatusAnswered, "[a b]", false, refOf(itQ)},
		{interactions.EventRequested, itP.ID, "", "[]", false, ""},
		{interactions.EventUpdated, itP.ID, "", "[]", true, refOf(itP)},
		{interactions.EventResolved, itP.ID, interactions.StatusRejected, "[]", false, refOf(itP)},
		{interactions.EventRequested, itT.ID, "", "[]", false, ""},
		{interactions.EventResolved, itT.ID, interactions.StatusCancelled, "[]", false, refOf(itT)},
	}
	for i, ch := range chans {
		evs := eventsFor(t, ch, len(want))
		assert.Equal(t, want, summarize(evs), "subscriber %d", i)
		// The requested event shows the interaction as presented.
		assert.Equal(t, itQ, evs[0].Interaction)
		assert.Equal(t, "a, b", evs[3].Resolution.Answer)
		assert.Equal(t, "smaller", evs[6].Resolution.Text)
	}
}

func TestSlowSubscriberBlocksNobody(t *testing.T) {
	c, p := newCoord(t)
	p.OnPresent = func(_ context.Context, it *interactions.Interaction) (string, error) {
		return refOf(*it), nil
	}
	_, stopDead := c.Subscribe() // never read
	defer stopDead()
	live, stop := c.Subscribe()
	defer stop()

	const n = 500
	got := make(chan []interactions.Event, 1)
	go func() {
		var evs []interactions.Event
		for e := range live {
			if evs = append(evs, e); len(evs) == 2*n {
				break
			}
		}
		got <- evs
	}()
	asked := make(chan error, 1)
	go func() {
		for i := range n {
			// Cancelled at once: each Request publishes requested and
			// resolved, with the dead subscriber's queue growing.
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			_, res, err := c.Request(ctx, question(fmt.Sprint("chat", i), "Q?", "a", "b"))
			if err == nil && res.Status != interactions.StatusCancelled {
				err = fmt.Errorf("request %d: %s", i, res.Status)
			}
			if err != nil {
				asked <- err
				return
			}
		}
		asked <- nil
	}()
	require.NoError(t, await(t, asked), "the coordinator was blocked")
	evs := await(t, got)
	require.Len(t, evs, 2*n)
	for i := 0; i < 2*n; i += 2 {
		assert.Equal(t, interactions.EventRequested, evs[i].Type)
		assert.Equal(t, interactions.EventResolved, evs[i+1].Type)
		assert.Equal(t, evs[i].Interaction.ID, evs[i+1].Interaction.ID)
	}
}

func TestUnsubscribe(t *testing.T) {
	c, p := newCoord(t)
	ch, stop := c.Subscribe()
	other, stopOther := c.Subscribe()
	defer stopOther()

	done := request(t.Context(), c, toolApproval("c"))
	it := p.Next(t)
	_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"allow"}})
	require.NoError(t, err)
	await(t, done)
	eventsFor(t, other, 2) // both events were published

	stop()
	stop() // twice is harmless
	// Events published before the stop are still delivered, then the
	// channel is closed.
	var evs []interactions.Event
	timeout := time.After(wait)
	for closed := false; !closed; {
		select {
		case e, ok := <-ch:
			if !ok {
				closed = true
				break
			}
			evs = append(evs, e)
		case <-timeout:
			t.Fatal("the channel was not closed after unsubscribing")
		}
	}
	require.Len(t, evs, 2)
	assert.Equal(t, interactions.EventRequested, evs[0].Type)
	assert.Equal(t, interactions.EventResolved, evs[1].Type)

	// Later events still reach the other subscriber.
	done = request(t.Context(), c, toolApproval("c"))
	it = p.Next(t)
	_, err = c.Reply(it.ID, interactions.Reply{Answers: []string{"deny"}})
	require.NoError(t, err)
	await(t, done)
	assert.Len(t, eventsFor(t, other, 2), 2)
}
