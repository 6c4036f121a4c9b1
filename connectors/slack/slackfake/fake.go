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
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
}

// Rejection is a call refused because its blocks broke Slack's limits.
type Rejection struct {
	Method string
	Blocks string
	Errors []string
}

type wsConn struct {
	c  *websocket.Conn
	mu sync.Mutex
}

func (w *wsConn) write(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return w.c.WriteJSON(v)
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

func (s *Server) nextTS() string {
	s.tsSeq++
	return fmt.Sprintf("%d.%06d", s.tsSeq/1000000, s.tsSeq%1000000)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func params(r *http.Request) (map[string]string, error) {
	out := make(map[string]string)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil && err.Error() != "EOF" {
			return nil, err
		}
		for k, v := range m {
			if s, ok := v.(string); ok {
				out[k] = s
			} else {
				b, _ := json.Marshal(v)
				out[k] = string(b)
			}
		}
		return out, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	for k, v := range r.Form {
		out[k] = v[0]
	}
	return out, nil
}

func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	p, err := params(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = p["token"]
	}
	delete(p, "token")
	call := Call{Method: method, Token: token, Params: p, At: time.Now(), Status: http.StatusOK}

	s.mu.Lock()
	defer func() {
		s.calls = append(s.calls, call)
		s.mu.Unlock()
		s.notify()
	}()
	if ra := s.limited[method]; len(ra) > 0 {
		s.limited[method] = ra[1:]
		call.Status = http.StatusTooManyRequests
		call.RetryAfter = time.Duration(ra[0]) * time.Second
		w.Header().Set("Retry-After", strconv.Itoa(ra[0]))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"})
		return
	}
	want := s.BotToken
	if method == "apps.connections.open" {
		want = s.AppToken
	}
	if token != want {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	if e, ok := s.failNext[method]; ok {
		delete(s.failNext, method)
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": e})
		return
	}
	switch method {
	case "chat.postMessage", "chat.update", "chat.postEphemeral":
		if errs := ValidateBlocks(p["blocks"]); len(errs) > 0 {
			s.rejected = append(s.rejected, Rejection{Method: method, Blocks: p["blocks"], Errors: errs})
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_blocks", "errors": errs})
			return
		}
	}
	switch method {
	case "auth.test":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "url": "https://fake.slack.test/", "team": "Fake", "user": "leashd", "team_id": TeamID, "user_id": BotUserID, "bot_id": BotID})
	case "apps.connections.open":
		u := "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/ws"
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "url": u})
	case "users.info":
		name, ok := s.users[p["user"]]
		if !ok {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "user_not_found"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "user": map[string]any{"id": p["user"], "name": name, "real_name": name}})
	case "chat.postMessage":
		if p["channel"] == "" {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
			return
		}
		m := &Message{Channel: p["channel"], TS: s.nextTS(), ThreadTS: p["thread_ts"], Text: p["text"], Blocks: rawBlocks(p["blocks"]), Posted: rawBlocks(p["blocks"])}
		s.msgs = append(s.msgs, m)
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "message": map[string]any{"text": m.Text, "ts": m.TS}})
	case "chat.update":
		for _, m := range s.msgs {
			if m.Channel == p["channel"] && m.TS == p["ts"] {
				m.Text = p["text"]
				m.Blocks = rawBlocks(p["blocks"])
				m.Edits++
				writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text})
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "message_not_found"})
	case "chat.postEphemeral":
		s.ephemeral = append(s.ephemeral, Ephemeral{Channel: p["channel"], User: p["user"], Text: p["text"], ThreadTS: p["thread_ts"]})
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "message_ts": s.nextTS()})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "unknown_method"})
	}
}

