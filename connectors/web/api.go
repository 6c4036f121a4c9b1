package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/httpserver"
	"github.com/leashd/leashd/interactions"
)

//go:embed static/index.html static/app.js
var static embed.FS

// cookieName holds the token for the page (set from /?token=).
const cookieName = "leashd_token"

// maxBody bounds request bodies.
const maxBody = 64 << 10

// webUser is who answers through the page or the API.
const webUser = "web"

// Handler returns the page and the API: the routes / and /api/…, which
// cmd/leashd mounts on its HTTP server.
func (c *Connector) Handler() http.Handler {
	mux := http.NewServeMux()
	c.Mount(mux)
	return mux
}

// Mount implements connectors.Mounter: the page and every API route on
// mux (it panics, as http.ServeMux does, when one conflicts with a route
// already there).
func (c *Connector) Mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", c.page)
	mux.HandleFunc("GET /app.js", script)
	api := func(pattern string, f http.HandlerFunc) { mux.Handle(pattern, c.protect(f)) }
	api("GET /api/info", c.info)
	api("GET /api/events", c.watching(c.events))
	api("GET /api/chats", c.pageOnly(c.listChats))
	api("POST /api/chats/{chat}/messages", c.messaging(c.postMessage))
	api("POST /api/chats/{chat}/files", c.messaging(c.postFiles)) // files.go
	api("GET /api/files/{id}", c.downloadFile)
	api("GET /api/interactions", c.listInteractions)
	api("POST /api/interactions/{id}/reply", c.answering(c.reply))
	api("POST /api/interactions/{id}/toggle", c.answering(c.toggle))
	api("POST /api/interactions/{id}/confirm", c.answering(c.confirm))
	api("POST /api/interactions/{id}/reject", c.answering(c.reject))
	api("POST /api/interactions", c.ask)
	// A long-poll waits for a person: the server's write timeout would cut
	// its answer off (httpserver.Waiting).
	api("GET /api/interactions/{id}", httpserver.Waiting(http.HandlerFunc(c.outcome), c.writeTimeout).ServeHTTP)
	api("DELETE /api/interactions/{id}", c.cancelAsk)
	c.mountPWA(mux, api)
	api("GET /api/away", c.awayState)
	api("POST /api/away", c.setAway)
	api("POST /api/away/notice", c.awayNotice)
	api("POST /api/away/activity", c.awayActivity)
	api("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API route: "+r.Method+" "+r.URL.Path)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{msg})
}

// protect puts h behind the API's rules (RequireCredential with this
// connector's credentials).
func (c *Connector) protect(h http.Handler) http.Handler {
	return RequireCredential(c.credentials(), h)
}

// credentials are those WithCredentials gave, else the page's token alone.
func (c *Connector) credentials() *Credentials {
	c.credsOnce.Do(func() {
		if c.creds == nil {
			c.creds = NewCredentials(c.token, c.tokenFile, nil, 0, 0)
		}
	})
	return c.creds
}

// RequireToken puts h behind the API's rules: every request carries the
// token, loopback or not (an agent leashd started runs as leashd's user on
// this machine, and must not answer the requests it is waiting on), and
// no state changes from a page of another site using this browser's
// cookie. tokenFile is where leashd keeps a token it generated ("": the
// token is LEASHD_WEB_TOKEN), named in the 401s. Without a token nothing
// is answered. RequireCredential also takes programs' scoped tokens.
func RequireToken(token, tokenFile string, next http.Handler) http.Handler {
	return RequireCredential(NewCredentials(token, tokenFile, nil, 0, 0), next)
}

// whereToken says where a client finds the token: LEASHD_WEB_TOKEN, or
// the file leashd generated it in.
func whereToken(tokenFile string) string {
	if tokenFile == "" {
		return "the token is LEASHD_WEB_TOKEN"
	}
	return "the token is in " + tokenFile + " (leashd made it, as LEASHD_WEB_TOKEN is not set; leashd ask and leashd mcp read it there)"
}

