package tgfake

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

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