func rawBlocks(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// Block Kit limits the fake enforces, as Slack does.
const (
	MaxBlocks         = 50   // blocks in a message
	MaxTextObject     = 3000 // characters of a section's or context element's text
	MaxButtonText     = 75   // characters of a button's (plain_text) text
	MaxButtonValue    = 2000 // characters of a button's value
	MaxID             = 255  // characters of an action_id or block_id
	MaxActionElements = 25   // elements in an actions block
	MaxContextElems   = 10   // elements in a context block
)

// ValidateBlocks checks a message's blocks (JSON, as sent in the blocks
// field; empty means none) against Slack's limits and returns what is
// wrong, each problem with its JSON pointer as Slack reports it.
func ValidateBlocks(raw string) []string {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	var blocks []map[string]any
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return []string{"blocks are not a JSON array of objects: " + err.Error()}
	}
	var errs []string
	bad := func(ptr, format string, args ...any) {
		errs = append(errs, fmt.Sprintf(format, args...)+" [json-pointer:"+ptr+"]")
	}
	if len(blocks) > MaxBlocks {
		bad("/blocks", "no more than %d items allowed, got %d", MaxBlocks, len(blocks))
	}
	blockIDs := map[string]bool{}
	actionIDs := map[string]bool{}
	id := func(ptr, kind string, v any, seen map[string]bool) {
		s, _ := v.(string)
		if v == nil {
			return // Slack generates one
		}
		switch n := utf8.RuneCountInString(s); {
		case n == 0:
			bad(ptr, "%s must not be empty", kind)
		case n > MaxID:
			bad(ptr, "%s must be at most %d characters, got %d", kind, MaxID, n)
		}
		if seen[s] {
			bad(ptr, "%s %q is not unique within the message", kind, s)
		}
		seen[s] = true
	}
	text := func(ptr string, v any, max int, plainOnly bool) {
		obj, ok := v.(map[string]any)
		if !ok {
			bad(ptr, "a text object is required")
			return
		}
		typ, _ := obj["type"].(string)
		if typ != "plain_text" && (plainOnly || typ != "mrkdwn") {
			bad(ptr+"/type", "text type %q not allowed here", typ)
		}
		t, _ := obj["text"].(string)
		switch n := utf8.RuneCountInString(t); {
		case strings.TrimSpace(t) == "":
			bad(ptr+"/text", "must be more than 0 characters")
		case n > max:
			bad(ptr+"/text", "must be less than %d characters, got %d", max+1, n)
		}
	}
	for i, b := range blocks {
		ptr := fmt.Sprintf("/blocks/%d", i)
		id(ptr+"/block_id", "block_id", b["block_id"], blockIDs)
		switch b["type"] {
		case "section":
			if b["text"] == nil && b["fields"] == nil {
				bad(ptr, "a section needs text or fields")
			}
			if b["text"] != nil {
				text(ptr+"/text", b["text"], MaxTextObject, false)
			}
			fields, _ := b["fields"].([]any)
			for j, f := range fields {
				text(fmt.Sprintf("%s/fields/%d", ptr, j), f, 2000, false)
			}
		case "context":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > MaxContextElems {
				bad(ptr+"/elements", "a context block needs 1 to %d elements, got %d", MaxContextElems, len(els))
			}
			for j, el := range els {
				if m, ok := el.(map[string]any); ok && m["type"] == "image" {
					continue
				}
				text(fmt.Sprintf("%s/elements/%d", ptr, j), el, MaxTextObject, false)
			}
		case "actions":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > MaxActionElements {
				bad(ptr+"/elements", "an actions block needs 1 to %d elements, got %d", MaxActionElements, len(els))
			}
			for j, el := range els {
				eptr := fmt.Sprintf("%s/elements/%d", ptr, j)
				m, _ := el.(map[string]any)
				id(eptr+"/action_id", "action_id", m["action_id"], actionIDs)
				if m["type"] != "button" {
					continue
				}
				text(eptr+"/text", m["text"], MaxButtonText, true)
				if v, ok := m["value"].(string); ok && utf8.RuneCountInString(v) > MaxButtonValue {
					bad(eptr+"/value", "must be at most %d characters, got %d", MaxButtonValue, utf8.RuneCountInString(v))
				}
			}
		case "header":
			text(ptr+"/text", b["text"], 150, true)
		case "divider", "image", "rich_text", "input", "file", "video":
		default:
			bad(ptr+"/type", "unknown block type %v", b["type"])
		}
	}
	return errs
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

// Disconnect asks every Socket Mode client to reconnect, as Slack does
// before it recycles a connection.
func (s *Server) Disconnect() {
	s.mu.Lock()
	conns := slices.Clone(s.conns)
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.write(map[string]any{"type": "disconnect", "reason": "refresh_requested"})
	}
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

// --- Socket Mode ---

func (s *Server) ws(w http.ResponseWriter, r *http.Request) {
	c, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	conn := &wsConn{c: c}
	s.mu.Lock()
	s.conns = append(s.conns, conn)
	s.accepted++
	s.mu.Unlock()
	s.notify()
	_ = conn.write(map[string]any{"type": "hello", "num_connections": 1, "connection_info": map[string]any{"app_id": "A1"}})
	stop := make(chan struct{})
	go func() { // Slack pings; the client reconnects when it hears none
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				conn.mu.Lock()
				err := c.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second))
				conn.mu.Unlock()
				if err != nil {
					return
				}
			}
		}
	}()
	defer close(stop)
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			s.mu.Lock()
			s.conns = slices.DeleteFunc(s.conns, func(x *wsConn) bool { return x == conn })
			s.mu.Unlock()
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) == nil && ack.EnvelopeID != "" {
			s.mu.Lock()
			s.acks[ack.EnvelopeID] = Ack{EnvelopeID: ack.EnvelopeID, Payload: ack.Payload, At: time.Now()}
			s.mu.Unlock()
			s.notify()
		}
	}
}

