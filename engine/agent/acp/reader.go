package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	sdk "github.com/coder/acp-go-sdk"
)

// Message limits. The SDK reads the agent's stdout with a bufio.Scanner of
// at most 10 MiB a line and queues at most 1,024 notifications; past either
// it closes the connection while the process lives on. So leashd reads the
// agent's output itself (pump): notifications — session/update bursts,
// such as a session/load replaying a long history — are handled as they
// are read, in order, so none waits in the SDK's queue (a burst waits in
// the pipe instead, the agent blocking on its writes), and only requests
// and answers reach the SDK, never a line it would refuse.
const (
	// DefaultMaxMessageBytes is the longest message (line) from the agent
	// read whole unless WithMaxMessageBytes says otherwise
	// (LEASHD_MAX_AGENT_MESSAGE_BYTES).
	DefaultMaxMessageBytes = 4 << 20
	// MinMessageBytes is the smallest limit WithMaxMessageBytes accepts.
	MinMessageBytes = 256 << 10
	// sdkMaxLine is the longest line the SDK's reader accepts, less one.
	sdkMaxLine = 10<<20 - 1
	// maxLogged bounds what a log line quotes of the agent's output.
	maxLogged = 2 << 10
)

// methodTooLong stands in for a request of the agent's that was too long
// to read: the SDK passes it to handle, which answers it with an error.
const methodTooLong = "_leashd/too_long"

// envelope is what leashd reads of each message to route it.
type envelope struct {
	ID     *json.RawMessage `json:"id"`
	Method string           `json:"method"`
	Params json.RawMessage  `json:"params"`
}

// pump reads the agent's output line by line until it ends or the session
// must end, handling session/update notifications itself and writing every
// other message to w, which the SDK reads; it closes w when done.
func (s *session) pump(r io.Reader, w *io.PipeWriter) {
	br := bufio.NewReaderSize(r, 64<<10)
	limit := s.a.maxLine
	var buf []byte
	for {
		line, n, err := readLine(br, limit, buf[:0])
		buf = line
		if n > 0 && !s.route(line, n, limit, w) {
			_ = w.CloseWithError(errors.New(s.lostReason()))
			return
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.log.Warn("reading the agent's output", "err", err)
			}
			_ = w.CloseWithError(err)
			return
		}
	}
}

