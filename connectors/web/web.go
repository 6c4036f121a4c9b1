// Package web is leashd's web connector: one self-contained page (embedded
// in the binary) and a JSON + Server-Sent Events API that watch every chat
// of every connector and answer its questions, plan reviews and tool
// approvals. The connector serves no port of its own: cmd/leashd mounts
// its routes (Mount) on leashd's one HTTP server (connectors/httpserver),
// beside /mcp, the webhooks, health and metrics. Its settings are
// LEASHD_WEB_* (Config), which also give the server its address, token and
// bounds.
//
// Routes (every /api route needs the token, on loopback too: the header
// "Authorization: Bearer <token>", or the cookie the page gets from
// /?token=<token>; the token is LEASHD_WEB_TOKEN, or the one leashd
// generated and keeps in its state directory, see WithTokenFile):
//
//	GET  /                                 the page (/?token=… sets the cookie)
//	GET  /api/info                         {"agent","auth","boot"}
//	GET  /api/events[?chat=C][&after=ID]   SSE: message, message.updated, user.message,
//	                                       interaction.requested/.updated/.resolved, agent.done,
//	                                       server.stopping (last, at shutdown);
//	                                       Last-Event-ID or after= replays what was missed
//	                                       (after=0: all kept); ": heartbeat" every 15s;
//	                                       at most WithMaxStreams open at once (then 503)
//	GET  /api/chats                        known chats, most recent first (at most WithMaxChats, and
//	                                       those with requests waiting): chat_id, updated_at,
//	                                       first_text, last_text, pending
//	POST /api/chats/{chat}/messages        {"text"} → 202 {"routed":"agent"|"interaction"|"command"}
//	GET  /api/interactions[?chat=C]        pending interactions (and ones a restart interrupted)
//	POST /api/interactions/{id}/reply      {"answers":[["label",…]],"text":"…"} → 204
//	                                       ({"answers":[["adjust"]]} alone: 202, awaiting feedback)
//	POST /api/interactions/{id}/toggle     {"label"} → 200 {"selected":[…]}
//	POST /api/interactions/{id}/confirm    → 204
//	POST /api/interactions/{id}/reject     [{"text":"reason"}] → 204
//	POST /api/interactions                 a program asks: {"chat_id","kind","question","header",
//	                                       "options":[{"label","description"}],"multi_select",
//	                                       "timeout_seconds"} → 201 {"interaction_id"} (ask.go)
//	GET  /api/interactions/{id}[?wait=S]   its outcome, waiting up to S seconds (at most 600):
//	                                       {"status","answer","answers","text","by","resolved_at",…}
//	DELETE /api/interactions/{id}          cancels one still pending → 204
//
// interaction.requested carries every field of an interaction
// (interaction_id, chat_id, kind, header, question, options (label,
// description, style: "approve", "deny", "destructive" or ""), multi_select,
// approval (a yes/no approval: the first option approves, the second refuses),
// index, total, plan, tool_name, tool_action (its heading in plain words),
// tool_input, tool_summary, option_texts,
// selected, awaiting_feedback; interrupted and notice for a request a
// restart interrupted that still takes an answer). interaction.updated has
// selected and awaiting_feedback; interaction.resolved has status, answer,
// decision, text and by. Events people see carry the time it happened:
// asked_at on requests, at on messages (when first shown), user messages,
// resolutions and agent.done.
//
// Errors are JSON {"error":"…"}: 400 bad request (naming what is accepted),
// 401 no or wrong token (saying where the token is), 403 cross-site
// request or not allowed, 404 unknown interaction or chat, 409 no longer
// pending, 413 body larger than 64 KiB, 503 starting or stopping, or too many event
// streams or connections (see connlimit.go for the connection cap).
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Connector serves the page and the API as an http.Handler (Handler),
// which cmd/leashd mounts on its HTTP server. Create it with New; it
// implements connectors.Connector, connectors.Watcher and
// connectors.Readier.
type Connector struct {
	token     string
	tokenFile string       // where leashd keeps a token it generated
	creds     *Credentials // WithCredentials; else the token alone (creds.go)
	credsOnce sync.Once
	agentName string
	log       *slog.Logger
	heartbeat time.Duration
	hub       *hub
	// writeTimeout bounds each write of an event stream, as the server's
	// WriteTimeout bounds a response.
	writeTimeout time.Duration
	connCap      int // the server's connection cap (0: unknown)
	// maxWaits caps the long-polls waiting at once (waits counts them):
	// each holds a busy connection, which the cap never closes to make
	// room, so without a cap of their own they could take every one.
	maxWaits int
	waits    atomic.Int64

	// Shutdown: Run's context ends → stopping; Flush → the streams get
	// what is left and end.
	stopping  atomic.Bool
	flushOnce sync.Once

	handler atomic.Pointer[connectors.Handler]
	sent    sentFiles // files the agent sent, for their links (files.go)
	// quit ends long-polls (GET /api/interactions/{id}?wait=) when the
	// server shuts down, so they do not hold up the shutdown.
	quit     context.Context
	quitPoll context.CancelFunc

	mu       sync.Mutex
	url      string
	state    error // nil while serving
	msgSeq   int
	streams  map[string]*streaming // chat → the agent text being streamed
	chats    map[string]*chatInfo  // at most maxChats (chats.go)
	maxChats int
	selected map[string][]string // interaction → multi-select selection
	awaiting map[string]bool     // plan review → adjust awaiting feedback
	// approvals: interaction needing a quorum → the approvals so far
	approvals map[string][]interactions.Approver
	// interrupted are requests a restart interrupted that can still be
	// answered (the engine sends the answer to the agent as a prompt).
	interrupted map[string]interrupted
	push        *pusher           // WithPush; nil: off (push.go)
	progress    map[string]uint64 // chat → its last turn.progress event (progress.go)
}