// Connected reports how many Socket Mode connections are open.
func (s *Server) Connected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Accepted counts the Socket Mode connections ever opened.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// Push sends an envelope of this type ("events_api", "interactive",
// "slash_commands") with payload on the newest Socket Mode connection and
// returns its envelope ID. retry > 0 marks it as Slack's retry_attempt.
func (s *Server) Push(typ string, payload any, retry int) (string, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if len(s.conns) == 0 {
		s.mu.Unlock()
		return "", fmt.Errorf("slackfake: no Socket Mode connection")
	}
	conn := s.conns[len(s.conns)-1]
	s.envSeq++
	id := fmt.Sprintf("env-%d", s.envSeq)
	s.sent[id] = time.Now()
	s.mu.Unlock()
	env := map[string]any{"envelope_id": id, "type": typ, "payload": json.RawMessage(raw), "accepts_response_payload": typ != "events_api", "retry_attempt": retry, "retry_reason": ""}
	if retry > 0 {
		env["retry_reason"] = "timeout"
	}
	return id, conn.write(env)
}

// Acked returns the acknowledgement of envelope id, if it arrived.
func (s *Server) Acked(id string) (Ack, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.acks[id]
	return a, ok
}

// AckDelay is how long the acknowledgement of id took, once it arrived.
func (s *Server) AckDelay(id string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.acks[id]
	if !ok {
		return 0, false
	}
	return a.At.Sub(s.sent[id]), true
}

// --- payload builders ---

// EventCallback wraps an inner event as Slack's event_callback.
func EventCallback(eventID string, inner map[string]any) map[string]any {
	return map[string]any{
		"token": "verif", "team_id": TeamID, "api_app_id": "A1", "type": "event_callback",
		"event_id": eventID, "event_time": time.Now().Unix(), "event": inner,
	}
}

// MessageEvent is a person's message. threadTS may be empty; channelType is
// "im" or "channel".
func MessageEvent(channel, channelType, user, ts, threadTS, text string) map[string]any {
	m := map[string]any{"type": "message", "channel": channel, "channel_type": channelType, "user": user, "text": text, "ts": ts, "event_ts": ts}
	if threadTS != "" {
		m["thread_ts"] = threadTS
	}
	return m
}

