package interactions_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// wait bounds every blocking step of a test. Tests never assert on elapsed
// time; this only turns a hang into a clear failure.
const wait = 10 * time.Second

// fakePresenter is the chat a person looks at: it records every interaction
// it was asked to show, in order, gives each a message reference, and hands
// it to the test (Next) so the test can tap. OnPresent, when set, runs inside
// Present (a fast tap, a slow send, a failing send).
type fakePresenter struct {
	OnPresent func(ctx context.Context, it *interactions.Interaction) (string, error)

	mu    sync.Mutex
	shown []interactions.Interaction
	ch    chan interactions.Interaction
}

func newPresenter() *fakePresenter {
	return &fakePresenter{ch: make(chan interactions.Interaction, 4096)}
}

func (f *fakePresenter) Present(ctx context.Context, it *interactions.Interaction) (string, error) {
	f.mu.Lock()
	f.shown = append(f.shown, *it)
	f.mu.Unlock()
	if f.OnPresent != nil {
		return f.OnPresent(ctx, it)
	}
	f.ch <- *it
	return refOf(*it), nil
}

// refOf is the message reference the fake presenter gives an interaction.
func refOf(it interactions.Interaction) string { return "msg-" + it.ID }

// Shown returns what the person has been shown so far, in order.
func (f *fakePresenter) Shown() []interactions.Interaction {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]interactions.Interaction(nil), f.shown...)
}

// Next waits for the next interaction shown (when OnPresent is not set).
func (f *fakePresenter) Next(t testing.TB) interactions.Interaction {
	t.Helper()
	select {
	case it := <-f.ch:
		return it
	case <-time.After(wait):
		t.Fatal("nothing was shown to the user")
		return interactions.Interaction{}
	}
}

// NothingShown asserts that nothing more is shown right now (after letting
// other goroutines run), e.g. that a second question waits for the first.
func (f *fakePresenter) NothingShown(t testing.TB) {
	t.Helper()
	select {
	case it := <-f.ch:
		t.Fatalf("unexpected interaction shown: %+v", it)
	case <-time.After(20 * time.Millisecond):
	}
}

// result is what a Request returned.
type result struct {
	it  interactions.Interaction
	res interactions.Resolution
	err error
}

// request runs c.Request in the background; receive from the channel for
// its result.
func request(ctx context.Context, c *interactions.Coordinator, it interactions.Interaction) <-chan result {
	ch := make(chan result, 1)
	go func() {
		it, res, err := c.Request(ctx, it)
		ch <- result{it, res, err}
	}()
	return ch
}

// await receives a background result or fails the test.
func await[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatal("timed out waiting for a result")
		var zero T
		return zero
	}
}

// notYet asserts a background result has not arrived (the request still
// waits).
func notYet[T any](t testing.TB, ch <-chan T) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("request finished early: %+v", v)
	case <-time.After(20 * time.Millisecond):
	}
}

// newCoord returns a coordinator showing through a fresh fake presenter and
// interrupts it when the test ends, so no request outlives its test.
func newCoord(t testing.TB, opts ...interactions.Opt) (*interactions.Coordinator, *fakePresenter) {
	t.Helper()
	p := newPresenter()
	c := interactions.New(append([]interactions.Opt{interactions.WithPresenter(p)}, opts...)...)
	t.Cleanup(func() { c.Interrupt("test over") })
	return c, p
}

func question(chat, q string, labels ...string) interactions.Interaction {
	it := interactions.Interaction{ChatID: chat, Kind: interactions.KindQuestion, Question: q}
	for _, l := range labels {
		it.Options = append(it.Options, interactions.Choice{Label: l, Description: "about " + l})
	}
	return it
}

func multi(chat, q string, labels ...string) interactions.Interaction {
	it := question(chat, q, labels...)
	it.MultiSelect = true
	return it
}

func planReview(chat string) interactions.Interaction {
	return interactions.Interaction{ChatID: chat, Kind: interactions.KindPlanReview, Plan: "1. write tests\n2. fix bugs"}
}

func toolApproval(chat string) interactions.Interaction {
	return interactions.Interaction{ChatID: chat, Kind: interactions.KindToolApproval, ToolName: "Bash",
		ToolInput: []byte(`{"command":"rm -rf build"}`), ToolSummary: "rm -rf build"}
}

// eventsFor waits until the subscription has delivered n events (it does
// not stop it).
func eventsFor(t testing.TB, ch <-chan interactions.Event, n int) []interactions.Event {
	t.Helper()
	var out []interactions.Event
	for len(out) < n {
		select {
		case e, ok := <-ch:
			require.True(t, ok, "subscription closed after %d events", len(out))
			out = append(out, e)
		case <-time.After(wait):
			t.Fatalf("got %d events, want %d: %+v", len(out), n, out)
		}
	}
	return out
}

// syncBuf is a log destination safe for concurrent writes.
type syncBuf struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}
