package interactions_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegisteredBeforePresent(t *testing.T) {
	t.Run("a tap from inside Present resolves it", func(t *testing.T) {
		p := newPresenter()
		c := interactions.New(interactions.WithPresenter(p))
		t.Cleanup(func() { c.Interrupt("test over") })
		var tapErr error
		p.OnPresent = func(ctx context.Context, it *interactions.Interaction) (string, error) {
			// The fastest possible tap: before the message is even sent.
			_, tapErr = c.Reply(it.ID, interactions.Reply{By: "fast", Answers: []string{"allow"}})
			return refOf(*it), nil
		}
		ch, stop := c.Subscribe()
		defer stop()
		r := await(t, request(t.Context(), c, toolApproval("c")))
		require.NoError(t, tapErr)
		assert.Equal(t, interactions.StatusAnswered, r.res.Status)
		assert.Equal(t, interactions.DecisionAllow, r.res.Decision)
		assert.Equal(t, "fast", r.res.By)
		evs := eventsFor(t, ch, 2)
		assert.Equal(t, refOf(r.it), evs[1].Ref)
	})

	t.Run("a tap while Present blocks", func(t *testing.T) {
		p := newPresenter()
		c := interactions.New(interactions.WithPresenter(p))
		t.Cleanup(func() { c.Interrupt("test over") })
		entered := make(chan interactions.Interaction)
		release := make(chan struct{})
		p.OnPresent = func(ctx context.Context, it *interactions.Interaction) (string, error) {
			entered <- *it
			<-release // the send is slow
			return refOf(*it), nil
		}
		done := request(t.Context(), c, question("c", "Q?", "x", "y"))
		it := await(t, entered)
		// Pending and findable both ways while the send is in flight.
		_, ok := c.Get(it.ID)
		require.True(t, ok)
		require.Len(t, c.Pending("c"), 1)
		_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"y"}})
		require.NoError(t, err)
		notYet(t, done) // the send has not returned yet
		close(release)
		assert.Equal(t, "y", await(t, done).res.Answer)
	})

	t.Run("typed text while Present blocks", func(t *testing.T) {
		p := newPresenter()
		c := interactions.New(interactions.WithPresenter(p))
		t.Cleanup(func() { c.Interrupt("test over") })
		entered := make(chan struct{})
		release := make(chan struct{})
		p.OnPresent = func(ctx context.Context, it *interactions.Interaction) (string, error) {
			close(entered)
			<-release
			return refOf(*it), nil
		}
		done := request(t.Context(), c, planReview("c"))
		<-entered
		_, _, err := c.ReplyText("c", interactions.Reply{Text: "smaller"})
		require.NoError(t, err)
		close(release)
		assert.Equal(t, "smaller", await(t, done).res.Text)
	})
}

// A Present that fails is never an answer: the interaction stays pending
// and answerable (the web page, the API), Present is retried in the
// background until it succeeds, and the operator is told.
func TestPresentFailure(t *testing.T) {
	var mu sync.Mutex
	attempts := []int{}
	failing := true
	p := newPresenter()
	p.OnPresent = func(ctx context.Context, it *interactions.Interaction) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		attempts = append(attempts, interactions.PresentAttempt(ctx))
		if failing {
			return "", errors.New("telegram: 502 Bad Gateway")
		}
		return refOf(*it), nil
	}
	var logs syncBuf
	c := interactions.New(interactions.WithPresenter(p), interactions.WithPresentRetry(time.Millisecond, 5*time.Millisecond),
		interactions.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	t.Cleanup(func() { c.Interrupt("test over") })
	ch, stop := c.Subscribe()
	defer stop()
	done := request(t.Context(), c, toolApproval("c"))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(attempts) >= 3 }, wait, time.Millisecond,
		"Present is retried")
	require.Equal(t, 1, c.PendingCount(), "still pending after failed attempts")
	assert.Contains(t, logs.String(), "level=ERROR msg=\"presenting interaction failed")
	assert.Contains(t, logs.String(), "502 Bad Gateway")
	mu.Lock()
	assert.Equal(t, []int{1, 2, 3}, attempts[:3])
	failing = false
	mu.Unlock()
	it := c.Pending("c")[0]
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "interaction shown after earlier attempts failed") }, wait, time.Millisecond)
	_, err := c.Reply(it.ID, interactions.Reply{By: "web", Answers: []string{"allow"}})
	require.NoError(t, err)
	r := await(t, done)
	assert.Equal(t, interactions.StatusAnswered, r.res.Status)
	evs := eventsFor(t, ch, 2)
	assert.Equal(t, interactions.EventResolved, evs[1].Type)
	assert.Equal(t, refOf(it), evs[1].Ref, "the message shown by the retry is edited")
	mu.Lock()
	n := len(attempts)
	mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	assert.Equal(t, n, len(attempts), "no attempt after it was shown")
	mu.Unlock()
}

// A Present that never succeeds: the interaction is answered elsewhere and
// the retries stop with it.
func TestPresentFailingForGood(t *testing.T) {
	var calls atomic.Int32
	p := newPresenter()
	p.OnPresent = func(context.Context, *interactions.Interaction) (string, error) {
		calls.Add(1)
		return "", errors.New("telegram: 400 Bad Request: chat not found")
	}
	c := interactions.New(interactions.WithPresenter(p), interactions.WithPresentRetry(time.Millisecond, 2*time.Millisecond))
	t.Cleanup(func() { c.Interrupt("test over") })
	done := request(t.Context(), c, toolApproval("c"))
	require.Eventually(t, func() bool { return calls.Load() >= 2 }, wait, time.Millisecond)
	it := c.Pending("c")[0]
	_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"deny"}, Text: "not now"})
	require.NoError(t, err)
	r := await(t, done)
	assert.Equal(t, interactions.StatusRejected, r.res.Status)
	assert.Equal(t, "not now", r.res.Text)
	time.Sleep(10 * time.Millisecond)
	n := calls.Load()
	time.Sleep(20 * time.Millisecond)
	assert.Equal(t, n, calls.Load(), "retries end with the interaction")
}

// Without a presenter nobody could answer: the request is cancelled, until
// SetPresenter wires one.
func TestNoPresenter(t *testing.T) {
	c := interactions.New()
	r := await(t, request(t.Context(), c, toolApproval("c")))
	require.NoError(t, r.err)
	assert.Equal(t, interactions.StatusCancelled, r.res.Status)
	assert.Contains(t, r.res.Text, "No chat connector")
	assert.Zero(t, c.PendingCount())
	// SetPresenter wires one later.
	p := newPresenter()
	c.SetPresenter(p)
	done := request(t.Context(), c, toolApproval("c"))
	it := p.Next(t)
	_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"allow"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusAnswered, await(t, done).res.Status)
}
