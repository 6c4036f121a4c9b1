package claude

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// session is one CLI process. It implements agent.Session.
type session struct {
	a    *Agent
	log  *slog.Logger
	proc sandbox.Process
	out  io.ReadCloser // the CLI's stdout
	errs *tailBuffer
	// errsPipe is the read end of its stderr, copied into errs until
	// errsDone.
	errsPipe io.ReadCloser
	errsDone chan struct{}
	start    time.Time

	writeMu     sync.Mutex
	stdin       io.WriteCloser
	stdinClosed bool

	// ctx is cancelled when the process has ended; done is closed after
	// that, once its exit status is known.
	ctx      context.Context
	cancel   context.CancelCauseFunc
	done     chan struct{}
	readDone chan struct{}

	turnMu sync.Mutex // one Turn at a time

	// Used by the reader goroutine only: the API message being streamed
	// and the last one whose text went out as deltas.
	curMsg, streamedMsg string

	mu      sync.Mutex
	id      string
	seq     int
	waiting map[string]chan controlResponse // our control requests by request_id
	perms   map[string]*perm                // the CLI's can_use_tool requests by request_id
	turn    *turnState
	// stateEvents is set once the CLI sent session_state_changed: from
	// then on a turn ends at "idle", not at its result.
	stateEvents bool
	notice      func(agent.Notice)
	exitErr     error
	closedBy    string // why leashd ended the process, if it did

	// What the reader handled of stdout, for an agent that may outlive
	// leashd (adopt.go); under mu, lineAt by the reader only.
	outHandled, outAcked, lineAt int64
	letGoOf                      bool      // Detach: no more acks (what it did not answer stays unanswered)
	readOnce                     sync.Once // an adopted session reads from its first turn on
	detachOnce                   sync.Once // Close lets go of the process once
}

// ErrRequestWithdrawn is the cause (context.Cause) of a permission
// request's context when the CLI withdrew the request
// (control_cancel_request), e.g. after an interrupt.
var ErrRequestWithdrawn = fmt.Errorf("claude withdrew the permission request: %w", agent.ErrRequestWithdrawn)

// errTurnEnded is the cause when the turn that asked has ended.
var errTurnEnded = errors.New("the turn ended")

// perm is a can_use_tool request being decided.
type perm struct {
	cancel    context.CancelCauseFunc
	withdrawn bool  // the CLI sent control_cancel_request: do not answer
	at        int64 // where its line starts in stdout: acks stop there until it is answered (adopt.go)
}

// turnState is the running turn.
type turnState struct {
	h        agent.TurnHandler
	ctx      context.Context // cancelled when the turn ends
	result   chan agent.Result
	idle     chan struct{} // session_state_changed "idle" arrived
	finished chan struct{}
	limit    *agent.UsageLimit // a usage limit reported during the turn (s.mu)
}

// start launches the process and its reader; the handshake is separate.
func start(a *Agent, o agent.SessionOptions) (*session, error) {
	// The CLI says when a turn is really over (session_state_changed
	// idle, after background agents finished) only when asked to.
	env := append([]string{"CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS=1"}, a.env...)
	args := a.argsFor(o)
	if len(o.MCPServers) > 0 {
		cfg, mcpEnv, err := mcpConfigArg(o.MCPServers)
		if err != nil {
			return nil, err
		}
		args = append(args, "--mcp-config", cfg)
		env = append(env, mcpEnv...)
	}
	proc, err := a.sandbox.Start(sandbox.Spec{Path: a.path, Args: args, Dir: o.WorkDir, Env: env, Name: o.ChatID})
	if err != nil {
		return nil, err
	}
	s := newSession(a, o, proc)
	s.log.Debug("claude started", "path", a.path, "sandbox", a.sandbox.Name(), "dir", o.WorkDir)
	s.startReading()
	go s.wait()
	return s, nil
}

// newSession is the session of a started (or adopted) process; its
// readers are not running yet.
func newSession(a *Agent, o agent.SessionOptions, proc sandbox.Process) *session {
	errs := &tailBuffer{max: 8 << 10}
	errsDone := make(chan struct{})
	go func() {
		defer close(errsDone)
		_, _ = io.Copy(errs, proc.Stderr())
	}()
	ctx, cancel := context.WithCancelCause(context.Background())
	log := a.log.With("chat", o.ChatID, "pid", proc.ID())
	s := &session{
		a: a, log: log, proc: proc, out: proc.Stdout(), errs: errs, start: time.Now(),
		stdin: proc.Stdin(), ctx: ctx, cancel: cancel,
		done: make(chan struct{}), readDone: make(chan struct{}), errsDone: errsDone, errsPipe: proc.Stderr(),
		id: o.ResumeID, waiting: map[string]chan controlResponse{}, perms: map[string]*perm{},
		notice: o.Notice,
	}
	return s
}

