package telegram

// Webhook mode: Telegram posts updates to a route on leashd's HTTP server.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	pathpkg "path"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// webhookPath is the path leashd serves Telegram's update posts on in
// webhook mode: the webhook URL's own path ("/" when it has none), so that
// the URL registered with Telegram and the route served are the same. It
// fails when the URL cannot be parsed or its path cannot be a route.
func webhookPath(webhookURL string) (string, error) {
	u, err := url.Parse(webhookURL)
	if err != nil {
		return "", fmt.Errorf("telegram: the webhook URL (LEASHD_TELEGRAM_WEBHOOK_URL) is not a URL: %w", err)
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("telegram: the webhook URL (LEASHD_TELEGRAM_WEBHOOK_URL) %q is not an absolute https:// URL", webhookURL)
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	if strings.ContainsAny(p, "{}") {
		return "", fmt.Errorf("telegram: the webhook URL's path %q (LEASHD_TELEGRAM_WEBHOOK_URL) has { or }, which cannot be served; use letters, digits, - _ . and /", p)
	}
	clean := pathpkg.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	if clean != p || strings.Contains(strings.ToLower(u.EscapedPath()), "%2f") {
		return "", fmt.Errorf("telegram: the webhook URL's path %q (LEASHD_TELEGRAM_WEBHOOK_URL) has empty, . or .. segments or an escaped /, which the web server would redirect; use a clean path such as /telegram/webhook", p)
	}
	return p, nil
}

// webhookPattern is the http.ServeMux pattern for path: exactly that path
// (a trailing slash does not make it a prefix of others).
func webhookPattern(path string) string {
	if strings.HasSuffix(path, "/") {
		return "POST " + path + "{$}"
	}
	return "POST " + path
}

// runWebhook registers the webhook (with its secret) and waits; updates
// arrive through ServeHTTP.
func (c *Connector) runWebhook(ctx context.Context) error {
	delay := c.backoff
	for {
		params := tgbotapi.Params{"url": c.webhook, "secret_token": c.secret}
		_ = params.AddInterface("allowed_updates", []string{"message", "callback_query"})
		_, err := c.api().makeRequest(ctx, "setWebhook", params)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		if code, _, _ := apiCode(err); code == 400 {
			return fmt.Errorf("telegram: setWebhook refused %s: %w; check LEASHD_TELEGRAM_WEBHOOK_URL", c.webhook, err)
		}
		c.setReady(fmt.Errorf("telegram: setWebhook failing: %w", err))
		d := jitter(delay)
		c.log.Warn("telegram setWebhook failed; retrying", "in", d, "err", err)
		if sleepCtx(ctx, d) != nil {
			return nil
		}
		delay = min(delay*2, time.Minute)
	}
	c.setReady(nil)
	path, _ := webhookPath(c.webhook) // checked by Run
	c.log.Info("telegram webhook set; serving Telegram's posts at "+path+" on the web address (LEASHD_WEB_ADDR)", "url", c.webhook, "path", path)
	<-ctx.Done()
	return nil
}

// Mount implements connectors.Mounter: in webhook mode it serves Telegram's
// update posts at the webhook URL's path (webhookPath). A URL whose path
// cannot be served is not mounted; Run fails with why.
func (c *Connector) Mount(mux *http.ServeMux) {
	if c.webhook == "" {
		return
	}
	path, err := webhookPath(c.webhook)
	if err != nil {
		return
	}
	mux.Handle(webhookPattern(path), http.HandlerFunc(c.serveWebhook))
}

func (c *Connector) serveWebhook(w http.ResponseWriter, r *http.Request) {
	if !secretEqual(r.Header.Get("X-Telegram-Bot-Api-Secret-Token"), c.secret) {
		c.log.Warn("telegram webhook: request without the right secret token refused", "remote", r.RemoteAddr)
		http.Error(w, "wrong or missing X-Telegram-Bot-Api-Secret-Token", http.StatusUnauthorized)
		return
	}
	c.mu.Lock()
	ctx := c.runCtx
	c.mu.Unlock()
	if ctx == nil || ctx.Err() != nil {
		http.Error(w, "not running", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "bad update: "+err.Error(), http.StatusBadRequest)
		return
	}
	u, err := readUpdate(body)
	if bad := (*badUpdatesError)(nil); errors.As(err, &bad) {
		// Answered 200: a 4xx would have Telegram send it again, and hold
		// the chat's later updates behind it.
		c.log.Warn("telegram webhook: skipped an update that could not be read", "err", err)
	} else if err != nil {
		http.Error(w, "bad update: "+err.Error(), http.StatusBadRequest)
		return
	}
	c.dispatch(ctx, u)
	w.WriteHeader(http.StatusOK)
}
