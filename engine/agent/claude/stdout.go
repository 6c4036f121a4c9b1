package claude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// read reads stdout until it closes.
func (s *session) read() {
	defer close(s.readDone)
	defer s.out.Close()
	br := bufio.NewReaderSize(s.out, 64<<10)
	for {
		b, n, err := readLineN(br, s.a.maxLine)
		var tl *lineTooLongError
		switch {
		case errors.As(err, &tl):
			s.handleTooLong(tl)
			s.handled(n)
			continue
		case len(b) > 0:
			s.handle(b)
		}
		s.handled(n)
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
	b, _, err := readLineN(br, max)
	return b, err
}

// readLineN is readLine that also says how many bytes it consumed,
// newline included: what the reader has handled (adopt.go).
func readLineN(br *bufio.Reader, max int) ([]byte, int, error) {
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
			return nil, n, &lineTooLongError{n: length, start: head[:min(len(head), maxQuoted)], head: head}
		}
		return bytes.TrimSuffix(buf, []byte("\n")), n, err
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
		s.controlResponse(l, raw)
	case typeControlRequest:
		s.controlRequest(l)
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
		s.assistant(l, raw)
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

// controlResponse hands the CLI's answer to the control request waiting
// for it.
func (s *session) controlResponse(l *line, raw []byte) {
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
}

// controlRequest starts deciding a request the CLI sent, or answers at
// once with an error for one leashd does not handle.
func (s *session) controlRequest(l *line) {
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
}

// assistant passes a complete assistant message's text and tool uses to
// the running turn.
func (s *session) assistant(l *line, raw []byte) {
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
