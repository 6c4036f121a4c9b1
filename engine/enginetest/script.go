package enginetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
)

// ScriptAgent is an agent whose turns run a test's function; it records
// how sessions were opened, the prompts they got and the permission
// responses their turns got.
type ScriptAgent struct {
	// Info is what the agent says of itself (a default when empty).
	Info agent.About
	// Turn runs each turn; Echo when nil.
	Turn func(ctx context.Context, s *ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error)
	// NoImages: its sessions take no images (agent.ImageTaker), so the
	// engine saves pictures as files instead.
	NoImages bool
	// EngineRules: like the demo agent, it keeps no session rules and asks
	// the engine to apply them (agent.SessionRulesByEngine).
	EngineRules bool
	// IDPrefix names the sessions it makes up: <IDPrefix>-1, <IDPrefix>-2,
	// … ("sess" when empty).
	IDPrefix string
	// CancelOnInterrupt: the engine's interrupt also cancels the running
	// turn's ctx, as a real agent stops whatever call it is in.
	CancelOnInterrupt bool
	// OpenErr, when set, is asked before each Open: an error fails it
	// (a runner with no room, an agent that cannot start).
	OpenErr func(agent.SessionOptions) error

	mu        sync.Mutex
	opened    []agent.SessionOptions
	prompts   []string
	images    []agent.Image // every image the prompts carried, in order
	responses []agent.PermissionResponse
	seq       int
	live      []*ScriptSession
	changed   chan struct{}
}

// Echo is the turn of a ScriptAgent without one: it says and returns
// "echo: <prompt>".
func Echo(_ context.Context, _ *ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
	h.Text("echo: " + prompt)
	return agent.Result{Text: "echo: " + prompt, NumTurns: 1}, nil
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
	if a.OpenErr != nil {
		if err := a.OpenErr(o); err != nil {
			return nil, err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	id := o.ResumeID
	if id == "" && a.IDPrefix != "" {
		id = fmt.Sprintf("%s-%d", a.IDPrefix, a.seq)
	} else if id == "" {
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

// Images returns every image the prompts carried, in order.
func (a *ScriptAgent) Images() []agent.Image {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]agent.Image(nil), a.images...)
}

// Responses returns every permission response its turns got, in order.
func (a *ScriptAgent) Responses() []agent.PermissionResponse {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]agent.PermissionResponse(nil), a.responses...)
}

// WaitPrompts waits until the agent has got n prompts and returns them.
func (a *ScriptAgent) WaitPrompts(t testing.TB, n int) []string {
	t.Helper()
	a.waitFor(t, fmt.Sprintf("%d prompts", n), func() bool { return len(a.prompts) >= n })
	return a.Prompts()
}

// WaitResponses waits until the agent's turns have got n permission
// responses and returns them.
func (a *ScriptAgent) WaitResponses(t testing.TB, n int) []agent.PermissionResponse {
	t.Helper()
	a.waitFor(t, fmt.Sprintf("%d permission responses", n), func() bool { return len(a.responses) >= n })
	return a.Responses()
}

// waitFor polls cond (under the lock) until it holds or 10 s pass; the
// deadline only bounds waiting, it is not what is tested.
func (a *ScriptAgent) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		a.mu.Lock()
		ok, changed := cond(), a.changedLocked()
		a.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			a.mu.Lock()
			defer a.mu.Unlock()
			t.Fatalf("timed out waiting for %s; prompts=%q responses=%d", what, a.prompts, len(a.responses))
		}
	}
}

// note records under the lock and wakes a waiter.
func (a *ScriptAgent) note(f func()) {
	a.mu.Lock()
	f()
	changed := a.changedLocked()
	a.mu.Unlock()
	select {
	case changed <- struct{}{}:
	default:
	}
}

// changedLocked is the channel a change is announced on, made on first
// use; a.mu is held.
func (a *ScriptAgent) changedLocked() chan struct{} {
	if a.changed == nil {
		a.changed = make(chan struct{}, 1)
	}
	return a.changed
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
// agent's Turn with a handler that records the permission responses.
func (s *ScriptSession) Turn(ctx context.Context, p agent.Prompt, h agent.TurnHandler) (agent.Result, error) {
	prompt := p.Text
	s.a.note(func() {
		s.a.prompts = append(s.a.prompts, prompt)
		s.a.images = append(s.a.images, p.Images...)
	})
	select {
	case <-s.interrupt: // drop a stale interrupt
	default:
	}
	if s.a.CancelOnInterrupt {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-s.interrupt:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	turn := s.a.Turn
	if turn == nil {
		turn = Echo
	}
	res, err := turn(ctx, s, prompt, s.a.record(h))
	if res.SessionID == "" {
		res.SessionID = s.id
	}
	return res, err
}

// TakesImages implements agent.ImageTaker: false with NoImages.
func (s *ScriptSession) TakesImages() bool { return !s.a.NoImages }

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

// recorder is a turn handler that records the permission responses.
type recorder struct {
	agent.TurnHandler
	a *ScriptAgent
}

// Permission implements agent.TurnHandler.
func (r recorder) Permission(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	resp := r.TurnHandler.Permission(ctx, req)
	r.a.note(func() { r.a.responses = append(r.a.responses, resp) })
	return resp
}

// elicitRecorder is a recorder for a handler that also elicits.
type elicitRecorder struct {
	recorder
	agent.Elicitor
}

// record wraps h in a recorder that keeps what else h implements.
func (a *ScriptAgent) record(h agent.TurnHandler) agent.TurnHandler {
	r := recorder{TurnHandler: h, a: a}
	if el, ok := h.(agent.Elicitor); ok {
		return elicitRecorder{r, el}
	}
	return r
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