type interrupted struct {
	it     interactions.Interaction
	notice string
}

type streaming struct {
	id   string
	at   time.Time // when its first text was shown
	text []byte
	last uint64 // seq of the last update event, replaced by the next
}

type chatInfo struct {
	ID       string    `json:"chat_id"`
	Updated  time.Time `json:"updated_at"`
	LastText string    `json:"last_text,omitempty"`
	// FirstText is the chat's first message or request: the page names
	// the chat by it.
	FirstText string `json:"first_text,omitempty"`
	Pending   int    `json:"pending"`
}

var (
	_ connectors.Connector = (*Connector)(nil)
	_ connectors.Watcher   = (*Connector)(nil)
	_ connectors.Readier   = (*Connector)(nil)
	_ connectors.Flusher   = (*Connector)(nil)
)

// Option configures a Connector.
type Option func(*Connector)

// WithURL sets the base URL the page is served at, which Run logs (e.g.
// "http://127.0.0.1:8080").
func WithURL(url string) Option { return func(c *Connector) { c.url = url } }

// WithToken requires this token on every /api route.
func WithToken(token string) Option { return func(c *Connector) { c.token = token } }

// WithTokenFile says the token was generated and is kept in path: the
// start-up line and the 401s name it instead of LEASHD_WEB_TOKEN.
func WithTokenFile(path string) Option { return func(c *Connector) { c.tokenFile = path } }

// WithAgentName sets what the page calls the agent ("demo agent", or an
// agent's product name).
func WithAgentName(name string) Option { return func(c *Connector) { c.agentName = name } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(c *Connector) { c.log = l } }

// WithHeartbeat sets how often idle event streams get a comment line
// (default 15s).
func WithHeartbeat(d time.Duration) Option { return func(c *Connector) { c.heartbeat = d } }

// WithMaxStreams caps the open event streams (default DefaultMaxStreams);
// past the cap /api/events answers 503.
func WithMaxStreams(n int) Option { return func(c *Connector) { c.hub.maxStreams = n } }

// WithConnCap tells the connector how many connections the server holds
// at most: the event streams are kept below it, so that something can
// always make room for a new client.
func WithConnCap(n int) Option { return func(c *Connector) { c.connCap = n } }

// WithWriteTimeout bounds each write of an event stream (default 15s): a
// client that stops reading is cut off after it. Give the server's
// write timeout.
func WithWriteTimeout(d time.Duration) Option { return func(c *Connector) { c.writeTimeout = d } }

// WithMaxWaits caps the long-polls (GET /api/interactions/{id}?wait=N,
// N > 0) waiting at once (default DefaultMaxWaits); past the cap they
// answer 503 with Retry-After.
func WithMaxWaits(n int) Option { return func(c *Connector) { c.maxWaits = n } }

// WithMaxChats caps the chats the connector lists (default
// DefaultMaxChats): past it the ones idle longest are forgotten.
func WithMaxChats(n int) Option { return func(c *Connector) { c.maxChats = n } }

// DefaultMaxWaits is how many long-polls wait at once unless WithMaxWaits
// says otherwise.
const DefaultMaxWaits = 256

// DefaultMaxStreams is how many event streams are served at once unless
// WithMaxStreams says otherwise.
const DefaultMaxStreams = 100

