package claude

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/leashd/leashd/engine/agent/internal/agentproc"
)

// session is one CLI process. It implements agent.Session.
type session struct {
	a    *Agent
	log  *slog.Logger
	cmd  *exec.Cmd
	out  *os.File // read end of the CLI's stdout
	errs *tailBuffer
	// errsPipe is the read end of its stderr, copied into errs until
	// errsDone.
	errsPipe *os.File
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
	withdrawn bool // the CLI sent control_cancel_request: do not answer
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
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(a.path, a.argsFor(o)...)
	cmd.Dir = o.WorkDir
	// The CLI says when a turn is really over (session_state_changed
	// idle, after background agents finished) only when asked to.
	cmd.Env = append(append(os.Environ(), "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS=1"), a.env...)
	cmd.Stdout = w
	// stderr through a pipe of our own too, so that Wait returns when the
	// CLI exits even if a tool it started still holds stderr open.
	er, ew, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	cmd.Stderr = ew
	agentproc.SetGroup(cmd)
	closeAll := func() {
		for _, f := range []*os.File{r, w, er, ew} {
			f.Close()
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, err
	}
	w.Close() // the child holds its own copies
	ew.Close()
	errs := &tailBuffer{max: 8 << 10}
	errsDone := make(chan struct{})
	go func() {
		defer close(errsDone)
		_, _ = io.Copy(errs, er)
	}()
	ctx, cancel := context.WithCancelCause(context.Background())
	log := a.log.With("chat", o.ChatID, "pid", cmd.Process.Pid)
	s := &session{
		a: a, log: log, cmd: cmd, out: r, errs: errs, start: time.Now(),
		stdin: stdin, ctx: ctx, cancel: cancel,
		done: make(chan struct{}), readDone: make(chan struct{}), errsDone: errsDone, errsPipe: er,
		id: o.ResumeID, waiting: map[string]chan controlResponse{}, perms: map[string]*perm{},
		notice: o.Notice,
	}
	log.Debug("claude started", "path", a.path, "args", cmd.Args[1:], "dir", o.WorkDir)
	go s.read()
	go s.wait()
	return s, nil
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
	err := s.cmd.Wait()
	// The tools it started (a background dev server, a shell) end with it.
	_ = agentproc.Signal(s.cmd.Process, syscall.SIGTERM)
	// Let the readers take what the process printed last.
	timeout := time.NewTimer(2 * time.Second)
	defer timeout.Stop()
	for _, ch := range []chan struct{}{s.readDone, s.errsDone} {
		select {
		case <-ch:
		case <-timeout.C:
			// Something in its process group still holds the pipes open.
			_ = agentproc.Signal(s.cmd.Process, syscall.SIGKILL)
			s.out.Close()
			s.errsPipe.Close()
			<-s.readDone
			<-s.errsDone
		}
	}
	s.errsPipe.Close()
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

// read reads stdout until it closes.
func (s *session) read() {
	defer close(s.readDone)
	defer s.out.Close()
	br := bufio.NewReaderSize(s.out, 64<<10)
	for {
		b, err := readLine(br, s.a.maxLine)
		var tl *lineTooLongError
		switch {
		case errors.As(err, &tl):
			s.handleTooLong(tl)
			continue
		case len(b) > 0:
			s.handle(b)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				s.log.Warn("reading claude's output", "err", err)
			}
			return
		}
	}
}

type lineTooLongError struct {
	n     int
	start []byte // at most maxQuoted bytes, for the log
	head  []byte // the first max bytes
}

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("line of %d bytes exceeds the limit", e.n)
}

