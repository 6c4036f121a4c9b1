// Package tgfake is a fake Telegram Bot API server for tests and
// benchmarks. The real go-telegram-bot-api client talks to it over HTTP
// (httptest); it keeps chats' messages, delivers the updates a test injects
// (messages, button taps) through getUpdates or a webhook, and enforces the
// rules Telegram enforces, answering with Telegram's own errors:
//
//   - text 1–4096 characters (UTF-16 units, counted after HTML parsing);
//   - parse_mode HTML: only Telegram's tags, balanced, valid entities
//     (see ParseHTML);
//   - callback_data 1–64 bytes;
//   - "message is not modified" on an edit that changes nothing;
//   - 429 with retry_after when a chat or the bot exceeds a configured rate
//     (Limits), and a record of every request sent to a chat before its
//     retry_after elapsed (Violations);
//   - 409 on getUpdates while a webhook is set or a conflict is simulated;
//   - at most limit updates (1-100, default 100) per getUpdates, oldest
//     first, until an offset confirms them.
//   - webhook delivery as Telegram's Bot API server does it: one update
//     of a chat in flight at a time (a chat's updates in order), at most
//     max_connections (setWebhook, 1-100, default 40) posts and
//     connections at once, and a post answered non-2xx, failed or not
//     answered in time (WithWebhookTimeout, default 60s) sent again (at
//     once, then after 2s, 4s, ...), the chat's later updates waiting.
//
// Stall makes chosen requests hang, as a slow or stuck Telegram would.
//
// Typical use:
//
//	fake := tgfake.New(tgfake.WithToken("1:T"))
//	defer fake.Close()
//	// point the bot at fake.URL(), then:
//	fake.Text(42, 42, "hello")               // user 42 writes in chat 42
//	fake.Wait(5*time.Second, func() bool { return len(fake.Messages(42)) > 0 })
//	msg := fake.Messages(42)[0]              // what the bot sent
//	qid, _ := fake.TapButton(42, 42, msg.ID, "Yes")
//	ans, _ := fake.CallbackAnswer(qid)
package tgfake

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// DefaultToken is the token the fake accepts unless WithToken says otherwise.
const DefaultToken = "123456:FAKE-secret-token"

// Limits are the rates the fake enforces; zero fields are not enforced.
type Limits struct {
	PerChat       int           // requests per chat within PerChatWindow
	PerChatWindow time.Duration // default 1s
	Global        int           // requests to the bot within GlobalWindow
	GlobalWindow  time.Duration // default 1s
	RetryAfter    int           // seconds told in a 429 (default 1)
}

// Message is a message in a chat, as it stands now.
type Message struct {
	ID        int
	ChatID    int64
	FromBot   bool
	Text      string // as sent (HTML source when ParseMode is HTML)
	ParseMode string
	Markup    *tgbotapi.InlineKeyboardMarkup // nil: no keyboard
	Edits     int
}

