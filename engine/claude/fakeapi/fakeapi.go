// Package fakeapi is a scriptable fake of the Anthropic Messages API for
// tests: the real Claude Code CLI runs against it offline (ANTHROPIC_BASE_URL
// pointed at it). Each of the agent's model calls takes the next scripted
// Reply (text, tool_use blocks, a held-open stream, an API error) and is
// recorded, so a test can assert what the model would have received — the
// tool_result of an answered question, a denial's reason.
//
// Replies stream as the real API does: SSE events message_start,
// content_block_start / content_block_delta (text_delta, input_json_delta) /
// content_block_stop, message_delta (stop_reason), message_stop.
package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// APIKey is the dummy key Env sets; the server does not check it.
const APIKey = "sk-ant-fakeapi-test"

// Reply is one scripted model response.
type Reply struct {
	// Text is a text block sent first ("" for none).
	Text string
	// Tools are tool_use blocks sent after the text; with any, the stop
	// reason is tool_use, else end_turn.
	Tools []ToolUse
	// Hold, when set, keeps the stream open after message_start until it
	// is closed or the client goes away (an interrupt): a model "thinking".
	Hold <-chan struct{}
	// Status, when not 0 or 200, answers with this HTTP status and an API
	// error whose message is Error.
	Status int
	Error  string
}

// ToolUse is a tool_use block. ID is generated when empty.
type ToolUse struct {
	ID    string
	Name  string
	Input any // marshalled to JSON; json.RawMessage is sent as is
}

// Text is a reply with just text.
func Text(s string) Reply { return Reply{Text: s} }

// Tool is a reply calling one tool.
func Tool(name string, input any) Reply { return Reply{Tools: []ToolUse{{Name: name, Input: input}}} }

// Step answers one model call; it may inspect the request.
type Step func(*Request) Reply

// Request is a recorded call.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Raw    []byte

	Model    string
	Stream   bool
	Messages []Message
	Tools    []string // tool names offered to the model
	System   json.RawMessage
	// Reply is what the fake answered.
	Reply Reply

	abandoned chan struct{}
}

// Abandoned is closed when the client went away while the fake held the
// reply open (Reply.Hold): the CLI interrupted or dropped the call. It
// stays open for a call the fake answered in full.
func (r *Request) Abandoned() <-chan struct{} { return r.abandoned }

// Message is a conversation message, content normalised to blocks.
type Message struct {
	Role    string
	Content []Block
}

// Block is a content block.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// ResultText is a tool_result's content as text (a string, or its text
// blocks joined by newlines).
func (b Block) ResultText() string {
	c := bytes.TrimSpace(b.Content)
	if len(c) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var bs []Block
	if json.Unmarshal(c, &bs) == nil {
		var parts []string
		for _, x := range bs {
			if x.Type == "text" {
				parts = append(parts, x.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(c)
}

// ToolResult finds the tool_result for a tool_use ID anywhere in the
// conversation.
func (r *Request) ToolResult(toolUseID string) (Block, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		for _, b := range r.Messages[i].Content {
			if b.Type == "tool_result" && b.ToolUseID == toolUseID {
				return b, true
			}
		}
	}
	return Block{}, false
}

// UserTexts are the text blocks of user messages, in order (the CLI adds
// system reminders as text blocks too).
func (r *Request) UserTexts() []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// HasUserText reports whether any user text block contains s.
func (r *Request) HasUserText(s string) bool {
	for _, t := range r.UserTexts() {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// Server is the fake API. Create it with New.
type Server struct {
	// URL is the base URL (ANTHROPIC_BASE_URL).
	URL string

	srv *httptest.Server
	tb  testing.TB

	mu         sync.Mutex
	steps      []Step
	calls      []*Request // the agent's model calls (scripted)
	side       []*Request // everything else
	unscripted int
	fallback   Step
	seq        int
	changed    chan struct{}
}

// New starts a fake API, closed when the test ends.
func New(tb testing.TB) *Server {
	s := &Server{tb: tb, changed: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Reply appends static replies to the script.
func (s *Server) Reply(rs ...Reply) {
	for _, r := range rs {
		s.Then(func(*Request) Reply { return r })
	}
}

// Then appends a step that decides its reply from the request.
func (s *Server) Then(f Step) {
	s.mu.Lock()
	s.steps = append(s.steps, f)
	s.mu.Unlock()
}

// Otherwise sets the step that answers model calls once the script is
// empty (by default a short text, counted by Unscripted).
func (s *Server) Otherwise(f Step) {
	s.mu.Lock()
	s.fallback = f
	s.mu.Unlock()
}

// Calls are the agent's model calls so far.
func (s *Server) Calls() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.calls...)
}

// Side are the other requests (HEAD /, token counting, calls without tools).
func (s *Server) Side() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.side...)
}

// Unscripted counts model calls that found the script empty and no
// Otherwise step (answered with a short text); a test expecting an exact conversation asserts 0.
func (s *Server) Unscripted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unscripted
}

// WaitCalls waits until at least n model calls arrived and returns them;
// it fails the test after timeout.
func (s *Server) WaitCalls(tb testing.TB, n int, timeout time.Duration) []*Request {
	tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		if len(s.calls) >= n {
			out := append([]*Request(nil), s.calls...)
			s.mu.Unlock()
			return out
		}
		ch := s.changed
		got := len(s.calls)
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			tb.Fatalf("fakeapi: waited %s for %d model calls, got %d", timeout, n, got)
			return nil
		}
	}
}

