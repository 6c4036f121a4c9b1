package slack

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A call rate limited many times more than any fixed number of attempts
// still goes through: nothing is dropped while the context lives.
func TestRetryOutlastsAnyNumberOf429s(t *testing.T) {
	c := New("xoxb-x", WithAppToken("xapp-x"))
	c.maxWait = time.Millisecond // Slack's Retry-After is whole seconds; keep the test short
	calls := 0
	err := c.retry(t.Context(), "chat.postMessage", func(context.Context) error {
		calls++
		if calls <= 40 {
			return &slack.RateLimitedError{RetryAfter: time.Second}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 41, calls)
}

// Only the end of the context stops the retries, and the error says so.
func TestRetryStopsWhenTheContextEnds(t *testing.T) {
	c := New("xoxb-x", WithAppToken("xapp-x"))
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	done := make(chan error, 1)
	go func() {
		done <- c.retry(ctx, "chat.update", func(context.Context) error {
			calls++
			return &slack.RateLimitedError{RetryAfter: time.Hour}
		})
	}()
	require.Eventually(t, func() bool { return c.pausedUntil("chat.update").After(time.Now()) }, 5*time.Second, time.Millisecond)
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "waiting out a rate limit of chat.update")
	assert.Equal(t, 1, calls, "nothing sent during the pause")
}

// While one caller waits out a 429, every other caller of the same method
// waits too (no request before the pause ends); other methods go on.
func TestRetryPauseSharedByMethod(t *testing.T) {
	c := New("xoxb-x", WithAppToken("xapp-x"))
	c.maxWait = 300 * time.Millisecond // stands in for Retry-After
	first := true
	var mu sync.Mutex
	post := func(at *[]time.Time) func(context.Context) error {
		return func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			*at = append(*at, time.Now())
			if first {
				first = false
				return &slack.RateLimitedError{RetryAfter: time.Second}
			}
			return nil
		}
	}
	var a, b []time.Time
	aDone := make(chan error, 1)
	go func() { aDone <- c.retry(t.Context(), "chat.postMessage", post(&a)) }()
	var until time.Time
	require.Eventually(t, func() bool { until = c.pausedUntil("chat.postMessage"); return !until.IsZero() }, 5*time.Second, time.Millisecond)

	// Another chat's post, started during the pause, waits for its end.
	require.NoError(t, c.retry(t.Context(), "chat.postMessage", post(&b)))
	require.Len(t, b, 1)
	assert.False(t, b[0].Before(until), "a post went out %v before the pause ended", until.Sub(b[0]))
	require.NoError(t, <-aDone)
	require.Len(t, a, 2)
	assert.False(t, a[1].Before(until))

	// Another method is not held by chat.postMessage's pause.
	c.pause("chat.postMessage", time.Now().Add(time.Hour))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err := c.retry(ctx, "chat.update", func(context.Context) error { return nil })
	assert.NoError(t, err)
	err = c.retry(ctx, "chat.update", func(context.Context) error { return errors.New("channel_not_found") })
	assert.EqualError(t, err, "channel_not_found", "other errors are returned at once, not retried")
}

// pausedUntil is when method's pause ends (zero when none is in force).
func (c *Connector) pausedUntil(method string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pauses[method]
}
