package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// recConn is a connector that records what people would see.
type recConn struct {
	name string

	mu      sync.Mutex
	said    []string // chat|text
	stream  []string
	done    []connectors.Summary
	shown   []interactions.Interaction
	updates []interactions.Event
	changed chan struct{}
}

func newRecConn(name string) *recConn {
	return &recConn{name: name, changed: make(chan struct{}, 1)}
}

func (r *recConn) Name() string { return r.name }

// IsGroupChat implements connectors.GroupTeller: chats named group:… are
// shared by several people.
func (r *recConn) IsGroupChat(chatID string) bool { return strings.HasPrefix(chatID, "group:") }
func (r *recConn) Run(ctx context.Context, _ connectors.Handler) error {
	<-ctx.Done()
	return nil
}
func (r *recConn) note(f func()) {
	r.mu.Lock()
	f()
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}
func (r *recConn) Say(_ context.Context, chatID, text string) error {
	r.note(func() { r.said = append(r.said, chatID+"|"+text) })
	return nil
}
func (r *recConn) StreamText(_ context.Context, chatID, text string) error {
	r.note(func() { r.stream = append(r.stream, chatID+"|"+text) })
	return nil
}
func (r *recConn) Done(_ context.Context, chatID string, s connectors.Summary) error {
	r.note(func() { r.done = append(r.done, s) })
	return nil
}
func (r *recConn) Present(_ context.Context, it *interactions.Interaction) (string, error) {
	r.note(func() { r.shown = append(r.shown, *it) })
	return "msg-" + it.ID, nil
}
func (r *recConn) Update(_ context.Context, ev interactions.Event) error {
	r.note(func() { r.updates = append(r.updates, ev) })
	return nil
}

// waitFor polls cond (under the lock) until it holds or the deadline
// passes; deadlines only bound waiting, they are not what is tested.
func (r *recConn) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("timed out waiting for %s; said=%q shown=%d stream=%q", what, r.said, len(r.shown), r.stream)
		}
	}
}

func (r *recConn) waitSaid(t *testing.T, substr string) {
	t.Helper()
	r.waitFor(t, "a message containing "+substr, func() bool {
		for _, s := range r.said {
			if strings.Contains(s, substr) {
				return true
			}
		}
		return false
	})
}

// waitShown waits for the n-th (1-based) interaction shown and returns it.
func (r *recConn) waitShown(t *testing.T, n int) interactions.Interaction {
	t.Helper()
	r.waitFor(t, fmt.Sprintf("interaction #%d", n), func() bool { return len(r.shown) >= n })
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.shown[n-1]
}

func (r *recConn) saidText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.said, "\n")
}

// scriptAgent is an agent whose turns run a test's function; it records
// how sessions were opened and what was done to them.
type scriptAgent struct {
	// about is what the agent says of itself (a default when empty).
	about agent.About
	turn  func(ctx context.Context, s *scriptSession, prompt string, h agent.TurnHandler) (agent.Result, error)
	// engineRules: like the demo agent, it keeps no session rules and asks
	// the engine to apply them (engine.SessionRulesByEngine).
	engineRules bool

	mu      sync.Mutex
	opened  []agent.SessionOptions
	prompts []string
	seq     int
	live    []*scriptSession
}

func (a *scriptAgent) Name() string { return "script" }

func (a *scriptAgent) SessionRulesByEngine() bool { return a.engineRules }

func (a *scriptAgent) Open(_ context.Context, o agent.SessionOptions) (agent.Session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	id := o.ResumeID
	if id == "" {
		id = fmt.Sprintf("sess-%d", a.seq)
	}
	a.opened = append(a.opened, o)
	s := &scriptSession{a: a, id: id, mode: o.Mode, workDir: o.WorkDir, done: make(chan struct{}), interrupt: make(chan struct{}, 1)}
	a.live = append(a.live, s)
	return s, nil
}

func (a *scriptAgent) openedCopy() []agent.SessionOptions {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]agent.SessionOptions(nil), a.opened...)
}

func (a *scriptAgent) promptsCopy() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.prompts...)
}

type scriptSession struct {
	a         *scriptAgent
	id        string
	workDir   string // SessionOptions.WorkDir
	done      chan struct{}
	interrupt chan struct{}

	mu          sync.Mutex
	mode        agent.Mode
	modes       []agent.Mode
	interrupted int
	closed      bool
}

func (s *scriptSession) Turn(ctx context.Context, prompt string, h agent.TurnHandler) (agent.Result, error) {
	s.a.mu.Lock()
	s.a.prompts = append(s.a.prompts, prompt)
	s.a.mu.Unlock()
	select {
	case <-s.interrupt: // drop a stale interrupt
	default:
	}
	res, err := s.a.turn(ctx, s, prompt, h)
	if res.SessionID == "" {
		res.SessionID = s.id
	}
	return res, err
}

func (s *scriptSession) Interrupt(context.Context) error {
	s.mu.Lock()
	s.interrupted++
	s.mu.Unlock()
	select {
	case s.interrupt <- struct{}{}:
	default:
	}
	return nil
}

func (s *scriptSession) SetMode(_ context.Context, m agent.Mode) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
	s.modes = append(s.modes, m)
	return nil
}

func (s *scriptSession) ID() string            { return s.id }
func (s *scriptSession) Done() <-chan struct{} { return s.done }
func (s *scriptSession) Close(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	return nil
}

func (s *scriptSession) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// start runs an engine with one recording connector named "web" (it owns
// every chat) until the test ends.
func start(t *testing.T, ag agent.Agent, coordOpts []interactions.Opt, opts ...enginetest.Setup) (*engine.Engine, *recConn, *interactions.Coordinator) {
	t.Helper()
	coord := interactions.New(coordOpts...)
	e := enginetest.New(ag, coord, opts...)
	conn := newRecConn("web")
	e.AddConnector(conn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Error("engine did not stop")
		}
	})
	return e, conn, coord
}

func send(t *testing.T, e *engine.Engine, chatID, text string) connectors.Route {
	t.Helper()
	r, err := e.HandleMessage(context.Background(), connectors.Incoming{ChatID: chatID, UserID: "u1", Text: text})
	require.NoError(t, err)
	return r
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// waitInterrupt blocks a scripted turn until the engine interrupts it.
func waitInterrupt(ctx context.Context, s *scriptSession) (agent.Result, error) {
	select {
	case <-s.interrupt:
		return agent.Result{Text: "interrupted", Subtype: "error_during_execution", IsError: true}, nil
	case <-ctx.Done():
		return agent.Result{}, ctx.Err()
	case <-s.done:
		return agent.Result{}, errors.New("closed")
	}
}

func (a *scriptAgent) About() agent.About {
	if a.about.Label == "" {
		return agent.About{Label: "the script agent", Title: "script agent"}
	}
	return a.about
}

func (a *scriptAgent) Ready() error { return nil }
