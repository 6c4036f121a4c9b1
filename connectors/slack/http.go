package slack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// maxBody bounds what an HTTP mode request may carry.
const maxBody = 1 << 20

// Mount implements connectors.Mounter: in HTTP mode (a signing secret and
// no app token) it serves eventsPath, interactionsPath and commandsPath.
// Every request's signature is verified over the raw body (bad or stale:
// 401, nothing processed) and answered at once; the work happens after.
func (c *Connector) Mount(mux *http.ServeMux) {
	if c.secret == "" || c.appToken != "" {
		return
	}
	mux.HandleFunc("POST "+eventsPath, c.serveEvents)
	mux.HandleFunc("POST "+interactionsPath, c.serveInteractions)
	mux.HandleFunc("POST "+commandsPath, c.serveCommands)
}

// verified reads the body and checks Slack's signature and timestamp.
func (c *Connector) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "request body unreadable or over 1 MiB", http.StatusBadRequest)
		return nil, false
	}
	if err := c.verify(r.Header, body); err != nil {
		c.log.Warn("slack request refused", "path", r.URL.Path, c.errAttr(err))
		http.Error(w, "invalid Slack signature: "+err.Error(), http.StatusUnauthorized)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// running answers 503 until Run has started, so Slack retries what would
// otherwise be acknowledged and lost.
func (c *Connector) running(w http.ResponseWriter) bool {
	if c.handler() == nil {
		http.Error(w, "leashd is starting; retry shortly", http.StatusServiceUnavailable)
		return false
	}
	return true
}

// verify checks the X-Slack-Signature over the body and that the
// X-Slack-Request-Timestamp is within maxSkew of now.
func (c *Connector) verify(header http.Header, body []byte) error {
	ts, err := strconv.ParseInt(header.Get("X-Slack-Request-Timestamp"), 10, 64)
	if err != nil {
		return errors.New("missing or malformed X-Slack-Request-Timestamp")
	}
	if d := time.Since(time.Unix(ts, 0)).Abs(); d > c.maxSkew {
		return fmt.Errorf("request timestamp is %s away from now (at most %s accepted)", d.Round(time.Second), c.maxSkew)
	}
	sv, err := slack.NewSecretsVerifier(header, c.secret)
	if err != nil {
		return fmt.Errorf("cannot verify: %w", err)
	}
	if _, err := sv.Write(body); err != nil {
		return err
	}
	if err := sv.Ensure(); err != nil {
		return errors.New("signature does not match the signing secret")
	}
	return nil
}

func (c *Connector) serveEvents(w http.ResponseWriter, r *http.Request) {
	body, ok := c.verified(w, r)
	if !ok {
		return
	}
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil {
		http.Error(w, "not an Events API payload: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch ev.Type {
	case slackevents.URLVerification:
		uv, _ := ev.Data.(*slackevents.EventsAPIURLVerificationEvent)
		if uv == nil {
			http.Error(w, "url_verification without a challenge", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, uv.Challenge)
	case slackevents.CallbackEvent:
		if !c.running(w) {
			return
		}
		w.WriteHeader(http.StatusOK)
		eventID := ""
		if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok {
			eventID = cb.EventID
		}
		c.onEvent(eventID, ev)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

func (c *Connector) serveInteractions(w http.ResponseWriter, r *http.Request) {
	body, ok := c.verified(w, r)
	if !ok || !c.running(w) {
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		http.Error(w, "expected a form with a payload field", http.StatusBadRequest)
		return
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		http.Error(w, "payload is not an interaction: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
	c.onInteraction(cb)
}

func (c *Connector) serveCommands(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.verified(w, r); !ok || !c.running(w) {
		return
	}
	cmd, err := slack.SlashCommandParse(r)
	if err != nil {
		http.Error(w, "not a slash command: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
	c.onCommand(cmd)
}