// Env is the environment that points the CLI at this server and keeps it
// off the network and away from the real configuration: home becomes HOME
// and holds CLAUDE_CONFIG_DIR; telemetry, auto-update and other
// non-essential traffic are off.
func (s *Server) Env(home string) []string {
	cfg := filepath.Join(home, ".claude")
	_ = os.MkdirAll(cfg, 0o700)
	return []string{
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + cfg,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"ANTHROPIC_BASE_URL=" + s.URL,
		"ANTHROPIC_API_KEY=" + APIKey,
		"ANTHROPIC_AUTH_TOKEN=",
		"CLAUDE_CODE_OAUTH_TOKEN=",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_BUG_COMMAND=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
		"CLAUDE_CODE_USE_BEDROCK=",
		"CLAUDE_CODE_USE_VERTEX=",
		"NO_PROXY=127.0.0.1,localhost",
		"HTTPS_PROXY=",
		"HTTP_PROXY=",
	}
}

type wireRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	req := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw, abandoned: make(chan struct{})}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages") {
		var wr wireRequest
		if err := json.Unmarshal(raw, &wr); err != nil {
			s.record(req, false)
			apiError(w, http.StatusBadRequest, "invalid_request_error", "fakeapi: request body is not JSON: "+err.Error())
			return
		}
		req.Model, req.Stream, req.System = wr.Model, wr.Stream, wr.System
		for _, m := range wr.Messages {
			req.Messages = append(req.Messages, Message{Role: m.Role, Content: normalise(m.Content)})
		}
		for _, t := range wr.Tools {
			req.Tools = append(req.Tools, t.Name)
		}
		if len(req.Tools) > 0 && req.Stream {
			reply := s.next(req)
			s.respond(w, r, req, reply)
			return
		}
		req.Reply = Text("ok")
		s.record(req, false)
		s.respond(w, r, req, req.Reply)
		return
	}
	s.record(req, false)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/count_tokens"):
		fmt.Fprint(w, `{"input_tokens":100}`)
	case r.Method == http.MethodHead:
	default:
		fmt.Fprint(w, `{}`)
	}
}

func (s *Server) record(req *Request, call bool) {
	s.mu.Lock()
	if call {
		s.calls = append(s.calls, req)
	} else {
		s.side = append(s.side, req)
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// next takes the script's next step and records the call.
func (s *Server) next(req *Request) Reply {
	s.mu.Lock()
	var step Step
	if len(s.steps) > 0 {
		step = s.steps[0]
		s.steps = s.steps[1:]
	} else if s.fallback != nil {
		step = s.fallback
	} else {
		s.unscripted++
	}
	s.mu.Unlock()
	reply := Text("(fakeapi: no scripted reply left)")
	if step != nil {
		reply = step(req)
	}
	s.mu.Lock()
	for i := range reply.Tools {
		if reply.Tools[i].ID == "" {
			s.seq++
			reply.Tools[i].ID = fmt.Sprintf("toolu_fake%04d", s.seq)
		}
	}
	s.mu.Unlock()
	req.Reply = reply
	s.record(req, true)
	return reply
}

func normalise(c json.RawMessage) []Block {
	c = bytes.TrimSpace(c)
	if len(c) == 0 {
		return nil
	}
	var str string
	if json.Unmarshal(c, &str) == nil {
		return []Block{{Type: "text", Text: str}}
	}
	var bs []Block
	_ = json.Unmarshal(c, &bs)
	return bs
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	w.Write(b)
}

func (s *Server) respond(w http.ResponseWriter, r *http.Request, req *Request, reply Reply) {
	if reply.Status != 0 && reply.Status != http.StatusOK {
		typ := "api_error"
		switch reply.Status {
		case http.StatusBadRequest:
			typ = "invalid_request_error"
		case http.StatusUnauthorized:
			typ = "authentication_error"
		case http.StatusTooManyRequests:
			typ = "rate_limit_error"
		case 529:
			typ = "overloaded_error"
		}
		apiError(w, reply.Status, typ, reply.Error)
		return
	}
	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	var content []map[string]any
	if reply.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": reply.Text})
	}
	for _, t := range reply.Tools {
		content = append(content, map[string]any{"type": "tool_use", "id": t.ID, "name": t.Name, "input": inputJSON(t.Input)})
	}
	stop := "end_turn"
	if len(reply.Tools) > 0 {
		stop = "tool_use"
	}
	s.mu.Lock()
	s.seq++
	msgID := fmt.Sprintf("msg_fake%04d", s.seq)
	s.mu.Unlock()
	usage := map[string]int{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model, "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", "req_"+msgID)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	event("ping", map[string]any{"type": "ping"})
	if reply.Hold != nil {
		select {
		case <-reply.Hold:
		case <-r.Context().Done():
			close(req.abandoned)
			return
		}
	}
	idx := 0
	if reply.Text != "" {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range split(reply.Text, 3) {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": part}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for _, t := range reply.Tools {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": t.ID, "name": t.Name, "input": map[string]any{}}})
		for _, part := range split(string(inputJSON(t.Input)), 2) {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 20}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

func inputJSON(v any) json.RawMessage {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("{}")
	case json.RawMessage:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakeapi: tool input does not marshal: %v", err))
	}
	return b
}

// split cuts s into at most n parts on rune boundaries, as a stream would.
func split(s string, n int) []string {
	if n <= 1 || len(s) < n {
		return []string{s}
	}
	size := len(s) / n
	var out []string
	for len(s) > 0 && len(out) < n-1 {
		cut := min(size, len(s))
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