// tokenOK compares in constant time (hashing first, so lengths match too).
func tokenOK(got, token string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// sameOrigin refuses cross-site requests: browsers send Origin (and
// Sec-Fetch-Site) with every POST; API clients such as curl send neither.
func sameOrigin(r *http.Request) error {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return errors.New("cross-site request refused")
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || u.Host != r.Host {
		return fmt.Errorf("cross-origin request from %s refused: the API only takes requests from its own page (%s) or from clients that send no Origin", quoteShort(o), r.Host)
	}
	return nil
}

func quoteShort(s string) string { return fmt.Sprintf("%q", connectors.Truncate(s, 80)) }

// page serves the embedded page; /?token=… checks the token, sets the
// cookie and redirects to / so the token leaves the address bar. A wrong
// token gets the page with its token form shown and the error above it
// (issue #31: a bare 401 left no way back), and no cookie: an old one is
// cleared, so the page asks for the token instead of working on.
func (c *Connector) page(w http.ResponseWriter, r *http.Request) {
	if tok := r.URL.Query().Get("token"); tok != "" {
		if cred, ok := c.credentials().match(tok); !ok || !cred.page {
			why := "Wrong token."
			if ok {
				why = "This token is the program " + quoteShort(cred.Name) + "'s (LEASHD_API_TOKENS); the page needs the page's token."
			}
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode, Secure: overHTTPS(r), MaxAge: -1})
			c.servePage(w, http.StatusUnauthorized, why+" Paste the right one, or open the address with ?token= that leashd printed at start-up; "+whereToken(c.tokenFile)+".")
			return
		}
		http.SetCookie(w, &http.Cookie{
			Name: cookieName, Value: tok, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: overHTTPS(r), MaxAge: 30 * 24 * 3600,
		})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	c.servePage(w, http.StatusOK, "")
}

// loginForm is the token form's opening tag in the page, where a wrong
// token's error is put.
const loginForm = `<form id="login">`

// servePage writes the page; with loginErr, its token form is shown with
// the error.
func (c *Connector) servePage(w http.ResponseWriter, status int, loginErr string) {
	b, err := static.ReadFile("static/index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "the page is missing from the binary")
		return
	}
	if loginErr != "" {
		shown := `<form id="login" style="display:flex"><p id="loginerr" role="alert" style="color:var(--bad);font-weight:600">` + html.EscapeString(loginErr) + `</p>`
		b = bytes.Replace(b, []byte(loginForm), []byte(shown), 1)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// Scripts only from the page's own file: an injected inline script
	// would not run.
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// script serves the page's script. It holds no secret, so it needs no
// token: the token form itself runs it.
func script(w http.ResponseWriter, _ *http.Request) {
	b, err := static.ReadFile("static/app.js")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "the page's script is missing from the binary")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(b)
}

// overHTTPS reports whether the browser reached the page over HTTPS:
// directly, or through a proxy that says so (X-Forwarded-Proto). The
// cookie is then Secure, never sent over plain HTTP.
func overHTTPS(r *http.Request) bool {
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return r.TLS != nil || strings.EqualFold(strings.TrimSpace(proto), "https")
}

func (c *Connector) h(w http.ResponseWriter) (connectors.Handler, bool) {
	p := c.handler.Load()
	if p == nil {
		writeError(w, http.StatusServiceUnavailable, "leashd is starting; try again in a moment")
		return nil, false
	}
	return *p, true
}

type infoBody struct {
	Agent string `json:"agent"`
	Auth  bool   `json:"auth"`
	// Boot changes when leashd restarts (event IDs start with it).
	Boot string `json:"boot"`
}

func (c *Connector) info(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, infoBody{Agent: c.agentName, Auth: c.token != "", Boot: c.hub.boot})
}

func (c *Connector) listChats(w http.ResponseWriter, _ *http.Request) {
	h, ok := c.h(w)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, c.chatList(h))
}