// Buttons lists the keyboard's button texts, row by row.
func (m Message) Buttons() []string {
	var out []string
	if m.Markup != nil {
		for _, row := range m.Markup.InlineKeyboard {
			for _, b := range row {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// Request is one API call the fake received.
type Request struct {
	At     time.Time
	Method string
	ChatID int64 // 0 when the method has no chat
	Status int   // HTTP status answered
	Params url.Values
	Error  string // the description of a failed call
}

// CallbackAnswer is the bot's answerCallbackQuery for a tap.
type CallbackAnswer struct {
	Text      string
	ShowAlert bool
	At        time.Time
}

// Server is a fake Bot API. Create it with New; it is safe for concurrent use.
type Server struct {
	srv    *httptest.Server
	token  string
	limits Limits
	now    func() time.Time

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	// polled is closed and replaced when what a waiting getUpdates
	// answers may have changed (an update, a conflict, a failure to
	// inject, a webhook, Close), not on every request: a long poll does
	// not wake, and take mu, for each of the other chats' requests.
	polled     chan struct{}
	updates    []queuedUpdate
	nextUpdate int
	nextMsg    map[int64]int
	msgs       map[int64][]*Message
	requests   []Request
	answers    map[string]CallbackAnswer
	nextQuery  int
	webhookURL string
	secret     string
	conflict   bool
	commands   []tgbotapi.BotCommand
	chatHits   map[int64][]time.Time
	globalHits []time.Time
	penalty    map[int64]time.Time // chat → no request before
	violations []string
	fail       map[string][]int
	users      map[int64]string
	queryChat  map[string]int64       // callback query ID → the chat it was tapped in
	files      map[string]*storedFile // by file_id (files.go)
	sent       []SentFile             // files the bot sent (files.go)
	stalls     []*stall
	deliverWG  sync.WaitGroup
	closed     bool
	conns      atomic.Int64 // connections opened

	// Webhook delivery (see deliver).
	maxConns     int
	hookTimeout  time.Duration
	hookClient   *http.Client
	hookCtx      context.Context
	hookCancel   context.CancelFunc
	hookQueues   map[hookKey]*hookQueue
	hookReady    []hookKey // queues whose head may be sent, first come first served
	hookInFlight int
	hookPending  int // updates in hookQueues
	hookSolo     int
	hookTimers   []*time.Timer
	hookErr      string
	hookErrAt    time.Time
}

// Option configures a Server.
type Option func(*Server)

// WithToken sets the only token the fake accepts (others get 401).
func WithToken(t string) Option { return func(s *Server) { s.token = t } }

// WithLimits sets the rates enforced with 429s.
func WithLimits(l Limits) Option { return func(s *Server) { s.limits = l } }

// New starts a fake server.
func New(opts ...Option) *Server {
	s := &Server{
		token:      DefaultToken,
		now:        time.Now,
		changed:    make(chan struct{}),
		polled:     make(chan struct{}),
		nextUpdate: 1000,
		nextMsg:    make(map[int64]int),
		msgs:       make(map[int64][]*Message),
		answers:    make(map[string]CallbackAnswer),
		chatHits:   make(map[int64][]time.Time),
		penalty:    make(map[int64]time.Time),
		fail:       make(map[string][]int),
		users:      make(map[int64]string),
		queryChat:  make(map[string]int64),
	}
	s.maxConns, s.hookTimeout = DefaultMaxConnections, 60*time.Second
	s.hookQueues = make(map[hookKey]*hookQueue)
	s.hookCtx, s.hookCancel = context.WithCancel(context.Background())
	for _, o := range opts {
		o(s)
	}
	if s.limits.PerChatWindow == 0 {
		s.limits.PerChatWindow = time.Second
	}
	if s.limits.GlobalWindow == 0 {
		s.limits.GlobalWindow = time.Second
	}
	if s.limits.RetryAfter == 0 {
		s.limits.RetryAfter = 1
	}
	s.hookClient = newHookClient(s.maxConns, s.hookTimeout)
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.srv.Start()
	return s
}

// Connections is how many TCP connections clients have opened to the fake.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// URL is the base URL to give the bot (it appends /bot<token>/<method>).
func (s *Server) URL() string { return s.srv.URL }

// Token is the token the fake accepts.
func (s *Server) Token() string { return s.token }

// Close stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.notifyLocked()
	s.notifyPollLocked()
	for _, st := range s.stalls {
		st.releaseLocked()
	}
	for _, t := range s.hookTimers {
		if t.Stop() {
			s.deliverWG.Done()
		}
	}
	s.hookCancel()
	client := s.hookClient
	s.mu.Unlock()
	s.deliverWG.Wait()
	client.CloseIdleConnections()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// notifyLocked wakes whoever waits for a change (Wait).
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// notifyPollLocked wakes a waiting getUpdates.
func (s *Server) notifyPollLocked() {
	close(s.polled)
	s.polled = make(chan struct{})
}
