package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// PushSubscription is a browser's Web Push subscription to one chat: the
// push service's endpoint and the browser's keys for encrypting to it.
type PushSubscription struct {
	ChatID   string
	Endpoint string
	P256dh   string // the browser's P-256 public key, base64url
	Auth     string // its 16-byte authentication secret, base64url
}

// PushStore keeps push subscriptions (the database, across restarts).
type PushStore interface {
	SavePushSubscription(ctx context.Context, s PushSubscription) error
	PushSubscriptions(ctx context.Context, chatID string) ([]PushSubscription, error)
	// DeletePushSubscription forgets an endpoint in every chat.
	DeletePushSubscription(ctx context.Context, endpoint string) error
}

// Push turns on push notifications from the page (WithPush).
type Push struct {
	// PublicKey and PrivateKey are the server's VAPID keys, base64url
	// (an uncompressed P-256 point and its 32-byte scalar).
	PublicKey, PrivateKey string
	// Store keeps the subscriptions; nil keeps them in memory.
	Store PushStore
	// ExtraHosts are push services' hosts contacted besides the known
	// ones (KnownPushHosts): "push.example.org" or "*.example.org".
	ExtraHosts []string
	// Subscriber is the VAPID contact: an https URL or an e-mail address.
	Subscriber string
	// Client sends the pushes (tests); nil: one that follows no redirect.
	Client *http.Client
}

// KnownPushHosts are the push services browsers subscribe with: only
// these (and Push.ExtraHosts) are ever contacted, so a subscription
// cannot make leashd send requests anywhere else (SSRF).
var KnownPushHosts = []string{"fcm.googleapis.com", "updates.push.services.mozilla.com", "*.push.apple.com", "*.notify.windows.com", "web.push.apple.com"}

