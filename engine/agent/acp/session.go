package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leashd/leashd/engine/agent"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// session is one agent process with one ACP session in it.
type session struct {
	a      *Agent
	proc   sandbox.Process
	stdin  io.WriteCloser
	conn   *sdk.Connection
	log    *slog.Logger
	stderr tail
	done   chan struct{}

	turnMu sync.Mutex // one turn at a time

	mu        sync.Mutex
	id        string
	canLoad   bool
	canResume bool
	images    bool // the agent takes images in prompts
	modes     []sdk.SessionMode
	current   string        // the agent's current mode ID
	modeMoved chan struct{} // closed (and replaced) when current changes
	note      string        // said at the start of the next turn
	h         agent.TurnHandler
	text      strings.Builder // this turn's agent text
	plan      string          // the last plan checklist shown
	replaying bool            // session/load replays history: not shown
	stopped   bool            // Interrupt was called during this turn
	stopping  chan struct{}   // closed by Interrupt during this turn
	stopOnce  *sync.Once
	feedback  []string // people's reasons the agent has not read yet
	urls      map[string]*urlWait
	tools     map[string]string // tool call ID -> tool name
	exitErr   error
	closing   string
	lostWhy   string // why leashd gave up the connection (pump)
	notice    func(agent.Notice)
}

// Interrupt implements agent.Session: session/cancel. The agent answers
// the running session/prompt with stopReason "cancelled"; the engine has
// already cancelled what was pending, so every open request is answered
// "cancelled".
func (s *session) Interrupt(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true
	id := s.id
	stopping, once := s.stopping, s.stopOnce
	s.mu.Unlock()
	if s.ended() {
		return s.endedErr()
	}
	// An agent that reads nothing blocks the write: the turn is stopped
	// anyway after the close timeout (prompt).
	sent := make(chan error, 1)
	go func() {
		sent <- s.conn.SendNotification(ctx, sdk.AgentMethodSessionCancel, sdk.CancelNotification{SessionId: sdk.SessionId(id)})
	}()
	t := time.NewTimer(s.a.closeTimeout)
	defer t.Stop()
	var err error
	select {
	case err = <-sent:
	case <-t.C:
		err = fmt.Errorf("the agent did not take session/cancel within %s", s.a.closeTimeout)
	}
	if stopping != nil {
		once.Do(func() { close(stopping) })
	}
	return err
}

// cancelGrace is how long a permission that ended unanswered waits before
// it is answered "cancelled": /stop and /clear cancel what is pending just
// before they interrupt the turn, and the agent must read session/cancel
// first, or it takes the cancelled answer for a failed tool and goes on.
const cancelGrace = 250 * time.Millisecond

// awaitStop waits for Interrupt so that the cancelled answer never
// overtakes its session/cancel on a busy machine: when the engine says a
// stop follows (StopFollows), until session/cancel is written or the
// session ends, at most the close timeout; otherwise at most cancelGrace
// for an Interrupt to begin, then until its write.
func (s *session) awaitStop(follows bool) {
	s.mu.Lock()
	ch, stopped := s.stopping, s.stopped
	s.mu.Unlock()
	if ch == nil {
		return
	}
	if follows {
		s.waitStopping(ch, s.a.closeTimeout)
		return
	}
	if !stopped && !s.waitStopping(ch, cancelGrace) {
		s.mu.Lock()
		stopped = s.stopped
		s.mu.Unlock()
		if !stopped {
			return // no Interrupt came
		}
	}
	if stopped {
		s.waitStopping(ch, s.a.closeTimeout) // its session/cancel goes first
	}
}

// waitStopping waits for ch (Interrupt wrote session/cancel) or the end of
// the session, at most d; false when d passed.
func (s *session) waitStopping(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-s.done:
	case <-t.C:
		return false
	}
	return true
}

// ID implements agent.Session.
func (s *session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Done implements agent.Session.
func (s *session) Done() <-chan struct{} { return s.done }

// lost reports whether the agent's side of the connection is gone, waiting
// a little for the process itself to be reaped so that the error can say
// how it ended.
func (s *session) lost() bool {
	select {
	case <-s.conn.Done():
	default:
		return s.ended()
	}
	t := time.NewTimer(s.a.closeTimeout)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
	}
	return true
}

