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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
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
	queryChat  map[string]int64 // callback query ID → the chat it was tapped in
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

// SetLimits changes the enforced rates.
func (s *Server) SetLimits(l Limits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.PerChatWindow == 0 {
		l.PerChatWindow = time.Second
	}
	if l.GlobalWindow == 0 {
		l.GlobalWindow = time.Second
	}
	if l.RetryAfter == 0 {
		l.RetryAfter = 1
	}
	s.limits = l
}

// ExhaustChat counts chatID's PerChat window as used up now, under the
// limits set: its next request is answered 429 with RetryAfter, whichever
// request that is. (Hits are not kept while no limit is set, so a window
// starts empty when SetLimits turns one on.)
func (s *Server) ExhaustChat(chatID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.chatHits[chatID] = slices.Repeat([]time.Time{now}, max(s.limits.PerChat, 1))
}

// SetConflict makes getUpdates answer 409 (another poller) while on.
func (s *Server) SetConflict(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conflict = on
	s.notifyLocked()
	s.notifyPollLocked()
}

// FailNext makes the next n calls of method fail with HTTP status code
// (e.g. 502), before any other check.
func (s *Server) FailNext(method string, code, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fail[method] = append(s.fail[method], code)
	}
	if method == "getUpdates" {
		s.notifyPollLocked()
	}
}

// stall is a hold set with Stall.
type stall struct {
	hold     func(Request) bool
	released chan struct{}
	held     int // requests waiting now
	done     bool
}

func (st *stall) releaseLocked() {
	if !st.done {
		st.done = true
		close(st.released)
	}
}

// Stall makes the fake hang, as a slow or stuck Telegram would, every
// request (any method but getUpdates) for which hold returns true: it is
// received, then served only once release is called (or the fake closes;
// a client that gives up meanwhile gets no answer). hold sees the request
// as Requests records it, with the ChatID of answerCallbackQuery being
// the chat the button was tapped in. Held reports how many wait now.
func (s *Server) Stall(hold func(Request) bool) (release func()) {
	st := &stall{hold: hold, released: make(chan struct{})}
	s.mu.Lock()
	s.stalls = append(s.stalls, st)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		st.releaseLocked()
		s.stalls = slices.DeleteFunc(s.stalls, func(x *stall) bool { return x == st })
	}
}

// Held is how many requests a Stall holds now.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, st := range s.stalls {
		n += st.held
	}
	return n
}

// stallLocked returns the Stall holding req (nil: none), counting req as
// held; the caller waits for its release and uncounts req.
func (s *Server) stallLocked(req Request) *stall {
	for _, st := range s.stalls {
		if !st.done && st.hold(req) {
			st.held++
			s.notifyLocked()
			return st
		}
	}
	return nil
}

// Text injects a text message from user in chat (negative chat IDs are
// groups) and returns its update ID.
func (s *Server) Text(chatID, userID int64, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextMsg[chatID]++
	m := &tgbotapi.Message{
		MessageID: s.nextMsg[chatID],
		From:      s.userLocked(userID),
		Chat:      chat(chatID),
		Date:      int(s.now().Unix()),
		Text:      text,
	}
	if strings.HasPrefix(text, "/") {
		cmd, _, _ := strings.Cut(text, " ")
		m.Entities = []tgbotapi.MessageEntity{{Type: "bot_command", Offset: 0, Length: len(cmd)}}
	}
	s.msgs[chatID] = append(s.msgs[chatID], &Message{ID: m.MessageID, ChatID: chatID, Text: text})
	return s.pushLocked(tgbotapi.Update{Message: m})
}

// SetUserName sets the first name users are shown with (default "User N").
func (s *Server) SetUserName(userID int64, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[userID] = name
}

// Tap injects a button tap (a callback query) by user on a message, with
// the given callback data, and returns the query ID.
func (s *Server) Tap(chatID, userID int64, messageID int, data string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tapLocked(chatID, userID, messageID, data)
}

