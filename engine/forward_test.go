package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/interactions"
)

// stuckConn is a recording connector whose Update for one chat hangs (as a
// Slack chat.update waiting out a long 429 would) until released or until
// its context is done.
type stuckConn struct {
	*enginetest.Conn
	stuck   string
	release chan struct{}

	mu       sync.Mutex
	gaveUp   []string // interaction IDs whose update's context ended first
	received []string // chat|status of every update, in order of arrival
}

func (c *stuckConn) Update(ctx context.Context, ev interactions.Event) error {
	c.mu.Lock()
	c.received = append(c.received, ev.Interaction.ChatID+"|"+string(ev.Resolution.Status))
	c.mu.Unlock()
	if ev.Interaction.ChatID == c.stuck {
		select {
		case <-c.release:
		case <-ctx.Done():
			c.mu.Lock()
			c.gaveUp = append(c.gaveUp, ev.Interaction.ID)
			c.mu.Unlock()
			return ctx.Err()
		}
	}
	return c.Conn.Update(ctx, ev)
}

func (c *stuckConn) receivedCopy() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.received...)
}

// ask starts a question in chat and returns once it is shown. The channel
// is closed when Request has returned, that is once the question's resolved
// event has been published.
func ask(t *testing.T, coord *interactions.Coordinator, conn *enginetest.Conn, chat string, n int) (interactions.Interaction, <-chan struct{}) {
	t.Helper()
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		_, _, _ = coord.Request(context.Background(), interactions.Interaction{
			ChatID: chat, Kind: interactions.KindQuestion, Question: "Which one?",
			Options: []interactions.Choice{{Label: "A"}, {Label: "B"}},
		})
	}()
	return conn.WaitShown(t, n), returned
}

func waitReturned(t *testing.T, returned <-chan struct{}) {
	t.Helper()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Request did not return after its question was settled")
	}
}

// A chat whose app is stuck on an update does not hold back the updates of
// other chats, and its own updates still arrive in order once it is free.
func TestASlowChatDoesNotDelayOtherChatsUpdates(t *testing.T) {
	coord := interactions.New()
	conn := &stuckConn{Conn: enginetest.NewConn("web"), stuck: "slow", release: make(chan struct{})}
	e := enginetest.New(&enginetest.ScriptAgent{}, coord)
	e.AddConnector(conn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	// The coordinator publishes a resolved event from the Request that
	// settles, not from Reply or Cancel, so events of two questions are
	// published in a known order only once the first Request has returned.
	// What this test holds the engine to is that it keeps that order.
	slow1, slow1Returned := ask(t, coord, conn.Conn, "slow", 1)
	require.NoError(t, ignoreOutcome(coord.Reply(slow1.ID, interactions.Reply{By: "u", Answers: []string{"A"}})))
	waitReturned(t, slow1Returned)
	slow2, _ := ask(t, coord, conn.Conn, "slow", 2)
	require.True(t, coord.Cancel(slow2.ID, "cancelled by /stop"))
	fast, _ := ask(t, coord, conn.Conn, "fast", 3)
	require.NoError(t, ignoreOutcome(coord.Reply(fast.ID, interactions.Reply{By: "u", Answers: []string{"B"}})))

	conn.WaitFor(t, "the fast chat's answer shown while the slow chat is stuck", func() bool {
		for _, u := range conn.Updates {
			if u.Interaction.ID == fast.ID && u.Resolution.Status == interactions.StatusAnswered {
				return true
			}
		}
		return false
	})
	close(conn.release)
	conn.WaitFor(t, "both slow updates", func() bool { return len(conn.Updates) == 3 })
	var slow []string
	for _, r := range conn.receivedCopy() {
		if r[:4] == "slow" {
			slow = append(slow, r)
		}
	}
	assert.Equal(t, []string{"slow|answered", "slow|cancelled"}, slow, "a chat's updates keep their order")
}

// At shutdown, an update the chat app never completes is given up once
// the close timeout is spent: the engine stops in bounded time instead of
// waiting out the 30 s an update may otherwise take.
func TestShutdownGivesUpAStuckUpdateAtTheCloseTimeout(t *testing.T) {
	coord := interactions.New()
	conn := &stuckConn{Conn: enginetest.NewConn("web"), stuck: "slow", release: make(chan struct{})}
	e := enginetest.New(&enginetest.ScriptAgent{}, coord, func(_ *engine.Deps, c *engine.Config) { c.CloseTimeout = 200 * time.Millisecond })
	e.AddConnector(conn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()

	q, _ := ask(t, coord, conn.Conn, "slow", 1)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(15 * time.Second): // far below the 30 s an unbounded update takes
		t.Fatal("engine did not stop: a stuck update held the shutdown")
	}
	conn.Lock()
	defer conn.Unlock()
	assert.Equal(t, []string{q.ID}, conn.gaveUp, "the interrupted question's update was attempted, then given up")
}

func ignoreOutcome(_ interactions.Outcome, err error) error { return err }
