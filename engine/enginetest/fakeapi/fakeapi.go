// Package fakeapi is a scriptable fake of the Anthropic Messages API for
// tests: the real Claude Code CLI runs against it offline (ANTHROPIC_BASE_URL
// pointed at it). Each of the agent's model calls takes the next scripted
// Reply (text, tool_use blocks, a held-open stream, an API error) and is
// recorded, so a test can assert what the model would have received — the
// tool_result of an answered question, a denial's reason.
//
// The fake plays the model of the current CLI where the CLI expects it
// (decided by what each request shows, never by a version number), so one
// script works with the oldest and the newest CLI leashd supports:
//   - a scripted tool the request lists as deferred (not in its tools, but
//     named in the "deferred tools … via ToolSearch" list of the prompt) is
//     first loaded with ToolSearch {"query":"select:<names>"};
//   - a scripted ExitPlanMode {"plan": …} while the prompt names a plan file
//     ("create your plan at <path>") first Writes the plan to that file (a
//     Read comes first when the file exists), then calls ExitPlanMode
//     without "plan", as the current model does.
//
// These extra model calls are preparation: they are recorded by Prepared,
// not by Calls, so a script's call indexes and tool_use IDs
// (toolu_fake0001, …) are the same with every CLI.
//
// Replies stream as the real API does: SSE events message_start,
// content_block_start / content_block_delta (text_delta, input_json_delta) /
// content_block_stop, message_delta (stop_reason), message_stop.
package fakeapi

import (
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
	// Header holds extra response headers (an error's retry-after, a
	// usage limit's anthropic-ratelimit-unified-* headers).
	Header http.Header
}

// ToolUse is a tool_use block. ID is generated when empty.
type ToolUse struct {
	ID    string
	Name  string
	Input any // marshalled to JSON; json.RawMessage is sent as is
}

// UsageLimit is the reply of an account whose usage limit is reached until
// resetsAt: HTTP 429 with the anthropic-ratelimit-unified-* headers
// api.anthropic.com sends its subscribers (kind is the representative
// claim: five_hour, seven_day, …). A CLI signed in as a subscriber
// (Subscriber) reports it as a rate_limit_event and "You've hit your …
// limit · resets …"; one using an API key only as an API error.
func UsageLimit(resetsAt time.Time, kind string) Reply {
	h := http.Header{}
	h.Set("anthropic-ratelimit-unified-status", "rejected")
	h.Set("anthropic-ratelimit-unified-reset", fmt.Sprint(resetsAt.Unix()))
	h.Set("anthropic-ratelimit-unified-representative-claim", kind)
	h.Set("retry-after", fmt.Sprint(max(0, int(time.Until(resetsAt).Seconds()))))
	h.Set("x-should-retry", "false")
	return Reply{Status: http.StatusTooManyRequests, Error: "usage limit reached", Header: h}
}

// Subscriber is the environment, appended after Env, that signs the CLI in
// with a (fake) subscription token instead of the API key, as people using
// Claude Code with a Pro or Max plan are; the fake does not check it.
func Subscriber() []string {
	return []string{"ANTHROPIC_API_KEY=", "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-fakeapi-test"}
}

// Text is a reply with just text.
func Text(s string) Reply { return Reply{Text: s} }

// Tool is a reply calling one tool.
func Tool(name string, input any) Reply { return Reply{Tools: []ToolUse{{Name: name, Input: input}}} }

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

	prepared []*Request // model calls answered by preparation steps
	prepSeq  int
	pending  *preparation
}

// preparation is what remains of a scripted reply the fake prepares for:
// the model calls still to make, the scripted reply last.
type preparation struct {
	after   []string // tool_use IDs the next request's tool_results answer
	replies []Reply
	call    *Request // the scripted call, whose Abandoned a held reply closes
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

// Prepared are the model calls the fake answered by itself before a
// scripted reply (ToolSearch loading a deferred tool, Write of the plan
// file); each carries the tool_result of the previous step.
func (s *Server) Prepared() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.prepared...)
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
			if reply, abandoned, ok := s.continuePreparation(req); ok {
				s.respond(w, r, req, reply, abandoned, true)
				return
			}
			reply := s.next(req)
			s.respond(w, r, req, reply, req.abandoned, s.isPreparing(req))
			return
		}
		req.Reply = Text("ok")
		s.record(req, false)
		s.respond(w, r, req, req.Reply, req.abandoned, false)
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
	steps, reply := prepare(req, reply)
	req.Reply = reply
	if len(steps) == 0 {
		s.record(req, true)
		return reply
	}
	s.mu.Lock()
	for i := range steps {
		for j := range steps[i].Tools {
			s.prepSeq++
			steps[i].Tools[j].ID = fmt.Sprintf("toolu_fakeprep%04d", s.prepSeq)
		}
	}
	s.pending = &preparation{after: toolIDs(steps[0]), replies: append(steps[1:], reply), call: req}
	s.mu.Unlock()
	s.record(req, true)
	return steps[0]
}