// WithPush turns on the page's "Notify me": subscriptions per chat, and a
// push to each when a question, plan review or approval is asked in a chat
// no open page of shows.
func WithPush(p Push) Option {
	return func(c *Connector) {
		if p.Store == nil {
			p.Store = &memPushStore{}
		}
		if p.Client == nil {
			p.Client = &http.Client{Timeout: 30 * time.Second,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		}
		if p.Subscriber == "" {
			p.Subscriber = "https://github.com/leashd/leashd"
		}
		c.push = &pusher{cfg: p, pages: map[string]presence{}, now: time.Now}
	}
}

// Bounds of what pages send.
const (
	maxPages         = 1000             // pages whose visibility is kept
	maxSubsPerChat   = 20               // subscriptions kept per chat
	visibleFor       = 75 * time.Second // a visible page reports again every 30 s
	maxEndpointBytes = 2048
)

// pusher sends a chat's subscriptions a push when it needs a person and
// none of its pages is visible.
type pusher struct {
	cfg Push
	now func() time.Time

	mu    sync.Mutex
	pages map[string]presence // a page (its client ID) → what it shows
	wg    sync.WaitGroup      // pushes being sent
}

// presence is what a page last said it shows.
type presence struct {
	chat    string
	visible bool
	at      time.Time
}

// seen records a page's report; a page not heard from in visibleFor no
// longer counts as visible (a closed phone tab says nothing).
func (p *pusher) seen(client, chat string, visible bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.pages[client]; !ok && len(p.pages) >= maxPages {
		oldest := ""
		for id, pr := range p.pages {
			if oldest == "" || pr.at.Before(p.pages[oldest].at) {
				oldest = id
			}
		}
		delete(p.pages, oldest)
	}
	p.pages[client] = presence{chat: chat, visible: visible, at: p.now()}
}

// shown reports whether a page of chat is open and visible now.
func (p *pusher) shown(chat string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	for _, pr := range p.pages {
		if pr.chat == chat && pr.visible && now.Sub(pr.at) < visibleFor {
			return true
		}
	}
	return false
}

// hostAllowed reports whether a push endpoint's host is a known push
// service's or one of extra.
func hostAllowed(host string, extra []string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, pat := range slices.Concat(KnownPushHosts, extra) {
		pat = strings.ToLower(strings.TrimSpace(pat))
		if suffix, ok := strings.CutPrefix(pat, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if pat != "" && host == pat {
			return true
		}
	}
	return false
}

// checkSubscription refuses a subscription leashd would not send to: an
// endpoint that is not https on an allowed push service, or keys that
// are not a P-256 point and a 16-byte secret.
func (p *pusher) checkSubscription(s PushSubscription) error {
	if len(s.Endpoint) > maxEndpointBytes {
		return fmt.Errorf("endpoint: %d bytes; at most %d", len(s.Endpoint), maxEndpointBytes)
	}
	u, err := url.Parse(s.Endpoint)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return errors.New("endpoint: must be an https URL of a push service")
	}
	if !hostAllowed(u.Hostname(), p.cfg.ExtraHosts) {
		return fmt.Errorf("endpoint: %s is not a known push service (accepted: %s; LEASHD_PUSH_EXTRA_HOSTS adds others)", u.Hostname(), strings.Join(KnownPushHosts, ", "))
	}
	if k, err := b64(s.P256dh); err != nil || len(k) != 65 || k[0] != 4 {
		return errors.New("keys.p256dh: must be an uncompressed P-256 public key (65 bytes), base64url")
	}
	if a, err := b64(s.Auth); err != nil || len(a) != 16 {
		return errors.New("keys.auth: must be 16 bytes, base64url")
	}
	return nil
}

// b64 decodes base64url with or without padding.
func b64(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// pushInfo answers GET /api/push: whether push is on, and the server's
// public key for PushManager.subscribe.
func (c *Connector) pushInfo(w http.ResponseWriter, _ *http.Request) {
	if c.push == nil {
		writeJSON(w, http.StatusOK, map[string]any{"enabled": false})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"enabled": true, "public_key": c.push.cfg.PublicKey})
}

// subscribeBody is POST /api/push/subscriptions: the chat and the
// browser's PushSubscription as its toJSON() gives it.
type subscribeBody struct {
	ChatID       string `json:"chat_id"`
	Subscription struct {
		Endpoint string `json:"endpoint"`
		Keys     struct {
			P256dh string `json:"p256dh"`
			Auth   string `json:"auth"`
		} `json:"keys"`
	} `json:"subscription"`
}

// subscribePush keeps a browser's subscription to a chat.
func (c *Connector) subscribePush(w http.ResponseWriter, r *http.Request) {
	if c.push == nil {
		writeError(w, http.StatusNotFound, "push notifications are off")
		return
	}
	var b subscribeBody
	if !readBody(w, r, &b) {
		return
	}
	if err := validChatID(b.ChatID); err != nil {
		writeError(w, http.StatusBadRequest, "chat_id: "+err.Error())
		return
	}
	s := PushSubscription{ChatID: b.ChatID, Endpoint: b.Subscription.Endpoint, P256dh: b.Subscription.Keys.P256dh, Auth: b.Subscription.Keys.Auth}
	if err := c.push.checkSubscription(s); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := c.push.cfg.Store.SavePushSubscription(r.Context(), s); err != nil {
		writeError(w, http.StatusInternalServerError, "keeping the subscription: "+err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"chat_id": s.ChatID, "endpoint": s.Endpoint})
}

// unsubscribePush forgets a browser's subscription (POST
// /api/push/unsubscribe {"endpoint"}).
func (c *Connector) unsubscribePush(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Endpoint string `json:"endpoint"`
	}
	if c.push == nil || !readBody(w, r, &b) {
		if c.push == nil {
			writeError(w, http.StatusNotFound, "push notifications are off")
		}
		return
	}
	if err := c.push.cfg.Store.DeletePushSubscription(r.Context(), b.Endpoint); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// presenceBody is POST /api/presence: a page says which chat it shows and
// whether it is visible (document.visibilityState).
type presenceBody struct {
	Client  string `json:"client"`
	ChatID  string `json:"chat_id"`
	Visible bool   `json:"visible"`
}

// presence records what a page shows, so that no push goes to a chat a
// person is looking at.
func (c *Connector) presence(w http.ResponseWriter, r *http.Request) {
	var b presenceBody
	if !readBody(w, r, &b) {
		return
	}
	if b.Client == "" || len(b.Client) > 100 {
		writeError(w, http.StatusBadRequest, "client: 1 to 100 characters, the page's own random ID")
		return
	}
	if err := validChatID(b.ChatID); err != nil {
		writeError(w, http.StatusBadRequest, "chat_id: "+err.Error())
		return
	}
	if c.push != nil {
		c.push.seen(b.Client, b.ChatID, b.Visible)
	}
	w.WriteHeader(http.StatusNoContent)
}

// readBody decodes a JSON request body of at most maxBody bytes, or
// answers 400 saying what was wrong.
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "the body must be a JSON object: "+err.Error())
		return false
	}
	return true
}

// memPushStore keeps subscriptions in memory (no database).
type memPushStore struct {
	mu   sync.Mutex
	subs []PushSubscription
}

func (m *memPushStore) SavePushSubscription(_ context.Context, s PushSubscription) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for i, x := range m.subs {
		if x.ChatID == s.ChatID && x.Endpoint == s.Endpoint {
			m.subs[i] = s
			return nil
		}
		if x.ChatID == s.ChatID {
			n++
		}
	}
	if n >= maxSubsPerChat {
		return fmt.Errorf("this chat has %d subscriptions already; at most %d", n, maxSubsPerChat)
	}
	m.subs = append(m.subs, s)
	return nil
}

func (m *memPushStore) PushSubscriptions(_ context.Context, chatID string) ([]PushSubscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []PushSubscription
	for _, s := range m.subs {
		if s.ChatID == chatID {
			out = append(out, s)
		}
	}
	return out, nil
}

func (m *memPushStore) DeletePushSubscription(_ context.Context, endpoint string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.subs = slices.DeleteFunc(m.subs, func(s PushSubscription) bool { return s.Endpoint == endpoint })
	return nil
}
