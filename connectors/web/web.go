// Package web is leashd's web connector: one self-contained page (embedded
// in the binary) and a JSON + Server-Sent Events API that watch every chat
// of every connector and answer its questions, plan reviews and tool
// approvals.
//
// Routes (all /api routes need the token when one is set: the header
// "Authorization: Bearer <token>", or the cookie the page gets from
// /?token=<token>; without a token they answer only localhost host names):
//
//	GET  /                                 the page (/?token=… sets the cookie)
//	GET  /api/info                         {"agent","auth","boot"}
//	GET  /api/events[?chat=C][&after=ID]   SSE: message, message.updated, user.message,
//	                                       interaction.requested/.updated/.resolved, agent.done,
//	                                       server.stopping (last, at shutdown);
//	                                       Last-Event-ID or after= replays what was missed
//	                                       (after=0: all kept); ": heartbeat" every 15s;
//	                                       at most WithMaxStreams open at once (then 503)
//	GET  /api/chats                        known chats, most recent first
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
// (interaction_id, chat_id, kind, header, question, options, multi_select,
// index, total, plan, tool_name, tool_input, tool_summary, option_texts,
// selected, awaiting_feedback; interrupted and notice for a request a
// restart interrupted that still takes an answer). interaction.updated has
// selected and awaiting_feedback; interaction.resolved has status, answer,
// decision, text and by. Events people see carry the time it happened:
// asked_at on requests, at on messages (when first shown), user messages,
// resolutions and agent.done.
//
// Errors are JSON {"error":"…"}: 400 bad request (naming what is accepted),
// 401 no or wrong token, 403 cross-site request, foreign host without a
// token, or not allowed, 404 unknown interaction or chat, 409 no longer pending,
// 413 body larger than 64 KiB, 503 starting or stopping, or too many event
// streams or connections (see connlimit.go for the connection cap).
package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
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
	agentName string
	log       *slog.Logger
	heartbeat time.Duration
	hub       *hub
	// writeTimeout bounds each write of an event stream, as the server's
	// WriteTimeout bounds a response.
	writeTimeout time.Duration
	connCap      int // the server's connection cap (0: unknown)

	// Shutdown: Run's context ends → stopping; Flush → the streams get
	// what is left and end.
	stopping  atomic.Bool
	flushOnce sync.Once

	handler atomic.Pointer[connectors.Handler]
	// quit ends long-polls (GET /api/interactions/{id}?wait=) when the
	// server shuts down, so they do not hold up the shutdown.
	quit     context.Context
	quitPoll context.CancelFunc

	mu       sync.Mutex
	url      string
	state    error // nil while serving
	msgSeq   int
	streams  map[string]*streaming // chat → the agent text being streamed
	chats    map[string]*chatInfo
	selected map[string][]string // interaction → multi-select selection
	awaiting map[string]bool     // plan review → adjust awaiting feedback
	// approvals: interaction needing a quorum → the approvals so far
	approvals map[string][]interactions.Approver
	// interrupted are requests a restart interrupted that can still be
	// answered (the engine sends the answer to the agent as a prompt).
	interrupted map[string]interrupted
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
	Pending  int       `json:"pending"`
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

// WithAgentName sets what the page calls the agent ("demo agent",
// "Claude Code").
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
	c.handler.Store(&h)
	c.fitStreams()
	c.mu.Lock()
	url := c.url
	c.state = nil
	c.mu.Unlock()
	if c.token != "" {
		c.log.Info("leashd web UI at "+url+" (token required: open "+url+"/?token=<LEASHD_WEB_TOKEN> once, or send Authorization: Bearer <LEASHD_WEB_TOKEN>)", "agent", c.agentName)
	} else {
		c.log.Info("leashd web UI at "+url, "agent", c.agentName)
	}
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

// ---- Output: what the engine says, as events ----

type messageEvent struct {
	ChatID    string `json:"chat_id"`
	MessageID string `json:"message_id"`
	Text      string `json:"text"`
	// At is when the message was first shown (an update keeps it).
	At time.Time `json:"at"`
}