// Push injects an arbitrary update (e.g. a duplicate) as it is; an
// UpdateID of 0 is assigned the next ID. It returns the update ID.
func (s *Server) Push(u tgbotapi.Update) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.UpdateID != 0 {
		s.queueLocked(u)
		return u.UpdateID
	}
	return s.pushLocked(u)
}

func (s *Server) tapLocked(chatID, userID int64, messageID int, data string) string {
	s.nextQuery++
	id := "q" + strconv.Itoa(s.nextQuery)
	s.queryChat[id] = chatID
	var msg *tgbotapi.Message
	if m := s.findLocked(chatID, messageID); m != nil {
		msg = &tgbotapi.Message{MessageID: m.ID, Chat: chat(chatID), Text: m.Text, ReplyMarkup: m.Markup}
	}
	s.pushLocked(tgbotapi.Update{CallbackQuery: &tgbotapi.CallbackQuery{
		ID: id, From: s.userLocked(userID), Message: msg, ChatInstance: "ci" + strconv.FormatInt(chatID, 10), Data: data,
	}})
	return id
}

// TapButton taps the button whose text is text on a message; it fails when
// the message has no such button.
func (s *Server) TapButton(chatID, userID int64, messageID int, text string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findLocked(chatID, messageID)
	if m == nil {
		return "", fmt.Errorf("tgfake: chat %d has no message %d", chatID, messageID)
	}
	if m.Markup != nil {
		for _, row := range m.Markup.InlineKeyboard {
			for _, b := range row {
				if b.Text == text && b.CallbackData != nil {
					return s.tapLocked(chatID, userID, messageID, *b.CallbackData), nil
				}
			}
		}
	}
	return "", fmt.Errorf("tgfake: message %d in chat %d has no button %q (buttons: %q)", messageID, chatID, text, m.Buttons())
}

// Messages returns a copy of a chat's messages (the users' and the bot's)
// in order.
func (s *Server) Messages(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.msgs[chatID]))
	for _, m := range s.msgs[chatID] {
		out = append(out, *m)
	}
	return out
}

// BotMessages returns the messages the bot sent in a chat.
func (s *Server) BotMessages(chatID int64) []Message {
	var out []Message
	for _, m := range s.Messages(chatID) {
		if m.FromBot {
			out = append(out, m)
		}
	}
	return out
}

// CallbackAnswer returns the answer to a tap, if the bot gave one.
func (s *Server) CallbackAnswer(queryID string) (CallbackAnswer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.answers[queryID]
	return a, ok
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Count returns how many requests of method were received (any outcome).
func (s *Server) Count(method string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == method {
			n++
		}
	}
	return n
}

// Violations lists requests sent to a chat before the retry_after of a
// 429 for that chat had elapsed.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

// Webhook returns the webhook URL and secret token set with setWebhook.
func (s *Server) Webhook() (string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhookURL, s.secret
}

// Commands returns the command list set with setMyCommands.
func (s *Server) Commands() []tgbotapi.BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.commands)
}

// PendingUpdates is how many updates are not yet confirmed by getUpdates
// or accepted (2xx) by the webhook.
func (s *Server) PendingUpdates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates) + s.hookPendingLocked()
}

// Wait blocks until cond holds (checked after every change) or timeout
// passes, and reports whether it held. cond must not call methods that
// block forever; it may call the Server's accessors.
func (s *Server) Wait(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond): // cond may depend on others' state
		case <-deadline.C:
			return cond()
		}
	}
}

func chat(id int64) *tgbotapi.Chat {
	if id < 0 {
		return &tgbotapi.Chat{ID: id, Type: "supergroup", Title: "Group " + strconv.FormatInt(-id, 10)}
	}
	return &tgbotapi.Chat{ID: id, Type: "private"}
}