// readLine returns the next line without its newline. A line longer than
// max is consumed, keeping only its first max bytes, and reported as a
// *lineTooLongError: memory stays bounded by max however long the line.
// At EOF the last unterminated line is returned along with io.EOF.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if room := max + 1 - len(buf); room > 0 { // +1: the newline
			buf = append(buf, chunk[:min(len(chunk), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		length := n
		if err == nil {
			length-- // the newline
		}
		if length > max {
			head := buf[:min(len(buf), max)]
			return nil, &lineTooLongError{n: length, start: head[:min(len(head), maxQuoted)], head: head}
		}
		return bytes.TrimSuffix(buf, []byte("\n")), err
	}
}

// handle dispatches one stdout line.
func (s *session) handle(raw []byte) {
	l, err := parseLine(raw)
	if err != nil {
		s.log.Warn("skipping a line from claude that is not a stream-json message", "err", err)
		return
	}
	if l == nil {
		return
	}
	s.dispatch(l, raw)
}

// dispatch acts on one parsed stdout line (raw is for log messages).
func (s *session) dispatch(l *line, raw []byte) {
	switch l.Type {
	case typeControlResponse:
		r, err := l.response()
		if err != nil {
			s.log.Warn("skipping an unreadable control_response from claude", "err", err, "line", quote(raw))
			return
		}
		s.mu.Lock()
		ch := s.waiting[r.RequestID]
		delete(s.waiting, r.RequestID)
		s.mu.Unlock()
		if ch == nil {
			s.log.Debug("control_response for no pending request", "request_id", r.RequestID)
			return
		}
		ch <- r
	case typeControlRequest:
		req, err := l.request()
		if err != nil {
			s.log.Warn("unreadable control_request from claude; answering with an error", "err", err)
			s.replyError(l.RequestID, "leashd could not read the request: "+err.Error())
			return
		}
		switch req.Subtype {
		case subtypeCanUseTool:
			s.permission(l.RequestID, req)
			return
		case subtypeElicitation:
			s.elicitation(l.RequestID, req)
			return
		case subtypeUserDialog:
			// Sent only for dialog kinds a host declared at initialize,
			// and leashd declares none; the CLI says a host must not
			// answer a kind it did not declare (not even "cancelled").
			s.log.Warn("claude sent a user dialog leashd did not declare; leaving it to the CLI", "request_id", l.RequestID)
			return
		}
		s.log.Info("claude sent a control request leashd does not support; answering with an error", "subtype", req.Subtype)
		s.replyError(l.RequestID, errUnsupportedReply+": leashd does not handle control requests of subtype "+strconv.Quote(req.Subtype))
	case typeControlCancel:
		s.withdraw(l.RequestID)
	case typeSystem, typeConversationReset:
		if (l.Subtype == subtypeInit || l.Type == typeConversationReset) && l.SessionID != "" {
			s.setID(l.SessionID)
		}
		var sl systemLine
		if l.Subtype == subtypeInit || json.Unmarshal(raw, &sl) != nil {
			return
		}
		if l.Subtype == subtypeStateChanged {
			s.stateChanged(sl.State)
			return
		}
		if n, ok := sl.notice(l.Type, l.Subtype); ok && s.notice != nil {
			s.notice(n)
		}
	case typeAssistant:
		ts := s.currentTurn()
		if ts == nil {
			return
		}
		id, blocks, err := l.blocks()
		if err != nil {
			s.log.Warn("unreadable assistant message from claude", "err", err, "line", quote(raw))
			return
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				// A subagent's text is not the answer; text already
				// streamed as deltas is not repeated.
				if l.ParentToolUseID == nil && (id == "" || id != s.streamedMsg) {
					ts.h.Text(b.Text)
				}
			case "tool_use":
				ts.h.ToolUse(b.Name, b.Input)
			}
		}
	case typeResult:
		if l.SessionID != "" {
			s.setID(l.SessionID)
		}
		ts := s.currentTurn()
		if ts == nil {
			s.log.Debug("result with no turn running", "subtype", l.Subtype)
			return
		}
		select {
		case ts.result <- s.withLimit(ts, l.result()):
		default:
			s.log.Warn("a second result for one turn; ignored", "subtype", l.Subtype)
		}
	case typeStreamEvent:
		s.streamEvent(l)
	case typeRateLimitEvent:
		s.rateLimit(raw)
	default:
		s.log.Debug("ignoring a message from claude", "type", l.Type, "subtype", l.Subtype, "raw", quote(raw))
	}
}