func (s *session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// endedErr says why the process ended, with the end of its stderr.
func (s *session) endedErr() error {
	<-s.done
	s.mu.Lock()
	why := s.closing
	exit := s.exitErr
	s.mu.Unlock()
	if why == "" {
		why = "the agent exited"
		if exit != nil {
			why += " (" + exit.Error() + ")"
		}
	}
	if t := s.stderr.String(); t != "" && s.closing == "" {
		why += ": " + lastLines(t, 3)
	}
	return fmt.Errorf("%w: %s", agent.ErrSessionEnded, why)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// Close implements agent.Session: close stdin, then SIGTERM, then SIGKILL
// the process group, each step after the close timeout.
func (s *session) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closing == "" {
		s.closing = "closed by leashd"
	}
	s.mu.Unlock()
	wait := func() bool {
		t := time.NewTimer(s.a.closeTimeout)
		defer t.Stop()
		select {
		case <-s.done:
			return true
		case <-t.C:
		case <-ctx.Done():
		}
		return false
	}
	_ = s.stdin.Close()
	if wait() {
		return nil
	}
	if s.proc == nil {
		<-s.done
		return nil
	}
	_ = s.proc.Signal(syscall.SIGTERM)
	if wait() {
		return nil
	}
	_ = s.proc.Signal(syscall.SIGKILL)
	<-s.done
	return nil
}

// Turn implements agent.Session: session/prompt, streaming the agent's
// updates to h. Reasons people gave when rejecting (which ACP v1 has no
// field for) are sent as a follow-up prompt when the turn ends, or, if it
// was stopped, before the next prompt.
func (s *session) Turn(ctx context.Context, p agent.Prompt, h agent.TurnHandler) (agent.Result, error) {
	s.turnMu.Lock()
	defer s.turnMu.Unlock()
	if s.ended() {
		return agent.Result{}, s.endedErr()
	}
	s.mu.Lock()
	s.h = h
	s.text.Reset()
	s.stopped = false
	s.stopping, s.stopOnce = make(chan struct{}), &sync.Once{}
	note := s.note
	s.note = ""
	earlier := s.takeFeedbackLocked()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.h = nil
		s.mu.Unlock()
	}()
	if note != "" {
		h.Text(note + "\n\n")
	}
	if earlier != "" {
		p.Text = earlier + "\n\n" + p.Text
	}
	prompt := s.promptBlocks(p)
	for {
		resp, err := s.prompt(ctx, prompt)
		if err != nil {
			return agent.Result{}, err
		}
		s.mu.Lock()
		more := ""
		if !s.stopped {
			more = s.takeFeedbackLocked()
		}
		text := s.text.String()
		id := s.id
		s.mu.Unlock()
		if more == "" {
			res := agent.Result{
				Text: strings.TrimSpace(text), SessionID: id, Subtype: string(resp.StopReason),
				IsError: resp.StopReason == sdk.StopReasonRefusal || resp.StopReason == sdk.StopReasonMaxTokens,
			}
			if u := resp.Usage; u != nil { // the agent's count for this turn, when it gives one
				res.InputTokens, res.OutputTokens = int64(u.InputTokens), int64(u.OutputTokens)
			}
			return res, nil
		}
		prompt = []sdk.ContentBlock{sdk.TextBlock(more)} // what people said reaches the agent now
		h.Text("\n\n")
	}
}