// readLine reads one line into buf (without its newline), keeping at most
// limit+1 bytes of it, and returns how long the whole line was.
func readLine(br *bufio.Reader, limit int, buf []byte) ([]byte, int, error) {
	n := 0
	for {
		frag, err := br.ReadSlice('\n')
		if err == nil {
			frag = frag[:len(frag)-1]
		}
		n += len(frag)
		if room := limit + 1 - len(buf); room > 0 {
			buf = append(buf, frag[:min(len(frag), room)]...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, n, err
		}
	}
}

// notification handles a notification as it is read. A method that asks
// a person is a request: without an ID nobody could be answered, so it is
// ignored rather than put to people.
func (s *session) notification(method string, params json.RawMessage) {
	switch method {
	case sdk.ClientMethodSessionRequestPermission, sdk.ClientMethodElicitationCreate, "cursor/ask_question", "_sandboxagent/session/request_question", methodTooLong:
		s.log.Debug("a request sent as a notification; ignored", "method", method)
		return
	}
	if _, rerr := s.handle(context.Background(), method, params); rerr != nil {
		s.log.Debug("notification not handled", "method", method, "err", rerr.Message)
	}
}

// route hands one line on; false means the session must end.
func (s *session) route(line []byte, n, limit int, w io.Writer) bool {
	if len(bytes.TrimSpace(line)) == 0 {
		return true
	}
	if n > limit {
		return s.tooLong(line, n, w)
	}
	var m envelope
	if err := json.Unmarshal(line, &m); err != nil {
		s.log.Warn("skipping a line from the agent that is not JSON-RPC", "err", err, "bytes", n, "line", excerpt(line))
		return true
	}
	if m.ID == nil && m.Method != "" && m.Method != "$/cancel_request" {
		s.notification(m.Method, m.Params)
		return true
	}
	if n > sdkMaxLine {
		return s.tooLong(line, n, w)
	}
	_, err := w.Write(append(line, '\n'))
	return err == nil
}

// tooLong handles a message over the limit from its first bytes: a request
// is answered with an error saying why, the agent's answer to one of
// leashd's requests becomes an error answer, a session/update is left out
// (the turn's text says so), and anything else ends the session: leashd
// cannot tell what was lost.
func (s *session) tooLong(start []byte, n int, w io.Writer) bool {
	id, method := peekEnvelope(start[:min(len(start), 64<<10)])
	limit := min(s.a.maxLine, sdkMaxLine)
	s.log.Warn("a message from the agent is longer than the limit (LEASHD_MAX_AGENT_MESSAGE_BYTES)",
		"bytes", n, "limit", limit, "method", method, "start", excerpt(start))
	var msg any
	switch {
	case id != nil && method != "":
		msg = map[string]any{"jsonrpc": "2.0", "id": id, "method": methodTooLong, "params": map[string]any{"method": method, "bytes": n}}
	case id != nil:
		msg = map[string]any{"jsonrpc": "2.0", "id": id, "error": sdk.NewInternalError(map[string]any{"error": tooLongText(n, limit)})}
	case method == sdk.ClientMethodSessionUpdate:
		if h := s.handler(); h != nil {
			h.Text(fmt.Sprintf("\n\n(leashd left out an update of %d bytes from the agent: over its limit of %d bytes for one message, LEASHD_MAX_AGENT_MESSAGE_BYTES.)\n\n", n, limit))
		}
		return true
	default:
		s.loseConnection(fmt.Sprintf("the agent sent a message leashd could not read: %s", tooLongText(n, limit)))
		return false
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return false
	}
	_, err = w.Write(append(b, '\n'))
	return err == nil
}

func tooLongText(n, limit int) string {
	return fmt.Sprintf("it was %d bytes, over leashd's limit of %d bytes for one message from the agent (LEASHD_MAX_AGENT_MESSAGE_BYTES)", n, limit)
}

// tooLongError answers a request of the agent's that was too long to read.
func tooLongError(params json.RawMessage) *sdk.RequestError {
	var p struct {
		Method string `json:"method"`
		Bytes  int    `json:"bytes"`
	}
	_ = json.Unmarshal(params, &p)
	return sdk.NewInvalidRequest(map[string]any{"error": fmt.Sprintf("leashd refused this %s request without reading it: it was %d bytes, over leashd's limit for one message from the agent (LEASHD_MAX_AGENT_MESSAGE_BYTES). Nobody was asked; send less at once.", p.Method, p.Bytes)})
}

// peekEnvelope finds a message's id and method among the members before
// the first one it cannot read whole (the start of a cut message).
func peekEnvelope(start []byte) (id json.RawMessage, method string) {
	dec := json.NewDecoder(bytes.NewReader(start))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, ""
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return id, method
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return id, method
		}
		switch k {
		case "id":
			if !bytes.Equal(v, []byte("null")) {
				id = v
			}
		case "method":
			_ = json.Unmarshal(v, &method)
		}
	}
	return id, method
}

// excerpt quotes at most maxLogged bytes of the agent's output for a log
// line, with its length when cut.
func excerpt(b []byte) string {
	if len(b) <= maxLogged {
		return fmt.Sprintf("%q", b)
	}
	cut := b[:maxLogged]
	for len(cut) > 0 && cut[len(cut)-1]&0xC0 == 0x80 {
		cut = cut[:len(cut)-1]
	}
	if len(cut) > 0 && cut[len(cut)-1] >= 0xC0 {
		cut = cut[:len(cut)-1]
	}
	return fmt.Sprintf("%q… (%d bytes)", cut, len(b))
}
