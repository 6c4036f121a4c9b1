package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// pushMessage is what the service worker (static/sw.js) shows.
type pushMessage struct {
	Title  string `json:"title"`
	Body   string `json:"body"`
	URL    string `json:"url"` // the page at the chat and the question
	Tag    string `json:"tag"` // one notification per interaction
	Urgent bool   `json:"urgent,omitempty"`
}

// How long a push service keeps a push for a phone that is offline, and
// how urgently it delivers it, by kind: an approval holds the agent up
// and is worth waking the phone for; a question or a plan can wait a
// little longer on a phone saving its battery.
var pushTTL = map[interactions.Kind]time.Duration{
	interactions.KindToolApproval: 15 * time.Minute,
	interactions.KindPlanReview:   time.Hour,
	interactions.KindQuestion:     time.Hour,
}

var pushUrgency = map[interactions.Kind]webpush.Urgency{
	interactions.KindToolApproval: webpush.UrgencyHigh,
	interactions.KindPlanReview:   webpush.UrgencyHigh,
	interactions.KindQuestion:     webpush.UrgencyNormal,
}

// notifyLocked sends it to its chat's subscriptions, in the background,
// unless a page of the chat is visible. Called with c.mu held (Present).
func (c *Connector) notifyLocked(it interactions.Interaction) {
	p := c.push
	if p == nil || p.shown(it.ChatID) {
		return
	}
	msg := pushMessage{Title: "leashd · " + c.chatLabelLocked(it.ChatID), Body: connectors.Truncate(pushText(it), 600),
		URL: "/?chat=" + url.QueryEscape(it.ChatID) + "#i-" + url.QueryEscape(it.ID), Tag: it.ID,
		Urgent: it.Kind != interactions.KindQuestion}
	payload, _ := json.Marshal(msg)
	ttl := pushTTL[it.Kind]
	if !it.Deadline.IsZero() {
		ttl = min(ttl, max(time.Until(it.Deadline), time.Minute))
	}
	opts := webpush.Options{HTTPClient: p.cfg.Client, Subscriber: p.cfg.Subscriber, TTL: int(ttl.Seconds()),
		Urgency: pushUrgency[it.Kind], Topic: topic(it.ID), VAPIDPublicKey: p.cfg.PublicKey, VAPIDPrivateKey: p.cfg.PrivateKey}
	log := c.log
	p.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		subs, err := p.cfg.Store.PushSubscriptions(ctx, it.ChatID)
		if err != nil {
			log.Warn("web push: reading subscriptions", "chat", it.ChatID, "err", err)
			return
		}
		for _, s := range subs {
			p.send(ctx, s, payload, opts, log)
		}
	})
}

// send pushes payload to one subscription; a push service that says it
// is gone (404, 410) has the subscription deleted.
func (p *pusher) send(ctx context.Context, s PushSubscription, payload []byte, opts webpush.Options, log interface {
	Warn(string, ...any)
	Info(string, ...any)
}) {
	if err := p.checkSubscription(s); err != nil { // the allowed hosts may have changed since
		log.Warn("web push: not sending to a subscription leashd no longer accepts", "chat", s.ChatID, "err", err)
		return
	}
	sub := &webpush.Subscription{Endpoint: s.Endpoint, Keys: webpush.Keys{P256dh: s.P256dh, Auth: s.Auth}}
	resp, err := webpush.SendNotificationWithContext(ctx, payload, sub, &opts)
	if err != nil {
		log.Warn("web push: sending", "chat", s.ChatID, "host", hostOf(s.Endpoint), "err", err)
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		log.Info("web push: the subscription is gone; deleting it", "chat", s.ChatID, "host", hostOf(s.Endpoint), "status", resp.StatusCode)
		if err := p.cfg.Store.DeletePushSubscription(context.WithoutCancel(ctx), s.Endpoint); err != nil {
			log.Warn("web push: deleting a gone subscription", "err", err)
		}
	case resp.StatusCode >= 300:
		log.Warn("web push: the push service refused", "chat", s.ChatID, "host", hostOf(s.Endpoint), "status", resp.StatusCode)
	}
}

// pushText names what is asked: the question, the plan's first line, or
// the tool call.
func pushText(it interactions.Interaction) string {
	first := func(s string) string { l, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); return strings.TrimSpace(l) }
	switch it.Kind {
	case interactions.KindPlanReview:
		return "Plan review: " + strings.TrimLeft(first(it.Plan), "# ")
	case interactions.KindToolApproval:
		s := connectors.ToolAction(it.ToolName)
		if what := first(connectors.ToolCode(it)); what != "" {
			s += ": " + what
		}
		return s
	}
	if it.Question == "" {
		return it.Header
	}
	return it.Question
}

// chatLabelLocked names a chat in a push: its first message, else where it
// is. Called with c.mu held.
func (c *Connector) chatLabelLocked(chat string) string {
	if ci := c.chats[chat]; ci != nil && ci.FirstText != "" {
		return "“" + connectors.Truncate(ci.FirstText, 60) + "”"
	}
	if app, _, ok := strings.Cut(chat, ":"); ok && app != "" {
		return strings.ToUpper(app[:1]) + app[1:] + " chat"
	}
	return "your chat"
}

// topic is a push's Topic header (a push service keeps only the latest
// with one topic): the interaction's ID made URL-safe, at most 32
// characters as RFC 8030 allows.
func topic(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') && b.Len() < 32 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hostOf(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	return u.Host
}