// New returns a web connector.
func New(opts ...Option) *Connector {
	c := &Connector{
		agentName:    "agent",
		heartbeat:    15 * time.Second,
		hub:          newHub(4096, 8<<20, DefaultMaxStreams),
		writeTimeout: 15 * time.Second,
		maxWaits:     DefaultMaxWaits,
		maxChats:     DefaultMaxChats,

		state:     errors.New("web: not listening yet"),
		streams:   make(map[string]*streaming),
		chats:     make(map[string]*chatInfo),
		selected:  make(map[string][]string),
		awaiting:  make(map[string]bool),
		approvals: make(map[string][]interactions.Approver),

		interrupted: make(map[string]interrupted),
	}
	c.quit, c.quitPoll = context.WithCancel(context.Background())
	for _, o := range opts {
		o(c)
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.heartbeat <= 0 {
		c.heartbeat = 15 * time.Second
	}
	if c.writeTimeout <= 0 {
		c.writeTimeout = 15 * time.Second
	}
	if c.maxChats <= 0 {
		c.maxChats = DefaultMaxChats
	}
	return c
}

// Name implements connectors.Connector.
func (c *Connector) Name() string { return "web" }

// WatchesAll implements connectors.Watcher: the page shows every chat.
func (c *Connector) WatchesAll() bool { return true }

// Ready implements connectors.Readier: nil while serving.
func (c *Connector) Ready() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// URL is the base URL the page is served at (see WithURL).
func (c *Connector) URL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.url
}

// Run takes input until ctx is done, then refuses new event streams and
// ends long-polls, and returns nil; the open event streams stay open for
// what shutdown publishes (the interactions it interrupts) until Flush.
func (c *Connector) Run(ctx context.Context, h connectors.Handler) error {
	c.fitStreams()
	c.fitWaits() // before any request is served (maxWaits is read unlocked)
	c.handler.Store(&h)
	url := c.URL()
	// Logged before it reports ready, so whoever waits for ready finds the
	// line with the address in the log.
	if c.tokenFile != "" {
		c.log.Info("leashd web UI at "+url+" (token required: open the address with ?token= printed above once, or send Authorization: Bearer <token>; the token is in "+c.tokenFile+")", "agent", c.agentName)
	} else {
		c.log.Info("leashd web UI at "+url+" (token required: open "+url+"/?token=<LEASHD_WEB_TOKEN> once, or send Authorization: Bearer <LEASHD_WEB_TOKEN>)", "agent", c.agentName)
	}
	c.setState(nil)
	<-ctx.Done()
	c.setState(errors.New("web: shutting down"))
	c.stopping.Store(true)
	c.hub.refuse() // no new event streams
	c.quitPoll()   // long-polls end now: their clients ask again after the restart
	return nil
}

// fitStreams keeps the event streams below the server's connection cap:
// streams never end by themselves, so were they allowed to take every
// connection, nothing could make room for a new client.
func (c *Connector) fitStreams() {
	if c.connCap <= 0 {
		return
	}
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	if c.hub.maxStreams <= 0 || c.hub.maxStreams >= c.connCap {
		n := max(c.connCap/2, 1)
		c.log.Warn(fmt.Sprintf("web: LEASHD_WEB_MAX_STREAMS=%d leaves no connection for anything else (at most %d connections); serving at most %d event streams", c.hub.maxStreams, c.connCap, n))
		c.hub.maxStreams = n
	}
}

// fitWaits keeps the long-polls and the event streams together below
// three quarters of the connection cap: the rest is for replies, health
// checks and the page, which must never find every connection waiting.
func (c *Connector) fitWaits() {
	if c.maxWaits <= 0 {
		c.maxWaits = DefaultMaxWaits
	}
	if c.connCap <= 0 {
		return
	}
	c.hub.mu.Lock()
	streams := c.hub.maxStreams
	c.hub.mu.Unlock()
	room := max(c.connCap-max(c.connCap/4, 1)-streams, 1)
	if c.maxWaits > room {
		c.log.Warn(fmt.Sprintf("web: LEASHD_WEB_MAX_WAITS=%d and LEASHD_WEB_MAX_STREAMS=%d leave too few of the %d connections for replies and health checks; serving at most %d long-polls", c.maxWaits, streams, c.connCap, room))
		c.maxWaits = room
	}
}

// Flush implements connectors.Flusher. The engine calls it at shutdown
// once the interruptions are published: the event streams get them (and a
// server.stopping event), then end. It returns when they have ended, or
// with ctx's error.
func (c *Connector) Flush(ctx context.Context) error {
	if !c.stopping.Load() {
		return nil // not stopping: nothing is held back
	}
	c.flushOnce.Do(func() {
		c.hub.publish("server.stopping", "", []byte(`{"notice":"`+stoppingNotice+`"}`), 0)
		c.hub.close() // the streams send what they hold, then end
	})
	select {
	case <-c.hub.ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stoppingNotice is the last event of every stream when leashd stops.
const stoppingNotice = "leashd is stopping; pending requests were interrupted and can be answered once it is back"

// Streams is the number of open event streams.
func (c *Connector) Streams() int { return c.hub.streams() }

func (c *Connector) setState(err error) {
	c.mu.Lock()
	c.state = err
	c.mu.Unlock()
}