// MentionEvent is an app_mention.
func MentionEvent(channel, user, ts, threadTS, text string) map[string]any {
	m := map[string]any{"type": "app_mention", "channel": channel, "user": user, "text": text, "ts": ts, "event_ts": ts}
	if threadTS != "" {
		m["thread_ts"] = threadTS
	}
	return m
}

// BlockAction is a block_actions payload: user tapped the button
// actionID/value on message msg (its text taken from msg's blocks).
func BlockAction(user string, msg Message, actionID, value string) map[string]any {
	text := "x"
	for _, b := range Buttons(msg.Blocks) {
		if b.ActionID == actionID {
			text = b.Text
		}
	}
	return BlockActionText(user, msg, actionID, value, text)
}

// BlockActionText is BlockAction with the tapped button's text given.
func BlockActionText(user string, msg Message, actionID, value, text string) map[string]any {
	container := map[string]any{"type": "message", "message_ts": msg.TS, "channel_id": msg.Channel, "is_ephemeral": false}
	if msg.ThreadTS != "" {
		container["thread_ts"] = msg.ThreadTS
	}
	return map[string]any{
		"type":         "block_actions",
		"user":         map[string]any{"id": user, "username": user, "name": user, "team_id": TeamID},
		"api_app_id":   "A1",
		"token":        "verif",
		"container":    container,
		"trigger_id":   "trig",
		"team":         map[string]any{"id": TeamID},
		"channel":      map[string]any{"id": msg.Channel, "name": "chan"},
		"message":      map[string]any{"type": "message", "ts": msg.TS, "thread_ts": msg.ThreadTS, "text": msg.Text, "blocks": msg.Blocks},
		"response_url": "https://hooks.invalid/actions",
		"actions":      []any{map[string]any{"type": "button", "action_id": actionID, "block_id": "b", "value": value, "action_ts": "1.1", "text": map[string]any{"type": "plain_text", "text": text}}},
	}
}

// SlashCommand is a /leashd command payload (form fields as Slack sends them).
func SlashCommand(channel, user, text string) url.Values {
	return url.Values{
		"command": {"/leashd"}, "text": {text}, "channel_id": {channel}, "user_id": {user},
		"user_name": {user}, "team_id": {TeamID}, "trigger_id": {"trig"}, "response_url": {"https://hooks.invalid/cmd"},
	}
}

// FormMap turns form values into the map Socket Mode slash_commands
// payloads carry.
func FormMap(v url.Values) map[string]string {
	out := make(map[string]string, len(v))
	for k := range v {
		out[k] = v.Get(k)
	}
	return out
}

// Buttons lists the (action_id, value, text) of every button in blocks.
func Buttons(blocks json.RawMessage) []Button {
	var bs []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Text     struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	_ = json.Unmarshal(blocks, &bs)
	var out []Button
	for _, b := range bs {
		if b.Type != "actions" {
			continue
		}
		for _, e := range b.Elements {
			if e.Type == "button" {
				out = append(out, Button{ActionID: e.ActionID, Value: e.Value, Text: e.Text.Text})
			}
		}
	}
	return out
}

// Button is a button found in a message.
type Button struct{ ActionID, Value, Text string }

// Texts returns every text of every block (section text and fields,
// context elements, headers), joined by newlines: what a person reads.
func Texts(blocks json.RawMessage) string {
	var bs []map[string]any
	_ = json.Unmarshal(blocks, &bs)
	var parts []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if t, ok := x["text"].(string); ok && (x["type"] == "mrkdwn" || x["type"] == "plain_text") {
				parts = append(parts, t)
			}
			for k, y := range x {
				if k == "elements" && x["type"] == "actions" {
					continue // buttons are not prose
				}
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	for _, b := range bs {
		walk(b)
	}
	return strings.Join(parts, "\n")
}
