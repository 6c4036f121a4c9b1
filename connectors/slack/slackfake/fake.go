// Package slackfake is a fake Slack for tests: a Web API server
// (chat.postMessage, chat.update, chat.postEphemeral, auth.test,
// apps.connections.open, users.info) that records every call, and a Socket
// Mode websocket that pushes events_api, interactive and slash_commands
// envelopes and records their acknowledgements. Point slack-go at it with
// slack.OptionAPIURL(fake.APIURL()).
//
// Like Slack, it refuses blocks that break Block Kit's limits with
// {"ok":false,"error":"invalid_blocks"} and posts nothing (see
// ValidateBlocks); Rejected lists every refusal, so a test can prove that
// everything it saw sent was valid.
package slackfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Identity of the fake workspace's bot.
const (
	BotUserID = "UBOT"
	BotID     = "BBOT"
	TeamID    = "T1"
)

// Call is one Web API request the fake received.
type Call struct {
	Method string
	Token  string            // from the Authorization header or the token form field
	Params map[string]string // form fields (or top-level JSON fields as text)
	At     time.Time
	Status int // HTTP status answered
	// RetryAfter is the Retry-After of a 429 answer.
	RetryAfter time.Duration
}

// Message is a message the bot posted (and maybe updated).
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	Blocks   json.RawMessage
	Posted   json.RawMessage // the blocks as first posted
	Edits    int             // how many times chat.update changed it
}

// Ephemeral is a message only one user sees.
type Ephemeral struct {
	Channel  string
	User     string
	Text     string
	ThreadTS string
}

// Ack is a Socket Mode acknowledgement.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage
	At         time.Time
}

// Server is the fake. Create it with New; Close it when done.
type Server struct {
	BotToken string
	AppToken string

	srv      *httptest.Server
	upgrader websocket.Upgrader

	mu        sync.Mutex
	changed   chan struct{}
	calls     []Call
	msgs      []*Message
	ephemeral []Ephemeral
	tsSeq     int64
	limited   map[string][]int // method → Retry-After seconds of the next 429s to answer
	failNext  map[string]string
	conns     []*wsConn
	accepted  int
	acks      map[string]Ack
	sent      map[string]time.Time
	envSeq    int
	users     map[string]string // user ID → name
	rejected  []Rejection
	files     map[string]*fileRec // files.go
	shared    []SharedFile
}

// Rejection is a call refused because its blocks broke Slack's limits.
type Rejection struct {
	Method string
	Blocks string
	Errors []string
}

// New starts a fake accepting botToken for the Web API and appToken for
// apps.connections.open.
func New(botToken, appToken string) *Server {
	s := &Server{
		BotToken: botToken,
		AppToken: appToken,
		changed:  make(chan struct{}, 1),
		limited:  make(map[string][]int),
		failNext: make(map[string]string),
		acks:     make(map[string]Ack),
		sent:     make(map[string]time.Time),
		users:    map[string]string{"U1": "ada", "U2": "bob", "U3": "eve"},
		tsSeq:    1700000000000100,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.api)
	mux.HandleFunc("/ws", s.ws)
	mux.HandleFunc("/files-pri/", s.serveDownload) // files.go
	mux.HandleFunc("POST /upload/v1/", s.serveUpload)
	mux.HandleFunc("/signin", serveSignIn)
	s.upgrader.CheckOrigin = func(*http.Request) bool { return true } // the client sends Origin: https://api.slack.com
	s.srv = httptest.NewServer(mux)
	return s
}

// APIURL is the Web API base URL, ending with "/".
func (s *Server) APIURL() string { return s.srv.URL + "/api/" }

// Close stops the fake and drops websocket connections.
func (s *Server) Close() {
	s.mu.Lock()
	for _, c := range s.conns {
		_ = c.c.Close()
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// notify wakes a WaitFor.
func (s *Server) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// RateLimit makes the next len(retryAfter) calls of method answer 429 with
// these Retry-After values (seconds).
func (s *Server) RateLimit(method string, retryAfter ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited[method] = append(s.limited[method], retryAfter...)
}

// FailNext makes the next call of method answer ok:false with this error.
func (s *Server) FailNext(method, slackErr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext[method] = slackErr
}

// nextTS is a new message timestamp, later than every earlier one.
func (s *Server) nextTS() string {
	s.tsSeq++
	return fmt.Sprintf("%d.%06d", s.tsSeq/1000000, s.tsSeq%1000000)
}

// Rejected returns the calls refused as invalid_blocks so far.
func (s *Server) Rejected() []Rejection {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rejected)
}

// Seed adds a message as if the bot had posted it earlier (e.g. before a
// restart) and returns it with its ts.
func (s *Server) Seed(m Message) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	m.TS = s.nextTS()
	s.msgs = append(s.msgs, &m)
	return m
}

// Calls returns the recorded calls of method ("" for all).
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Messages returns copies of the messages posted in channel ("" for all),
// in order.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.msgs {
		if channel == "" || m.Channel == channel {
			out = append(out, *m)
		}
	}
	return out
}

// Ephemerals returns the ephemeral messages sent so far.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ephemeral)
}

// WaitFor calls cond until it holds or timeout passes, and reports
// whether it held. Call cond without holding anything of the fake's.
func (s *Server) WaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.After(timeout)
	for {
		if cond() {
			return true
		}
		select {
		case <-s.changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			return cond()
		}
	}
}