// validChatID accepts 1–200 bytes of printable UTF-8.
func validChatID(id string) error {
	if id == "" {
		return errors.New("empty chat ID")
	}
	if len(id) > 200 || !utf8.ValidString(id) {
		return fmt.Errorf("chat ID %s: must be 1–200 bytes of UTF-8", quoteShort(id))
	}
	for _, r := range id {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return fmt.Errorf("chat ID %s: no spaces or control characters", quoteShort(id))
		}
	}
	return nil
}

// messageRequest is the body of POST /api/chats/{chat}/messages.
type messageRequest struct {
	Text string `json:"text"`
}

// replyRequest is the body of POST /api/interactions/{id}/reply and
// /reject.
type replyRequest struct {
	// Answers holds one list of option labels (each question is its own
	// interaction); decisions are labels too: "edit", "allow_session".
	Answers [][]string `json:"answers"`
	Text    string     `json:"text"`
}

type toggleRequest struct {
	Label string `json:"label"`
}

// decodeJSON reads one JSON object of at most maxBody bytes into v,
// refusing unknown fields; the error names what is accepted. An empty body
// is accepted when allowEmpty (v stays zero). The status is 400 or 413.
func decodeJSON(r io.Reader, v any, accepted string, allowEmpty bool) (int, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return http.StatusBadRequest, fmt.Errorf("reading the body: %w", err)
	}
	if len(b) > maxBody {
		return http.StatusRequestEntityTooLarge, fmt.Errorf("the body is larger than %d KiB", maxBody>>10)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		if allowEmpty {
			return 0, nil
		}
		return http.StatusBadRequest, fmt.Errorf("empty body: expected a JSON object %s", accepted)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return http.StatusBadRequest, fmt.Errorf("invalid JSON body (%v): expected %s", err, accepted)
	}
	if dec.More() {
		return http.StatusBadRequest, fmt.Errorf("extra data after the JSON object: expected one object %s", accepted)
	}
	return 0, nil
}

const (
	acceptedMessage = `{"text":"…"}`
	acceptedReply   = `{"answers":[["label",…]],"text":"…"} (answers: one list of option labels or one decision such as "allow"; text: free text, feedback or a reason)`
	acceptedToggle  = `{"label":"…"}`
	acceptedReject  = `{"text":"reason"} or no body`
)

// parseReply turns a reply body into an interactions.Reply.
func parseReply(body io.Reader) (interactions.Reply, int, error) {
	var req replyRequest
	if status, err := decodeJSON(body, &req, acceptedReply, false); err != nil {
		return interactions.Reply{}, status, err
	}
	if len(req.Answers) > 1 {
		return interactions.Reply{}, http.StatusBadRequest, fmt.Errorf("answers has %d lists; each question is its own interaction, so send one list of labels, e.g. {\"answers\":[[\"Auth\",\"Billing\"]]}", len(req.Answers))
	}
	r := interactions.Reply{By: webUser, Text: req.Text}
	if len(req.Answers) == 1 {
		r.Answers = req.Answers[0]
	}
	if len(r.Answers) == 0 && strings.TrimSpace(r.Text) == "" {
		return interactions.Reply{}, http.StatusBadRequest, fmt.Errorf("nothing to answer with: expected %s", acceptedReply)
	}
	return r, 0, nil
}