type userEvent struct {
	ChatID string    `json:"chat_id"`
	Text   string    `json:"text"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
}

type doneEvent struct {
	ChatID     string    `json:"chat_id"`
	Result     string    `json:"result"`
	IsError    bool      `json:"is_error"`
	CostUSD    float64   `json:"cost_usd"`
	NumTurns   int       `json:"num_turns"`
	Tools      []string  `json:"tools"`
	DurationMS int64     `json:"duration_ms"`
	Summary    string    `json:"summary"`
	At         time.Time `json:"at"`
}

// interactionView is an interaction as the API shows it: every field is
// present whatever the kind (zero when unused), so clients need no guessing.
type interactionView struct {
	ID          string            `json:"interaction_id"`
	ChatID      string            `json:"chat_id"`
	Kind        interactions.Kind `json:"kind"`
	Header      string            `json:"header"`
	Question    string            `json:"question"`
	Options     []optionView      `json:"options"`
	MultiSelect bool              `json:"multi_select"`
	Index       int               `json:"index"` // 1-based, of Total
	Total       int               `json:"total"`
	Plan        string            `json:"plan"`
	ToolName    string            `json:"tool_name"`
	ToolInput   json.RawMessage   `json:"tool_input"` // the tool's JSON object; null when none
	// ToolSummary is the tool call for people: the command, or the file
	// and an excerpt of the change.
	ToolSummary string `json:"tool_summary"`
	// What the agent said about a tool approval: why it asks, the MCP
	// server, whether Deny comes first (no quick approval), whether "allow
	// for this session" is left out, whether the whole input must be
	// shown. Notes are those facts as lines for people.
	Reason          string     `json:"reason"`
	MCPServer       string     `json:"mcp_server"`
	DefaultToNo     bool       `json:"default_to_no"`
	NoSessionAllow  bool       `json:"no_session_allow"`
	RequiresDetails bool       `json:"requires_details"`
	Notes           []string   `json:"notes"`
	AskedAt         time.Time  `json:"asked_at"`
	Deadline        *time.Time `json:"deadline,omitempty"`
	// OptionTexts are the buttons' texts, by option ("Allow for this
	// session" for allow_session).
	OptionTexts      []string `json:"option_texts"`
	Selected         []string `json:"selected"`
	AwaitingFeedback bool     `json:"awaiting_feedback"`
	// Interrupted is set on a request a restart interrupted (pending
	// again since the start-up): it is no longer waiting in the agent,
	// but it is answered as before and the answer is sent to the agent as
	// its next prompt. Notice says so.
	Interrupted bool   `json:"interrupted,omitempty"`
	Notice      string `json:"notice,omitempty"`
	// Quorum is how many distinct approvers it needs (0: one); QuorumText
	// the approvals so far, "1 of 2 approvals — U1" (the page and the API
	// each count as one approver, "web").
	Quorum     int                     `json:"quorum,omitempty"`
	Approvals  []interactions.Approver `json:"approvals,omitempty"`
	QuorumText string                  `json:"quorum_text,omitempty"`
}

type optionView struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

type updatedEvent struct {
	ID               string            `json:"interaction_id"`
	ChatID           string            `json:"chat_id"`
	Kind             interactions.Kind `json:"kind"`
	Selected         []string          `json:"selected"`
	AwaitingFeedback bool              `json:"awaiting_feedback"`
	// Approvals so far of one that needs a quorum, and as people read it.
	Approvals  []interactions.Approver `json:"approvals,omitempty"`
	QuorumText string                  `json:"quorum_text,omitempty"`
}

type resolvedEvent struct {
	ID       string              `json:"interaction_id"`
	ChatID   string              `json:"chat_id"`
	Kind     interactions.Kind   `json:"kind"`
	Status   interactions.Status `json:"status"`
	Answer   string              `json:"answer"`
	Decision string              `json:"decision"`
	Text     string              `json:"text"`
	By       string              `json:"by"`
	At       time.Time           `json:"at"`
	// Approvals: every approval counted towards its quorum.
	Approvals []interactions.Approver `json:"approvals,omitempty"`
}

// maxStreamMessage starts a new message when streamed text grows past it.
const maxStreamMessage = 64 << 10

// publishLocked sends an event and notes the chat's activity; replaces is
// the seq of an event this one makes obsolete (0: none). It returns the
// event's seq.
func (c *Connector) publishLocked(name, chat string, v any, last string, replaces uint64) uint64 {
	data, err := json.Marshal(v)
	if err != nil { // only plain structs are published
		c.log.Error("web: encoding event", "event", name, "err", err)
		return 0
	}
	ci := c.chats[chat]
	if ci == nil {
		ci = &chatInfo{ID: chat}
		c.chats[chat] = ci
	}
	ci.Updated = time.Now()
	if last != "" {
		ci.LastText = connectors.Truncate(last, 120)
	}
	return c.hub.publish(name, chat, data, replaces)
}

func (c *Connector) newMessageIDLocked() string {
	c.msgSeq++
	return fmt.Sprintf("m%d", c.msgSeq)
}

// Say implements connectors.Output.
func (c *Connector) Say(_ context.Context, chatID, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, chatID) // later agent text goes below this
	c.publishLocked("message", chatID, messageEvent{chatID, c.newMessageIDLocked(), text, time.Now()}, text, 0)
	return nil
}

// StreamText implements connectors.Output: the first text of a run is a
// message, each later one an update carrying the whole text so far.
func (c *Connector) StreamText(_ context.Context, chatID, text string) error {
	if text == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streams[chatID]
	if s == nil || len(s.text)+len(text) > maxStreamMessage {
		// A new message does not start with the blank lines that
		// separated it from what came before.
		text = strings.TrimLeft(text, " \t\r\n")
		if text == "" {
			return nil
		}
		s = &streaming{id: c.newMessageIDLocked(), at: time.Now()}
		c.streams[chatID] = s
		s.text = append(s.text, text...)
		c.publishLocked("message", chatID, messageEvent{chatID, s.id, string(s.text), s.at}, string(s.text), 0)
		return nil
	}
	s.text = append(s.text, text...)
	s.last = c.publishLocked("message.updated", chatID, messageEvent{chatID, s.id, string(s.text), s.at}, string(s.text), s.last)
	return nil
}

// Done implements connectors.Output.
func (c *Connector) Done(_ context.Context, chatID string, s connectors.Summary) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, chatID)
	tools := s.Tools
	if tools == nil {
		tools = []string{}
	}
	c.publishLocked("agent.done", chatID, doneEvent{
		ChatID: chatID, Result: s.Result, IsError: s.IsError, CostUSD: s.CostUSD, NumTurns: s.NumTurns,
		Tools: tools, DurationMS: s.Duration.Milliseconds(), Summary: s.Line(), At: time.Now(),
	}, s.Line(), 0)
	return nil
}

func (c *Connector) viewLocked(it interactions.Interaction) interactionView {
	v := interactionView{
		ID: it.ID, ChatID: it.ChatID, Kind: it.Kind, Header: it.Header, Question: it.Question,
		Options: make([]optionView, len(it.Options)), MultiSelect: it.MultiSelect, Index: it.Index, Total: it.Total,
		Plan: it.Plan, ToolName: it.ToolName, ToolInput: it.ToolInput, ToolSummary: it.ToolSummary, AskedAt: it.AskedAt,
		Reason: it.Reason, MCPServer: it.MCPServer, DefaultToNo: it.DefaultToNo, NoSessionAllow: it.NoSessionAllow,
		RequiresDetails: it.RequiresDetails, Notes: connectors.ToolNotes(it), Quorum: it.Quorum,
		OptionTexts: make([]string, len(it.Options)), Selected: c.selected[it.ID], AwaitingFeedback: c.awaiting[it.ID],
	}
	if len(v.ToolInput) > 0 && !json.Valid(v.ToolInput) {
		v.ToolInput = nil // never break the event's JSON
	}
	if !it.Deadline.IsZero() {
		d := it.Deadline
		v.Deadline = &d
	}
	for i, o := range it.Options {
		v.Options[i] = optionView{o.Label, o.Description}
		v.OptionTexts[i] = connectors.OptionText(it, o.Label)
	}
	if v.Selected == nil {
		v.Selected = []string{}
	}
	if v.Notes == nil {
		v.Notes = []string{}
	}
	if it.NeedsQuorum() {
		v.Quorum, v.Approvals = it.Quorum, c.approvals[it.ID]
		v.QuorumText = interactions.QuorumText(it, v.Approvals, nil)
	}
	if in, ok := c.interrupted[it.ID]; ok {
		v.Interrupted, v.Notice = true, in.notice
	} else if it.Restored {
		v.Interrupted, v.Notice = true, interactions.InterruptedNotice
	}
	return v
}

// Present implements connectors.Output. The reference is the interaction
// ID: the page finds its card by it.
func (c *Connector) Present(_ context.Context, it *interactions.Interaction) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, it.ChatID)
	c.publishLocked("interaction.requested", it.ChatID, c.viewLocked(*it), describe(*it), 0)
	return "web:" + it.ID, nil
}

func describe(it interactions.Interaction) string {
	switch it.Kind {
	case interactions.KindPlanReview:
		return "Plan review"
	case interactions.KindToolApproval:
		return "Approve " + it.ToolName + "?"
	}
	return it.Question
}

// Update implements connectors.Output.
func (c *Connector) Update(_ context.Context, ev interactions.Event) error {
	it := ev.Interaction
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ev.Type {
	case interactions.EventUpdated:
		if ev.AwaitingFeedback {
			c.awaiting[it.ID] = true
		}
		sel := slices.Clone(ev.Selected)
		if sel == nil {
			sel = []string{}
		}
		if it.MultiSelect {
			c.selected[it.ID] = sel
		}
		up := updatedEvent{ID: it.ID, ChatID: it.ChatID, Kind: it.Kind, Selected: sel, AwaitingFeedback: c.awaiting[it.ID]}
		if len(ev.Approvals) > 0 {
			c.approvals[it.ID] = slices.Clone(ev.Approvals)
			up.Approvals, up.QuorumText = ev.Approvals, interactions.QuorumText(it, ev.Approvals, nil)
		}
		c.publishLocked("interaction.updated", it.ChatID, up, "", 0)
	case interactions.EventResolved:
		delete(c.selected, it.ID)
		delete(c.awaiting, it.ID)
		r := ev.Resolution
		resolved := resolvedEvent{
			ID: it.ID, ChatID: it.ChatID, Kind: it.Kind, Status: r.Status,
			Answer: r.Answer, Decision: r.Decision, Text: r.Text, By: r.By, At: r.At, Approvals: r.Approvals,
		}
		if r.Status == interactions.StatusInterrupted {
			c.approvals[it.ID] = slices.Clone(ev.Approvals) // shown again with them
		} else {
			delete(c.approvals, it.ID)
		}
		if r.Status == interactions.StatusInterrupted {
			if c.stopping.Load() {
				// Interrupted by this process's shutdown: the open streams
				// see it resolved as interrupted before they end, then the
				// notice below (its buttons work again after the restart).
				c.publishLocked("interaction.resolved", it.ChatID, resolved, "", 0)
			}
			// Interrupted by a restart: with the engine's recovery its
			// buttons keep working, so it is shown (again) as a request,
			// with the selection so far.
			c.interrupted[it.ID] = interrupted{it, r.Text}
			if it.MultiSelect && ev.Selected != nil {
				c.selected[it.ID] = slices.Clone(ev.Selected)
			}
			v := c.viewLocked(it)
			c.publishLocked("interaction.requested", it.ChatID, v, describe(it), 0)
			return nil
		}
		delete(c.interrupted, it.ID)
		c.publishLocked("interaction.resolved", it.ChatID, resolved, "", 0)
	}
	return nil
}

// chatList is the known chats, most recent first, with pending counts.
func (c *Connector) chatList(h connectors.Handler) []chatInfo {
	pending := map[string]int{}
	for _, it := range h.Pending("") {
		pending[it.ChatID]++
	}
	c.mu.Lock()
	out := make([]chatInfo, 0, len(c.chats))
	for _, ci := range c.chats {
		x := *ci
		x.Pending = pending[x.ID]
		out = append(out, x)
	}
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out
}