// streamEvent handles a partial message (--include-partial-messages): text
// deltas of the main conversation go to the turn as they arrive.
func (s *session) streamEvent(l *line) {
	ev, err := l.streamEvent()
	if err != nil {
		s.log.Debug("unreadable stream_event from claude", "err", err)
		return
	}
	switch ev.Type {
	case "message_start":
		s.curMsg = ev.Message.ID
	case "content_block_delta":
		if ev.Delta.Type != "text_delta" || ev.Delta.Text == "" || l.ParentToolUseID != nil {
			return
		}
		ts := s.currentTurn()
		if ts == nil {
			return
		}
		s.streamedMsg = s.curMsg
		ts.h.Text(ev.Delta.Text)
	}
}

// stateChanged notes a session_state_changed: "idle" ends the running
// turn (once its result is in).
func (s *session) stateChanged(state string) {
	s.mu.Lock()
	s.stateEvents = true
	ts := s.turn
	s.mu.Unlock()
	if ts == nil {
		return
	}
	if state != stateIdle { // running again: an earlier idle is over
		select {
		case <-ts.idle:
		default:
		}
		return
	}
	select {
	case ts.idle <- struct{}{}:
	default:
	}
}

func (s *session) setID(id string) {
	s.mu.Lock()
	s.id = id
	s.mu.Unlock()
}

func (s *session) currentTurn() *turnState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn
}

// permission asks the turn's handler about a can_use_tool request on its
// own goroutine (a person may take minutes) and answers the CLI, unless
// the CLI withdrew the request meanwhile.
func (s *session) permission(reqID string, req controlRequest) {
	s.answerLater(reqID, func(ctx context.Context, ts *turnState) any {
		var resp agent.PermissionResponse
		switch {
		case ts == nil:
			resp = agent.PermissionResponse{Message: "leashd has no turn running to ask about this tool."}
		case ctx.Err() != nil:
			// Withdrawn or the turn ended before this goroutine ran: do
			// not show people a question that is already over.
			resp = agent.PermissionResponse{Message: "The request ended before it could be asked."}
		default:
			resp = ts.h.Permission(ctx, req.permissionRequest())
		}
		return permissionBody(req, resp)
	}, "answering claude's permission request", "tool", req.ToolName)
}

// elicitation asks the turn's handler to put an MCP server's question to
// the person, on its own goroutine, and answers the CLI with accept,
// decline or cancel, unless the CLI withdrew the request meanwhile. With
// no turn, or a handler that cannot ask, it answers cancel at once (left
// unanswered, the agent would wait forever).
func (s *session) elicitation(reqID string, req controlRequest) {
	s.answerLater(reqID, func(ctx context.Context, ts *turnState) any {
		resp := agent.ElicitationResponse{Action: agent.ElicitCancel}
		var el agent.Elicitor
		if ts != nil {
			el, _ = ts.h.(agent.Elicitor)
		}
		switch {
		case el == nil:
			s.log.Info("claude asked for input from an MCP server with nobody to ask; cancelled", "server", req.MCPServerName)
		case ctx.Err() == nil:
			resp = el.Elicit(ctx, req.elicitationRequest())
		}
		switch resp.Action {
		case agent.ElicitAccept, agent.ElicitDecline:
		default:
			resp = agent.ElicitationResponse{Action: agent.ElicitCancel}
		}
		return elicitationBody{Action: resp.Action, Content: resp.Content}
	}, "answering claude's elicitation", "server", req.MCPServerName)
}

// answerLater decides a request the CLI sent (reqID) on its own goroutine
// with decide — given a context the turn's end or the CLI's withdrawal
// (control_cancel_request) cancels, and the turn, nil when none runs — and
// answers the CLI with what decide returns, unless the CLI withdrew the
// request meanwhile or the process is gone. failed and kv describe the
// request in the log when the answer cannot be sent.
func (s *session) answerLater(reqID string, decide func(ctx context.Context, ts *turnState) any, failed string, kv ...any) {
	ts := s.currentTurn()
	parent := s.ctx
	if ts != nil {
		parent = ts.ctx
	}
	ctx, cancel := context.WithCancelCause(parent)
	p := &perm{cancel: cancel}
	s.mu.Lock()
	s.perms[reqID] = p
	s.mu.Unlock()
	go func() {
		defer cancel(nil)
		body := decide(ctx, ts)
		s.mu.Lock()
		delete(s.perms, reqID)
		withdrawn := p.withdrawn
		s.mu.Unlock()
		if withdrawn {
			s.log.Debug("request withdrawn by claude; not answering", append([]any{"request_id", reqID}, kv...)...)
			return
		}
		if s.ctx.Err() != nil {
			return // the process is gone
		}
		err := s.send(outControlResponse{Type: typeControlResponse, Response: outSuccess{
			Subtype: subtypeSuccess, RequestID: reqID, Response: body,
		}})
		if err != nil {
			s.log.Warn(failed, append(kv, "err", err)...)
		}
	}()
}