// prompt runs one session/prompt; ctx ending cancels it (session/cancel)
// and waits a little for the agent to wind down. After Interrupt (/stop)
// the agent has the close timeout to end the turn; one that does not is
// closed, so the turn ends and the chat is free whatever the agent does.
func (s *session) prompt(ctx context.Context, blocks []sdk.ContentBlock) (sdk.PromptResponse, error) {
	type res struct {
		v   sdk.PromptResponse
		err error
	}
	ch := make(chan res, 1)
	s.mu.Lock()
	id, stopping := s.id, s.stopping
	s.mu.Unlock()
	go func() {
		v, err := sdk.SendRequest[sdk.PromptResponse](s.conn, context.WithoutCancel(ctx), sdk.AgentMethodSessionPrompt,
			sdk.PromptRequest{SessionId: sdk.SessionId(id), Prompt: blocks})
		ch <- res{v, err}
	}()
	answered := func(r res) (sdk.PromptResponse, error) {
		if r.err != nil {
			if s.lost() {
				return r.v, s.endedErr()
			}
			return r.v, fmt.Errorf("session/prompt: %w", r.err)
		}
		return r.v, nil
	}
	select {
	case r := <-ch:
		return answered(r)
	case <-s.done:
		return sdk.PromptResponse{}, s.endedErr()
	case <-stopping:
		t := time.NewTimer(s.a.closeTimeout)
		defer t.Stop()
		select {
		case r := <-ch:
			return answered(r)
		case <-s.done:
			return sdk.PromptResponse{}, s.endedErr()
		case <-t.C:
			s.endUnstoppable(ctx)
			return sdk.PromptResponse{}, s.endedErr()
		}
	case <-ctx.Done():
		_ = s.Interrupt(context.WithoutCancel(ctx))
		t := time.NewTimer(s.a.closeTimeout)
		defer t.Stop()
		select {
		case <-ch:
		case <-s.done:
		case <-t.C:
			s.log.Warn("the agent did not end its turn after session/cancel")
		}
		return sdk.PromptResponse{}, fmt.Errorf("turn abandoned: %w", context.Cause(ctx))
	}
}

// endUnstoppable closes a session whose agent did not end its turn within
// the close timeout of session/cancel.
func (s *session) endUnstoppable(ctx context.Context) {
	why := fmt.Sprintf("the agent did not end its turn within %s of being stopped; leashd closed it", s.a.closeTimeout)
	s.log.Warn(why)
	s.mu.Lock()
	if s.closing == "" {
		s.closing = why
	}
	s.mu.Unlock()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*s.a.closeTimeout)
	defer cancel()
	_ = s.Close(cctx)
}

func (s *session) takeFeedbackLocked() string {
	if len(s.feedback) == 0 {
		return ""
	}
	out := strings.Join(s.feedback, "\n\n")
	s.feedback = nil
	return out
}

func (s *session) addFeedback(text string) {
	s.mu.Lock()
	s.feedback = append(s.feedback, text)
	s.mu.Unlock()
}

func (s *session) handler() agent.TurnHandler {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h
}

// handle answers what the agent sends. Requests run on their own
// goroutines (a person may take minutes); notifications in order.
func (s *session) handle(ctx context.Context, method string, params json.RawMessage) (any, *sdk.RequestError) {
	switch method {
	case sdk.ClientMethodSessionUpdate:
		var n sdk.SessionNotification
		if err := json.Unmarshal(params, &n); err != nil {
			s.log.Debug("unreadable session/update", "err", err)
			return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		s.update(n.Update)
		return nil, nil
	case sdk.ClientMethodSessionRequestPermission:
		return s.requestPermission(ctx, params)
	case methodTooLong:
		return nil, tooLongError(params)
	case sdk.ClientMethodElicitationCreate:
		return s.elicit(ctx, params)
	case sdk.ClientMethodElicitationComplete:
		var p struct {
			ElicitationID string `json:"elicitationId"`
		}
		_ = json.Unmarshal(params, &p)
		s.mu.Lock()
		w := s.urls[p.ElicitationID]
		s.mu.Unlock()
		if w != nil {
			w.complete()
		}
		return nil, nil
	case "cursor/ask_question", "_sandboxagent/session/request_question":
		return s.vendorQuestion(ctx, method, params)
	default:
		level := slog.LevelInfo
		if strings.HasPrefix(method, "_") { // extensions: often notifications to ignore
			level = slog.LevelDebug
		}
		s.log.Log(ctx, level, "the agent sent a method leashd does not offer", "method", method)
		return nil, sdk.NewMethodNotFound(method)
	}
}