func (s *Server) userLocked(id int64) *tgbotapi.User {
	name, ok := s.users[id]
	if !ok {
		name = "User " + strconv.FormatInt(id, 10)
	}
	return &tgbotapi.User{ID: id, FirstName: name}
}

func (s *Server) findLocked(chatID int64, id int) *Message {
	for _, m := range s.msgs[chatID] {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// notifyPollLocked wakes a waiting getUpdates.
func (s *Server) notifyPollLocked() {
	close(s.polled)
	s.polled = make(chan struct{})
}

// queuedUpdate is an update not yet confirmed, encoded once when queued.
type queuedUpdate struct {
	id  int
	raw []byte
}

func (s *Server) pushLocked(u tgbotapi.Update) int {
	s.nextUpdate++
	u.UpdateID = s.nextUpdate
	s.queueLocked(u)
	return u.UpdateID
}

// queueLocked queues u for getUpdates, or posts it to the webhook if one
// is set.
func (s *Server) queueLocked(u tgbotapi.Update) {
	raw, _ := json.Marshal(u)
	s.notifyLocked()
	if s.webhookURL == "" {
		s.updates = append(s.updates, queuedUpdate{id: u.UpdateID, raw: raw})
		s.notifyPollLocked()
		return
	}
	s.enqueueHookLocked(updateChat(u), queuedUpdate{id: u.UpdateID, raw: raw})
}

// Webhook delivery, modelled on the Bot API server (tdlib/telegram-bot-api,
// WebhookActor): updates are grouped in queues, one per chat; at most one
// update of a queue is in flight, so a chat's updates arrive in update_id
// order, each only after the previous one was answered 2xx; queues are
// served first come, first served, over at most max_connections requests
// (and keep-alive connections) at a time. A non-2xx answer, a broken
// connection or no answer within the timeout (60s, WithWebhookTimeout) is
// not dropped: the update is sent again, at once the first time, then after
// 2s, 4s, ... (at most a minute here), and the chat's later updates wait.

// DefaultMaxConnections is setWebhook's max_connections when not given
// (Telegram's default); the value is clamped to 1-100 as Telegram does.
const DefaultMaxConnections = 40

// hookKey names a delivery queue: a chat, or (for an update without one)
// a queue of its own.
type hookKey struct {
	chat int64
	solo int
}

// hookQueue is one chat's updates not yet accepted by the webhook.
type hookQueue struct {
	items   []queuedUpdate
	busy    bool          // the head is in flight or waits for its retry
	sending bool          // the head is in flight
	delay   time.Duration // before the next retry of the head
	fails   int
}

// WithWebhookTimeout sets how long the fake waits for the webhook to
// answer a delivery before it gives up on that attempt and retries
// (Telegram: 60s).
func WithWebhookTimeout(d time.Duration) Option {
	return func(s *Server) { s.hookTimeout = d }
}

// updateChat is the chat an update belongs to (0: none).
func updateChat(u tgbotapi.Update) int64 {
	switch {
	case u.Message != nil && u.Message.Chat != nil:
		return u.Message.Chat.ID
	case u.CallbackQuery != nil && u.CallbackQuery.Message != nil && u.CallbackQuery.Message.Chat != nil:
		return u.CallbackQuery.Message.Chat.ID
	case u.CallbackQuery != nil && u.CallbackQuery.From != nil:
		return u.CallbackQuery.From.ID
	case u.EditedMessage != nil && u.EditedMessage.Chat != nil:
		return u.EditedMessage.Chat.ID
	}
	return 0
}

// enqueueHookLocked queues an update for the webhook and sends what may
// be sent.
func (s *Server) enqueueHookLocked(chat int64, q queuedUpdate) {
	k := hookKey{chat: chat}
	if chat == 0 {
		s.hookSolo++
		k.solo = s.hookSolo
	}
	hq := s.hookQueues[k]
	if hq == nil {
		hq = &hookQueue{}
		s.hookQueues[k] = hq
	}
	hq.items = append(hq.items, q)
	s.hookPending++
	if !hq.busy && len(hq.items) == 1 {
		s.hookReady = append(s.hookReady, k)
	}
	s.pumpHookLocked()
}

// pumpHookLocked starts deliveries while a connection is free and a queue
// has an update ready.
func (s *Server) pumpHookLocked() {
	for s.webhookURL != "" && !s.closed && s.hookInFlight < s.maxConns && len(s.hookReady) > 0 {
		k := s.hookReady[0]
		s.hookReady = s.hookReady[1:]
		hq := s.hookQueues[k]
		if hq == nil || hq.busy || len(hq.items) == 0 {
			continue
		}
		hq.busy, hq.sending = true, true
		s.hookInFlight++
		s.deliverWG.Add(1)
		go s.deliver(k, hq.items[0], s.webhookURL, s.secret, s.hookClient)
	}
}

// deliver posts one update to the webhook and settles its queue.
func (s *Server) deliver(k hookKey, q queuedUpdate, target, secret string, client *http.Client) {
	defer s.deliverWG.Done()
	status, errText := 0, ""
	req, err := http.NewRequestWithContext(s.hookCtx, http.MethodPost, target, bytes.NewReader(q.raw))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		var resp *http.Response
		if resp, err = client.Do(req); err == nil {
			status = resp.StatusCode
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			if status < 200 || status > 299 {
				errText = "Wrong response from the webhook: " + resp.Status
			}
		}
	}
	if err != nil {
		errText = "Connection failed: " + err.Error()
		if errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err) {
			errText = "Read timeout expired"
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hookInFlight--
	s.requests = append(s.requests, Request{At: s.now(), Method: "webhook", ChatID: k.chat, Status: status,
		Params: url.Values{"update_id": {strconv.Itoa(q.id)}}, Error: errText})
	s.notifyLocked()
	hq := s.hookQueues[k]
	hq.sending = false
	switch {
	case errText != "" && s.webhookURL == "":
		// The webhook was deleted meanwhile: getUpdates answers it.
		s.updates = append(s.updates, q)
		slices.SortFunc(s.updates, func(a, b queuedUpdate) int { return a.id - b.id })
		s.notifyPollLocked()
		fallthrough
	case errText == "":
		hq.items = hq.items[1:]
		s.hookPending--
		hq.busy, hq.fails, hq.delay = false, 0, 0
		if len(hq.items) == 0 {
			delete(s.hookQueues, k)
		} else {
			s.hookReady = append(s.hookReady, k)
		}
	case s.closed:
	default:
		s.hookErr, s.hookErrAt = errText, s.now()
		hq.fails++
		// Telegram retries at once the first time, then after 2s, 4s, ...
		wait := hq.delay
		hq.delay = min(max(2*hq.delay, 2*time.Second), time.Minute)
		if hq.fails == 1 {
			wait = 0
		}
		if wait == 0 {
			hq.busy = false
			s.hookReady = append(s.hookReady, k)
			break
		}
		s.deliverWG.Add(1)
		t := time.AfterFunc(wait, func() {
			defer s.deliverWG.Done()
			s.mu.Lock()
			defer s.mu.Unlock()
			hq.busy = false
			if s.hookQueues[k] == hq && len(hq.items) > 0 {
				s.hookReady = append(s.hookReady, k)
			}
			s.pumpHookLocked()
		})
		s.hookTimers = append(s.hookTimers, t)
	}
	s.pumpHookLocked()
}

// hookPendingLocked is how many updates wait for the webhook (counted as
// they come and go: the benchmarks ask before every tap).
func (s *Server) hookPendingLocked() int { return s.hookPending }

// unhookLocked hands the updates still waiting for a webhook that was
// deleted to getUpdates, in update_id order (an update in flight stays
// with its delivery).
func (s *Server) unhookLocked() {
	for k, hq := range s.hookQueues {
		from := 0
		if hq.sending {
			from = 1
		}
		s.updates = append(s.updates, hq.items[from:]...)
		s.hookPending -= len(hq.items) - from
		hq.items = hq.items[:from]
		if len(hq.items) == 0 {
			delete(s.hookQueues, k)
		}
	}
	s.hookReady = nil
	slices.SortFunc(s.updates, func(a, b queuedUpdate) int { return a.id - b.id })
	s.notifyPollLocked()
}

// newHookClient is the client deliveries use: at most max connections to
// the webhook, kept alive between deliveries.
func newHookClient(max int, timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxConnsPerHost = max
	tr.MaxIdleConnsPerHost = max
	return &http.Client{Transport: tr, Timeout: timeout}
}

type apiError struct {
	code int
	desc string
	wait int
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if err := r.ParseForm(); err != nil {
		writeErr(w, apiError{400, "Bad Request: " + err.Error(), 0})
		return
	}
	if !ok || !ok2 {
		writeErr(w, apiError{404, "Not Found", 0})
		return
	}
	if token != s.token {
		writeErr(w, apiError{401, "Unauthorized", 0})
		return
	}
	if method == "getUpdates" {
		s.getUpdates(w, r)
		return
	}
	// Parsing the content needs no state: done before the lock, so that
	// requests (and the long poll) do not queue behind each other's parsing.
	pc := parseContent(method, r.Form)
	s.mu.Lock()
	req := Request{At: s.now(), Method: method, Params: r.Form, Status: http.StatusOK}
	req.ChatID, _ = strconv.ParseInt(r.Form.Get("chat_id"), 10, 64)
	if method == "answerCallbackQuery" {
		req.ChatID = s.queryChat[r.Form.Get("callback_query_id")]
	}
	if st := s.stallLocked(req); st != nil {
		s.mu.Unlock()
		gone := false
		select {
		case <-st.released:
		case <-r.Context().Done():
			gone = true
		}
		s.mu.Lock()
		st.held--
		s.notifyLocked()
		if gone {
			s.mu.Unlock()
			return
		}
		req.At = s.now()
	}
	result, aerr := s.callLocked(method, r.Form, pc)
	if aerr != nil {
		req.Status, req.Error = aerr.code, aerr.desc
	}
	s.requests = append(s.requests, req)
	s.notifyLocked()
	s.mu.Unlock()
	if aerr != nil {
		writeErr(w, *aerr)
		return
	}
	writeOK(w, result)
}

func writeOK(w http.ResponseWriter, result any) {
	raw, _ := json.Marshal(result)
	body := make([]byte, 0, len(raw)+32)
	body = append(body, `{"ok":true,"result":`...)
	body = append(body, raw...)
	writeBody(w, append(body, '}', '\n'))
}

// writeBody answers 200 with a JSON body in one write, with its length:
// the client reads it whole without waiting for more pieces.
func writeBody(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

func writeErr(w http.ResponseWriter, e apiError) {
	resp := tgbotapi.APIResponse{Ok: false, ErrorCode: e.code, Description: e.desc}
	if e.wait > 0 {
		resp.Parameters = &tgbotapi.ResponseParameters{RetryAfter: e.wait}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.code)
	_ = json.NewEncoder(w).Encode(resp)
}

// rateLocked applies the limits to a request for chatID (0: none).
func (s *Server) rateLocked(chatID int64) *apiError {
	now := s.now()
	if chatID != 0 {
		if until, ok := s.penalty[chatID]; ok && now.Before(until) {
			s.violations = append(s.violations, fmt.Sprintf("chat %d: request %s before retry_after elapsed", chatID, until.Sub(now)))
			return &apiError{429, fmt.Sprintf("Too Many Requests: retry after %d", int(until.Sub(now).Seconds())+1), int(until.Sub(now).Seconds()) + 1}
		}
	}
	limited := func(hits []time.Time, n int, win time.Duration) ([]time.Time, bool) {
		if n <= 0 {
			// Not enforced: keeping every hit of the window would make
			// each request cost more, under the lock, the busier the fake.
			return nil, false
		}
		hits = slices.DeleteFunc(hits, func(t time.Time) bool { return now.Sub(t) >= win })
		if n > 0 && len(hits) >= n {
			return hits, true
		}
		return append(hits, now), false
	}
	var over bool
	s.globalHits, over = limited(s.globalHits, s.limits.Global, s.limits.GlobalWindow)
	if !over && chatID != 0 {
		s.chatHits[chatID], over = limited(s.chatHits[chatID], s.limits.PerChat, s.limits.PerChatWindow)
	}
	if over {
		wait := s.limits.RetryAfter
		if chatID != 0 {
			s.penalty[chatID] = now.Add(time.Duration(wait) * time.Second)
		}
		return &apiError{429, fmt.Sprintf("Too Many Requests: retry after %d", wait), wait}
	}
	return nil
}

// content is a request's text and keyboard, checked.
type content struct {
	text   string
	markup *tgbotapi.InlineKeyboardMarkup
	err    *apiError
}

// parseContent checks the text and keyboard of the methods that carry them.
func parseContent(method string, f url.Values) content {
	var c content
	switch method {
	case "sendMessage", "editMessageText":
		c.text, c.markup, c.err = checkContent(f)
	case "editMessageReplyMarkup":
		c.markup, c.err = parseMarkup(f.Get("reply_markup"))
	}
	return c
}

func (s *Server) callLocked(method string, f url.Values, pc content) (any, *apiError) {
	if codes := s.fail[method]; len(codes) > 0 {
		s.fail[method] = codes[1:]
		return nil, &apiError{codes[0], http.StatusText(codes[0]), 0}
	}
	chatID, _ := strconv.ParseInt(f.Get("chat_id"), 10, 64)
	switch method {
	case "sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage":
		if chatID == 0 {
			return nil, &apiError{400, "Bad Request: chat_id is empty", 0}
		}
		if e := s.rateLocked(chatID); e != nil {
			return nil, e
		}
	}
	switch method {
	case "getMe":
		return tgbotapi.User{ID: 123456, IsBot: true, FirstName: "leashd", UserName: "leashd_bot"}, nil
	case "setMyCommands":
		var cmds []tgbotapi.BotCommand
		if err := json.Unmarshal([]byte(f.Get("commands")), &cmds); err != nil {
			return nil, &apiError{400, "Bad Request: can't parse commands JSON object", 0}
		}
		s.commands = cmds
		return true, nil
	case "setWebhook":
		u := f.Get("url")
		if u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://127.0.0.1") {
			return nil, &apiError{400, "Bad Request: bad webhook: HTTPS url must be provided for webhook", 0}
		}
		sec := f.Get("secret_token")
		if sec != "" && !validSecret(sec) {
			return nil, &apiError{400, "Bad Request: secret token contains unallowed characters", 0}
		}
		conns := DefaultMaxConnections
		if v := f.Get("max_connections"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, &apiError{400, "Bad Request: max_connections must be an integer 1-100", 0}
			}
			conns = min(max(n, 1), 100) // Telegram clamps it to 1-100
		}
		if u == "" {
			s.unhookLocked()
		}
		s.webhookURL, s.secret = u, sec
		if conns != s.maxConns {
			s.hookClient.CloseIdleConnections()
			s.maxConns, s.hookClient = conns, newHookClient(conns, s.hookTimeout)
		}
		// Updates queued for getUpdates go to the webhook now, in order.
		if u != "" {
			for _, q := range s.updates {
				var up tgbotapi.Update
				_ = json.Unmarshal(q.raw, &up)
				s.enqueueHookLocked(updateChat(up), q)
			}
			s.updates = nil
		}
		s.pumpHookLocked()
		s.notifyPollLocked() // a pending getUpdates now conflicts
		return true, nil
	case "deleteWebhook":
		s.unhookLocked()
		s.webhookURL, s.secret = "", ""
		s.notifyPollLocked()
		return true, nil
	case "getWebhookInfo":
		info := tgbotapi.WebhookInfo{URL: s.webhookURL, PendingUpdateCount: len(s.updates) + s.hookPendingLocked()}
		if s.webhookURL != "" {
			info.MaxConnections = s.maxConns
			if s.hookErr != "" {
				info.LastErrorDate, info.LastErrorMessage = int(s.hookErrAt.Unix()), s.hookErr
			}
		}
		return info, nil
	case "answerCallbackQuery":
		id := f.Get("callback_query_id")
		if _, done := s.answers[id]; done || id == "" {
			return nil, &apiError{400, "Bad Request: query is too old and response timeout expired or query ID is invalid", 0}
		}
		if len([]rune(f.Get("text"))) > 200 {
			return nil, &apiError{400, "Bad Request: MESSAGE_TOO_LONG", 0}
		}
		s.answers[id] = CallbackAnswer{Text: f.Get("text"), ShowAlert: f.Get("show_alert") == "true", At: s.now()}
		return true, nil
	case "sendMessage":
		text, markup, e := pc.text, pc.markup, pc.err
		if e != nil {
			return nil, e
		}
		s.nextMsg[chatID]++
		m := &Message{ID: s.nextMsg[chatID], ChatID: chatID, FromBot: true, Text: text, ParseMode: f.Get("parse_mode"), Markup: markup}
		s.msgs[chatID] = append(s.msgs[chatID], m)
		return tgbotapi.Message{MessageID: m.ID, Chat: chat(chatID), Date: int(s.now().Unix()), Text: text, ReplyMarkup: markup}, nil
	case "editMessageText", "editMessageReplyMarkup":
		id, _ := strconv.Atoi(f.Get("message_id"))
		m := s.findLocked(chatID, id)
		if m == nil || !m.FromBot {
			return nil, &apiError{400, "Bad Request: message to edit not found", 0}
		}
		text, parse := m.Text, m.ParseMode
		var markup *tgbotapi.InlineKeyboardMarkup
		if method == "editMessageText" {
			var e *apiError
			text, markup, e = pc.text, pc.markup, pc.err
			if e != nil {
				return nil, e
			}
			parse = f.Get("parse_mode")
		} else {
			var e *apiError
			markup, e = pc.markup, pc.err
			if e != nil {
				return nil, e
			}
		}
		if text == m.Text && parse == m.ParseMode && sameMarkup(markup, m.Markup) {
			return nil, &apiError{400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message", 0}
		}
		m.Text, m.ParseMode, m.Markup = text, parse, markup
		m.Edits++
		return tgbotapi.Message{MessageID: m.ID, Chat: chat(chatID), Text: text, ReplyMarkup: markup}, nil
	case "deleteMessage":
		id, _ := strconv.Atoi(f.Get("message_id"))
		list := s.msgs[chatID]
		i := slices.IndexFunc(list, func(m *Message) bool { return m.ID == id })
		if i < 0 {
			return nil, &apiError{400, "Bad Request: message to delete not found", 0}
		}
		s.msgs[chatID] = slices.Delete(list, i, i+1)
		return true, nil
	}
	return nil, &apiError{404, "Not Found: method " + method + " is not implemented by tgfake", 0}
}

func checkContent(f url.Values) (string, *tgbotapi.InlineKeyboardMarkup, *apiError) {
	text := f.Get("text")
	visible := text
	switch pm := f.Get("parse_mode"); pm {
	case "":
	case "HTML":
		v, err := ParseHTML(text)
		if err != nil {
			return "", nil, &apiError{400, "Bad Request: can't parse entities: " + err.Error(), 0}
		}
		visible = v
	default:
		return "", nil, &apiError{400, "Bad Request: unsupported parse_mode " + pm + " (tgfake speaks HTML)", 0}
	}
	if strings.TrimSpace(visible) == "" {
		return "", nil, &apiError{400, "Bad Request: message text is empty", 0}
	}
	if Len(visible) > 4096 {
		return "", nil, &apiError{400, "Bad Request: message is too long", 0}
	}
	markup, e := parseMarkup(f.Get("reply_markup"))
	return text, markup, e
}

func parseMarkup(raw string) (*tgbotapi.InlineKeyboardMarkup, *apiError) {
	if raw == "" {
		return nil, nil
	}
	var m tgbotapi.InlineKeyboardMarkup
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, &apiError{400, "Bad Request: can't parse reply keyboard markup JSON object", 0}
	}
	for _, row := range m.InlineKeyboard {
		for _, b := range row {
			if b.Text == "" {
				return nil, &apiError{400, "Bad Request: text buttons are unallowed in the inline keyboard", 0}
			}
			if b.CallbackData != nil && (len(*b.CallbackData) < 1 || len(*b.CallbackData) > 64) {
				return nil, &apiError{400, "Bad Request: BUTTON_DATA_INVALID", 0}
			}
		}
	}
	if len(m.InlineKeyboard) == 0 {
		return nil, nil
	}
	return &m, nil
}

func sameMarkup(a, b *tgbotapi.InlineKeyboardMarkup) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// MaxUpdates is how many updates one getUpdates answers at most (its
// limit parameter, 1-100; Telegram's default and maximum).
const MaxUpdates = 100

func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request) {
	offset, _ := strconv.Atoi(r.Form.Get("offset"))
	timeout, _ := strconv.Atoi(r.Form.Get("timeout"))
	limit := MaxUpdates
	if v := r.Form.Get("limit"); v != "" {
		n, _ := strconv.Atoi(v)
		limit = min(max(n, 1), MaxUpdates) // Telegram clamps it to 1-100
	}
	deadline := time.Now().Add(time.Duration(timeout) * time.Second)
	for {
		s.mu.Lock()
		req := Request{At: s.now(), Method: "getUpdates", Params: r.Form, Status: http.StatusOK}
		var aerr *apiError
		switch {
		case len(s.fail["getUpdates"]) > 0:
			code := s.fail["getUpdates"][0]
			s.fail["getUpdates"] = s.fail["getUpdates"][1:]
			aerr = &apiError{code, http.StatusText(code), 0}
		case s.webhookURL != "":
			aerr = &apiError{409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first", 0}
		case s.conflict:
			aerr = &apiError{409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running", 0}
		}
		if aerr != nil {
			req.Status, req.Error = aerr.code, aerr.desc
			s.requests = append(s.requests, req)
			s.notifyLocked()
			s.mu.Unlock()
			writeErr(w, *aerr)
			return
		}
		if offset > 0 {
			s.updates = slices.DeleteFunc(s.updates, func(u queuedUpdate) bool { return u.id < offset })
		}
		if len(s.updates) > 0 || !time.Now().Before(deadline) || s.closed {
			out := s.updates[:min(len(s.updates), limit)]
			n := 32
			for _, u := range out {
				n += len(u.raw) + 1
			}
			body := make([]byte, 0, n)
			body = append(body, `{"ok":true,"result":[`...)
			for i, u := range out {
				if i > 0 {
					body = append(body, ',')
				}
				body = append(body, u.raw...)
			}
			body = append(body, "]}\n"...)
			s.requests = append(s.requests, req)
			s.notifyLocked()
			s.mu.Unlock()
			writeBody(w, body)
			return
		}
		ch := s.polled
		s.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		case <-r.Context().Done():
			return
		}
	}
}

// validSecret is Telegram's rule for secret_token: 1-256 of A-Z a-z 0-9 _ -.
func validSecret(s string) bool {
	if len(s) > 256 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