// withdraw handles control_cancel_request: the decision's context is
// cancelled and no answer is sent.
func (s *session) withdraw(reqID string) {
	s.mu.Lock()
	p := s.perms[reqID]
	if p != nil {
		p.withdrawn = true
	}
	s.mu.Unlock()
	if p == nil {
		s.log.Debug("control_cancel_request for no pending request", "request_id", reqID)
		return
	}
	p.cancel(ErrRequestWithdrawn)
}

func (s *session) replyError(reqID, msg string) {
	err := s.send(outControlResponse{Type: typeControlResponse, Response: outError{Subtype: subtypeError, RequestID: reqID, Error: msg}})
	if err != nil {
		s.log.Warn("answering claude's control request", "err", err)
	}
}

// send writes one message to stdin.
func (s *session) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	s.writeMu.Lock()
	if s.stdinClosed {
		s.writeMu.Unlock()
		return fmt.Errorf("%w: its input is closed", agent.ErrSessionEnded)
	}
	_, err = s.stdin.Write(b)
	s.writeMu.Unlock()
	if err == nil {
		return nil
	}
	// A CLI that cannot be written to is dying or dead: say how it ended.
	select {
	case <-s.done:
		return s.endedErr()
	case <-time.After(2 * time.Second):
	}
	s.log.Warn("writing to claude failed; ending it", "err", err)
	s.kill()
	return fmt.Errorf("%w: writing to claude failed: %v", agent.ErrSessionEnded, err)
}

// control sends a control request and waits for its response.
func (s *session) control(ctx context.Context, body map[string]any) (json.RawMessage, error) {
	s.mu.Lock()
	s.seq++
	id := "leashd_" + strconv.Itoa(s.seq)
	ch := make(chan controlResponse, 1)
	s.waiting[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiting, id)
		s.mu.Unlock()
	}()
	subtype, _ := body["subtype"].(string)
	if err := s.send(outControlRequest{Type: typeControlRequest, RequestID: id, Request: body}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Subtype == subtypeError {
			return nil, fmt.Errorf("claude refused %s: %s", subtype, r.Error)
		}
		return r.Response, nil
	case <-s.done:
		return nil, s.endedErr()
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no answer from claude: %w", subtype, context.Cause(ctx))
	}
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
func (s *session) Turn(ctx context.Context, prompt string, h agent.TurnHandler) (agent.Result, error) {
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

	err := s.send(outUser{Type: typeUser, Message: outMessage{Role: "user", Content: prompt}, SessionID: "default"})
	if err != nil {
		return agent.Result{}, err
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
	// that does not stop is killed.
	tcancel()
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
		_ = agentproc.Signal(s.cmd.Process, syscall.SIGTERM)
		if wait(s.done) {
			return nil
		}
	}
	s.kill()
	<-s.done
	return fmt.Errorf("claude (pid %d) did not exit after its input was closed and SIGTERM; killed", s.cmd.Process.Pid)
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
	s.markClosed("killed by leashd")
	_ = agentproc.Signal(s.cmd.Process, syscall.SIGKILL)
}

// tailBuffer keeps the last max bytes written to it (the CLI's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// tail returns the last n bytes (at a line start when possible), trimmed.
func (t *tailBuffer) tail(n int) string {
	t.mu.Lock()
	b := bytes.TrimSpace(t.buf)
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	s := strings.ToValidUTF8(string(b), "")
	t.mu.Unlock()
	return s
}