// initialize performs the handshake.
func (s *session) initialize(ctx context.Context) error {
	_, err := s.control(ctx, map[string]any{"subtype": subtypeInitialize, "hooks": nil})
	if err == nil {
		s.log.Debug("claude initialized", "after", time.Since(s.start))
	}
	return err
}

// wait reaps the process and ends the session.
func (s *session) wait() {
	err := s.proc.Wait()
	s.startReading() // an adopted one that never had a turn: drain it
	if detached(err) {
		s.letGo(err)
		return
	}
	// The tools it started (a background dev server, a shell) end with it.
	_ = s.proc.Signal(syscall.SIGTERM)
	// Let the readers take what the process printed last.
	timeout := time.NewTimer(2 * time.Second)
	defer timeout.Stop()
	for _, ch := range []chan struct{}{s.readDone, s.errsDone} {
		select {
		case <-ch:
		case <-timeout.C:
			// Something in its process group still holds the pipes open.
			_ = s.proc.Signal(syscall.SIGKILL)
			s.out.Close()
			s.errsPipe.Close()
			<-s.readDone
			<-s.errsDone
		}
	}
	s.errsPipe.Close()
	// Nothing it started outlives the session.
	s.proc.End(2 * time.Second)
	s.mu.Lock()
	s.exitErr = err
	closedBy := s.closedBy
	s.mu.Unlock()
	if err != nil && closedBy == "" {
		s.log.Warn("claude exited unexpectedly", "err", err, "stderr", s.errs.tail(600))
	}
	s.cancel(agent.ErrSessionEnded)
	s.log.Debug("claude exited", "err", err, "after", time.Since(s.start))
	close(s.done)
}

// letGo ends the session of a process let go of at shutdown: it still
// runs, on its runner, so nothing is signalled or ended.
func (s *session) letGo(err error) {
	<-s.readDone
	<-s.errsDone
	s.mu.Lock()
	s.exitErr = err
	s.mu.Unlock()
	s.cancel(agent.ErrDetached)
	close(s.done)
}

// endedErr describes how the process ended, with the end of its stderr.
func (s *session) endedErr() error {
	select {
	case <-s.done:
	case <-time.After(5 * time.Second): // the exit status is moments away
	}
	s.mu.Lock()
	exitErr, closedBy := s.exitErr, s.closedBy
	s.mu.Unlock()
	if detached(exitErr) {
		return agent.ErrDetached
	}
	var b strings.Builder
	b.WriteString("claude exited")
	switch {
	case closedBy != "":
		b.WriteString(" (" + closedBy + ")")
	case exitErr != nil:
		b.WriteString(" (" + exitErr.Error() + ")")
	default:
		b.WriteString(" (exit status 0)")
	}
	if t := s.errs.tail(600); t != "" {
		b.WriteString("; its last output on stderr: " + t)
	}
	return fmt.Errorf("%w: %s", agent.ErrSessionEnded, b.String())
}

// Turn implements agent.Session.
func (s *session) Turn(ctx context.Context, prompt agent.Prompt, h agent.TurnHandler) (agent.Result, error) {
	return s.runTurn(ctx, &prompt, h)
}

