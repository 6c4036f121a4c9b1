package enginetest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/leashd/leashd/engine/agent"
)

// ScriptAgent is an agent whose turns run a test's function; it records
// how sessions were opened and the prompts they got.
type ScriptAgent struct {
	// Info is what the agent says of itself (a default when empty).
	Info agent.About
	// Turn runs each turn.
	Turn func(ctx context.Context, s *ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error)
	// EngineRules: like the demo agent, it keeps no session rules and asks
	// the engine to apply them (agent.SessionRulesByEngine).
	EngineRules bool

	mu      sync.Mutex
	opened  []agent.SessionOptions
	prompts []string
	seq     int
	live    []*ScriptSession
}

// Name implements agent.Agent.
func (a *ScriptAgent) Name() string { return "script" }

// About implements agent.Agent.
func (a *ScriptAgent) About() agent.About {
	if a.Info.Label == "" {
		return agent.About{Label: "the script agent", Title: "script agent"}
	}
	return a.Info
}

// Ready implements agent.Agent.
func (a *ScriptAgent) Ready() error { return nil }

// SessionRulesByEngine implements agent.SessionRulesByEngine.
func (a *ScriptAgent) SessionRulesByEngine() bool { return a.EngineRules }

// Open implements agent.Agent: sessions are numbered sess-1, sess-2, …
// unless resumed.
func (a *ScriptAgent) Open(_ context.Context, o agent.SessionOptions) (agent.Session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	id := o.ResumeID
	if id == "" {
		id = fmt.Sprintf("sess-%d", a.seq)
	}
	a.opened = append(a.opened, o)
	s := &ScriptSession{a: a, id: id, WorkDir: o.WorkDir, done: make(chan struct{}), interrupt: make(chan struct{}, 1)}
	a.live = append(a.live, s)
	return s, nil
}

// Opened returns how each session was opened, in order.
func (a *ScriptAgent) Opened() []agent.SessionOptions {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]agent.SessionOptions(nil), a.opened...)
}

// Prompts returns every prompt turned, in order.
func (a *ScriptAgent) Prompts() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.prompts...)
}

// Sessions returns every session opened, in order.
func (a *ScriptAgent) Sessions() []*ScriptSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*ScriptSession(nil), a.live...)
}

// ScriptSession is a session of a ScriptAgent.
type ScriptSession struct {
	a         *ScriptAgent
	id        string
	WorkDir   string // SessionOptions.WorkDir
	done      chan struct{}
	interrupt chan struct{}

	mu     sync.Mutex
	closed bool
}

// Turn implements agent.Session: it records the prompt and runs the
// agent's Turn.
func (s *ScriptSession) Turn(ctx context.Context, prompt string, h agent.TurnHandler) (agent.Result, error) {
	s.a.mu.Lock()
	s.a.prompts = append(s.a.prompts, prompt)
	s.a.mu.Unlock()
	select {
	case <-s.interrupt: // drop a stale interrupt
	default:
	}
	res, err := s.a.Turn(ctx, s, prompt, h)
	if res.SessionID == "" {
		res.SessionID = s.id
	}
	return res, err
}

// Interrupt implements agent.Session: WaitInterrupt returns.
func (s *ScriptSession) Interrupt(context.Context) error {
	select {
	case s.interrupt <- struct{}{}:
	default:
	}
	return nil
}

// SetMode implements agent.Session; the script agent has no modes of its
// own.
func (s *ScriptSession) SetMode(context.Context, agent.Mode) error { return nil }

// Interrupted is sent to when the engine interrupts the running turn.
func (s *ScriptSession) Interrupted() <-chan struct{} { return s.interrupt }

// ID implements agent.Session.
func (s *ScriptSession) ID() string { return s.id }

// Done implements agent.Session.
func (s *ScriptSession) Done() <-chan struct{} { return s.done }

// Close implements agent.Session.
func (s *ScriptSession) Close(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	return nil
}

// Closed reports whether the session was closed.
func (s *ScriptSession) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// WaitInterrupt blocks a scripted turn until the engine interrupts it.
func WaitInterrupt(ctx context.Context, s *ScriptSession) (agent.Result, error) {
	select {
	case <-s.interrupt:
		return agent.Result{Text: "interrupted", Subtype: "error_during_execution", IsError: true}, nil
	case <-ctx.Done():
		return agent.Result{}, ctx.Err()
	case <-s.done:
		return agent.Result{}, errors.New("closed")
	}
}
