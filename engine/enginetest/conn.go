package enginetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Conn is a connector that records what people would see. Its fields are
// guarded by its lock (Lock, Unlock); WaitFor's condition runs under it.
type Conn struct {
	name string
	// WaitLimit bounds each wait (10 s when zero).
	WaitLimit time.Duration
	// GroupChats: every chat is shared by several people, not only those
	// named group:….
	GroupChats bool

	sync.Mutex
	Said      []string // chat|text
	Streamed  []string // chat|text
	Told      []string // chat|text of Said and Streamed together, in order
	Summaries []connectors.Summary
	Shown     []interactions.Interaction
	Updates   []interactions.Event
	running   bool // Run was called
	changed   chan struct{}
}

// NewConn returns a recording connector with the given name.
func NewConn(name string) *Conn {
	return &Conn{name: name, changed: make(chan struct{}, 1)}
}

// Name implements connectors.Connector.
func (r *Conn) Name() string { return r.name }

// IsGroupChat implements connectors.GroupTeller: chats named group:… (or
// every chat, with GroupChats) are shared by several people.
func (r *Conn) IsGroupChat(chatID string) bool {
	return r.GroupChats || strings.HasPrefix(chatID, "group:")
}

// Entry splits an entry of Said, Streamed or Told into its chat and text.
func Entry(e string) (chatID, text string) {
	chatID, text, _ = strings.Cut(e, "|")
	return chatID, text
}

// Texts is the texts of entries of Said, Streamed or Told, without their chats.
func Texts(entries []string) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		_, out[i] = Entry(e)
	}
	return out
}

// Run implements connectors.Connector: it waits for ctx.
func (r *Conn) Run(ctx context.Context, _ connectors.Handler) error {
	r.note(func() { r.running = true })
	<-ctx.Done()
	return nil
}

// Running reports whether the engine has run the connector.
func (r *Conn) Running() bool {
	r.Lock()
	defer r.Unlock()
	return r.running
}

// WaitRunning waits until the engine runs the connector.
func (r *Conn) WaitRunning(t testing.TB) {
	t.Helper()
	r.WaitFor(t, "the connector running", func() bool { return r.running })
}

// note records under the lock and wakes a waiter.
func (r *Conn) note(f func()) {
	r.Lock()
	f()
	r.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// Say implements connectors.Connector.
func (r *Conn) Say(_ context.Context, chatID, text string) error {
	r.note(func() { r.Said, r.Told = append(r.Said, chatID+"|"+text), append(r.Told, chatID+"|"+text) })
	return nil
}

// StreamText implements connectors.Connector.
func (r *Conn) StreamText(_ context.Context, chatID, text string) error {
	r.note(func() { r.Streamed, r.Told = append(r.Streamed, chatID+"|"+text), append(r.Told, chatID+"|"+text) })
	return nil
}

// Done implements connectors.Connector.
func (r *Conn) Done(_ context.Context, _ string, s connectors.Summary) error {
	r.note(func() { r.Summaries = append(r.Summaries, s) })
	return nil
}

// Present implements interactions.Presenter; the message ref is "msg-<ID>".
func (r *Conn) Present(_ context.Context, it *interactions.Interaction) (string, error) {
	r.note(func() { r.Shown = append(r.Shown, *it) })
	return "msg-" + it.ID, nil
}

// Update implements connectors.Connector.
func (r *Conn) Update(_ context.Context, ev interactions.Event) error {
	r.note(func() { r.Updates = append(r.Updates, ev) })
	return nil
}

// WaitFor polls cond (under the lock) until it holds or WaitLimit passes;
// the deadline only bounds waiting, it is not what is tested.
func (r *Conn) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	limit := r.WaitLimit
	if limit == 0 {
		limit = 10 * time.Second
	}
	deadline := time.After(limit)
	for {
		r.Lock()
		ok := cond()
		r.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			r.Lock()
			defer r.Unlock()
			t.Fatalf("timed out waiting for %s; said=%q shown=%d stream=%q done=%d", what, r.Said, len(r.Shown), r.Streamed, len(r.Summaries))
		}
	}
}

// WaitSaid waits for a message containing substr.
func (r *Conn) WaitSaid(t testing.TB, substr string) {
	t.Helper()
	r.WaitFor(t, "a message containing "+substr, func() bool {
		for _, s := range r.Said {
			if strings.Contains(s, substr) {
				return true
			}
		}
		return false
	})
}

// WaitShown waits for the n-th (1-based) interaction shown and returns it.
func (r *Conn) WaitShown(t testing.TB, n int) interactions.Interaction {
	t.Helper()
	r.WaitFor(t, fmt.Sprintf("interaction #%d", n), func() bool { return len(r.Shown) >= n })
	r.Lock()
	defer r.Unlock()
	return r.Shown[n-1]
}

// WaitResolved waits for the update that resolves interaction id and
// returns it.
func (r *Conn) WaitResolved(t testing.TB, id string) interactions.Event {
	t.Helper()
	var ev interactions.Event
	r.WaitFor(t, "the resolved update of "+id, func() bool {
		for _, u := range r.Updates {
			if u.Type == interactions.EventResolved && u.Interaction.ID == id {
				ev = u
				return true
			}
		}
		return false
	})
	return ev
}

// ShownCount is how many interactions were shown.
func (r *Conn) ShownCount() int {
	r.Lock()
	defer r.Unlock()
	return len(r.Shown)
}

// SaidText is every message said, one per line.
func (r *Conn) SaidText() string {
	r.Lock()
	defer r.Unlock()
	return strings.Join(r.Said, "\n")
}

// WaitDone waits until n turns have ended with a summary and returns the
// n-th.
func (r *Conn) WaitDone(t testing.TB, n int) connectors.Summary {
	t.Helper()
	r.WaitFor(t, fmt.Sprintf("%d turn summaries", n), func() bool { return len(r.Summaries) >= n })
	r.Lock()
	defer r.Unlock()
	return r.Summaries[n-1]
}