// runTurn runs a turn: sending prompt, or (nil) continuing the one an
// adopted CLI is in.
func (s *session) runTurn(ctx context.Context, prompt *agent.Prompt, h agent.TurnHandler) (agent.Result, error) {
	s.turnMu.Lock()
	defer s.turnMu.Unlock()
	if s.ctx.Err() != nil {
		return agent.Result{}, s.endedErr()
	}
	tctx, tcancelCause := context.WithCancelCause(s.ctx)
	tcancel := func() { tcancelCause(errTurnEnded) }
	ts := &turnState{h: h, ctx: tctx, result: make(chan agent.Result, 1), idle: make(chan struct{}, 1), finished: make(chan struct{})}
	s.mu.Lock()
	s.turn = ts
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.turn = nil
		s.mu.Unlock()
		tcancel()
		close(ts.finished)
	}()

	s.startReading()
	if prompt != nil {
		err := s.send(outUser{Type: typeUser, Message: outMessage{Role: "user", Content: userContent(*prompt)}, SessionID: "default"})
		if err != nil {
			return agent.Result{}, err
		}
	}
	select {
	case r := <-ts.result:
		return s.awaitIdle(ctx, ts, r), nil
	case <-s.done:
		select {
		case r := <-ts.result:
			return r, nil
		default:
		}
		return agent.Result{}, s.endedErr()
	case <-ctx.Done():
	}
	// The caller gave up: withdraw pending questions, stop the CLI's turn
	// and wait for its result so that the next turn starts clean. A CLI
	// that does not stop is killed — unless it was let go of, to run on.
	tcancel()
	if s.isLetGo() {
		return agent.Result{}, agent.ErrDetached
	}
	ictx, icancel := context.WithTimeout(context.Background(), s.a.closeTimeout)
	defer icancel()
	if err := s.interrupt(ictx); err != nil && s.ctx.Err() == nil {
		s.log.Warn("interrupting claude after the turn was abandoned", "err", err)
	}
	select {
	case <-ts.result:
	case <-s.done:
	case <-ictx.Done():
		s.log.Warn("claude did not end its turn after an interrupt; killing it")
		s.kill()
	}
	return agent.Result{}, fmt.Errorf("turn abandoned: %w", context.Cause(ctx))
}

// awaitIdle returns r once the turn is over: at once for a CLI that does
// not send session_state_changed (before 2.1.3xx), else when it says
// "idle" — after the result, background agents may still ask for
// permissions, which need the turn. A CLI that never says it is let go
// after the close timeout.
func (s *session) awaitIdle(ctx context.Context, ts *turnState, r agent.Result) agent.Result {
	s.mu.Lock()
	events := s.stateEvents
	s.mu.Unlock()
	if !events {
		return r
	}
	t := time.NewTimer(s.a.closeTimeout)
	defer t.Stop()
	select {
	case <-ts.idle:
	case <-s.done:
	case <-ctx.Done():
	case <-t.C:
		s.log.Warn("claude sent its result but never said it was idle; ending the turn", "after", s.a.closeTimeout)
	}
	return r
}

// Interrupt implements agent.Session.
func (s *session) Interrupt(ctx context.Context) error { return s.interrupt(ctx) }

func (s *session) interrupt(ctx context.Context) error {
	_, err := s.control(ctx, map[string]any{"subtype": subtypeInterrupt})
	return err
}

// SetMode implements agent.Session.
func (s *session) SetMode(ctx context.Context, m agent.Mode) error {
	_, err := s.control(ctx, map[string]any{"subtype": subtypeSetMode, "mode": string(m)})
	return err
}

// ID implements agent.Session.
func (s *session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Done implements agent.Session.
func (s *session) Done() <-chan struct{} { return s.done }

// Close implements agent.Session: it lets a running turn finish (up to the
// close timeout), closes stdin, waits, then sends SIGTERM, waits, then
// SIGKILL. Once ctx is done it kills at once.
func (s *session) Close(ctx context.Context) error {
	if s.isLetGo() {
		return s.letGoNow(ctx)
	}
	step := s.a.closeTimeout
	wait := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
		}
		t := time.NewTimer(step)
		defer t.Stop()
		select {
		case <-ch:
			return true
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	if ts := s.currentTurn(); ts != nil {
		wait(ts.finished) // closing stdin would deny its pending requests
	}
	s.markClosed("closed by leashd")
	s.closeStdin()
	if wait(s.done) {
		return nil
	}
	if ctx.Err() == nil {
		s.markClosed("stopped by leashd with SIGTERM")
		_ = s.proc.Signal(syscall.SIGTERM)
		if wait(s.done) {
			return nil
		}
	}
	s.kill()
	<-s.done
	return fmt.Errorf("claude (%s) did not exit after its input was closed and SIGTERM; killed", s.proc.ID())
}

func (s *session) closeStdin() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if !s.stdinClosed {
		s.stdinClosed = true
		_ = s.stdin.Close()
	}
}

// markClosed records leashd's latest step in ending the process, so that
// its exit is not reported as unexpected.
func (s *session) markClosed(why string) {
	s.mu.Lock()
	s.closedBy = why
	s.mu.Unlock()
}

// kill ends the process group at once.
func (s *session) kill() {
	select {
	case <-s.done:
		return
	default:
	}
	if s.isLetGo() {
		return // it runs on, for the next leashd
	}
	s.markClosed("killed by leashd")
	_ = s.proc.Signal(syscall.SIGKILL)
}