// statusOf maps the coordinator's errors to HTTP.
func statusOf(err error) int {
	switch {
	case errors.Is(err, interactions.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, interactions.ErrNotPending):
		return http.StatusConflict
	case errors.Is(err, interactions.ErrUnauthorized):
		return http.StatusForbidden
	case errors.Is(err, interactions.ErrInvalidReply), errors.Is(err, interactions.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, interactions.ErrClosed):
		return http.StatusServiceUnavailable
	case errors.Is(err, interactions.ErrNoPresenter):
		return http.StatusNotFound
	case errors.Is(err, interactions.ErrTooMany):
		var ce *interactions.CapError
		if errors.As(err, &ce) && ce.All {
			return http.StatusServiceUnavailable
		}
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

type routedBody struct {
	Routed connectors.Route `json:"routed"`
	Error  string           `json:"error,omitempty"`
}

func (c *Connector) postMessage(w http.ResponseWriter, r *http.Request) {
	h, ok := c.h(w)
	if !ok {
		return
	}
	chat := r.PathValue("chat")
	if err := validChatID(chat); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var req messageRequest
	if status, err := decodeJSON(r.Body, &req, acceptedMessage, false); err != nil {
		writeError(w, status, err.Error())
		return
	}
	text := strings.TrimSpace(req.Text)
	if text == "" {
		writeError(w, http.StatusBadRequest, `empty message: expected {"text":"…"} with some text`)
		return
	}
	c.mu.Lock()
	c.publishLocked("user.message", chat, userEvent{chat, text, webUser, time.Now()}, text, 0)
	c.mu.Unlock()
	// The message is handled even if the client goes away meanwhile.
	route, err := h.HandleMessage(context.WithoutCancel(r.Context()), connectors.Incoming{
		ChatID: chat, UserID: webUser, UserName: webUser, Text: text,
	})
	if err != nil {
		status := statusOf(err)
		if status == http.StatusInternalServerError && route == "" {
			status = http.StatusBadRequest
		}
		writeJSON(w, status, routedBody{Routed: route, Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusAccepted, routedBody{Routed: route})
}

// selectionSource is a Handler that knows a pending multi-select's
// selection (the engine does).
type selectionSource interface {
	Selected(id string) []string
}

func (c *Connector) reply(w http.ResponseWriter, r *http.Request) {
	h, ok := c.h(w)
	if !ok {
		return
	}
	rep, status, err := parseReply(r.Body)
	if err != nil {
		writeError(w, status, err.Error())
		return
	}
	rep.By = credential(r).Name
	out, err := h.Reply(context.WithoutCancel(r.Context()), r.PathValue("id"), rep)
	if errors.Is(err, interactions.ErrAlreadyApproved) {
		// The page and the API are one approver ("web"): a second approval
		// from here is not counted, and not an error either.
		writeJSON(w, http.StatusOK, map[string]any{"counted": false, "already_approved": true, "message": err.Error()})
		return
	}
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	if out == interactions.Counted {
		writeJSON(w, http.StatusAccepted, map[string]any{"counted": true,
			"message": "approval counted; it needs more distinct approvers (interaction.updated events carry quorum_text)"})
		return
	}
	if out == interactions.AwaitingFeedback {
		writeJSON(w, http.StatusAccepted, map[string]any{"awaiting_feedback": true,
			"message": "adjust chosen: send the feedback as text (this route with {\"text\"}, or a chat message)"})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (c *Connector) toggle(w http.ResponseWriter, r *http.Request) {
	h, ok := c.h(w)
	if !ok {
		return
	}
	var req toggleRequest
	if status, err := decodeJSON(r.Body, &req, acceptedToggle, false); err != nil {
		writeError(w, status, err.Error())
		return
	}
	sel, err := h.Toggle(r.Context(), r.PathValue("id"), req.Label, interactions.Reply{By: credential(r).Name})
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	if sel == nil {
		sel = []string{}
	}
	writeJSON(w, http.StatusOK, map[string][]string{"selected": sel})
}

func (c *Connector) confirm(w http.ResponseWriter, r *http.Request) {
	h, ok := c.h(w)
	if !ok {
		return
	}
	if status, err := decodeJSON(r.Body, &struct{}{}, "no body", true); err != nil {
		writeError(w, status, err.Error())
		return
	}
	if err := h.Confirm(context.WithoutCancel(r.Context()), r.PathValue("id"), interactions.Reply{By: credential(r).Name}); err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (c *Connector) reject(w http.ResponseWriter, r *http.Request) {
	h, ok := c.h(w)
	if !ok {
		return
	}
	var req struct {
		Text string `json:"text"`
	}
	if status, err := decodeJSON(r.Body, &req, acceptedReject, true); err != nil {
		writeError(w, status, err.Error())
		return
	}
	if _, err := h.Reply(context.WithoutCancel(r.Context()), r.PathValue("id"), interactions.Reply{By: credential(r).Name, Reject: true, Text: req.Text}); err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
