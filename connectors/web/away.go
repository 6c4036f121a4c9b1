package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/leashd/leashd/interactions"
)

// Away mode over the API (issue #29): `leashd away on|off` at the desk
// sets it, and every `leashd hook …` an agent in a terminal runs asks it
// before relaying anything: GET and POST /api/away.

// awayKeeper is implemented by a Handler that keeps the away state (the
// engine).
type awayKeeper interface {
	// Away reports whether chatID is away from the desk, and since when.
	Away(chatID string) (bool, time.Time)
	// SetAway sets it; back, the hooks' requests still pending in the
	// chat are cancelled (released counts them).
	SetAway(chatID string, on bool) (released int, err error)
	// AwayNotice tells chatID's person, when away, what their terminal
	// says (a dialog waiting there); false when at the desk.
	AwayNotice(ctx context.Context, chatID, text string) bool
	// DeskActive records a prompt typed in the terminal
	// (LEASHD_AWAY_AFTER_SECONDS counts idle time from it).
	DeskActive(chatID string) error
}

// awayBody is the body of GET /api/away and of POST's answer.
type awayBody struct {
	ChatID string     `json:"chat_id"`
	Away   bool       `json:"away"`
	Since  *time.Time `json:"since,omitempty"`
	// Released: requests returned to the terminal by this change.
	Released int `json:"released,omitempty"`
}

// awayRequest is the body of POST /api/away.
type awayRequest struct {
	ChatID string `json:"chat_id"`
	Away   *bool  `json:"away"`
}

const acceptedAway = `{"chat_id":"…","away":true|false}`

// Limits of a relayed request's Source.
const (
	maxSessionIDBytes = 200
	maxCwdBytes       = 4096
)

// checkSource checks the source of a relayed request (nil: none).
func checkSource(s *interactions.Source) (*interactions.Source, error) {
	if s == nil {
		return nil, nil
	}
	out := *s
	out.Kind = strings.TrimSpace(out.Kind)
	switch {
	case out.Kind != interactions.SourceHook:
		return nil, askFieldError("source.kind", "%s is not a source (accepted: %q)", quoteShort(out.Kind), interactions.SourceHook)
	case len(out.SessionID) > maxSessionIDBytes || !utf8.ValidString(out.SessionID):
		return nil, askFieldError("source.session_id", "must be at most %d bytes of UTF-8", maxSessionIDBytes)
	case len(out.Cwd) > maxCwdBytes || !utf8.ValidString(out.Cwd):
		return nil, askFieldError("source.cwd", "must be at most %d bytes of UTF-8", maxCwdBytes)
	case strings.ContainsFunc(out.SessionID+out.Cwd, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return nil, askFieldError("source", "session_id and cwd take no control characters")
	}
	return &out, nil
}

// awayKeeperOf returns the handler's away state, or answers 501.
func (c *Connector) awayKeeperOf(w http.ResponseWriter) (awayKeeper, bool) {
	h, ok := c.h(w)
	if !ok {
		return nil, false
	}
	a, ok := h.(awayKeeper)
	if !ok {
		writeError(w, http.StatusNotImplemented, "this leashd keeps no away state")
		return nil, false
	}
	return a, true
}

// awayChat checks the chat a request names and that its credential may
// ask there (whoever may ask in a chat may ask whether its person is
// away, and say so).
func awayChat(w http.ResponseWriter, r *http.Request, chat string) bool {
	if err := validChatID(chat); err != nil {
		writeError(w, http.StatusBadRequest, "chat_id: "+err.Error())
		return false
	}
	cred := credential(r)
	if !cred.MayAsk(chat) {
		writeError(w, http.StatusForbidden, cred.ScopeError(chat, "ask"))
		return false
	}
	return true
}

// awayState is GET /api/away?chat=CHAT.
func (c *Connector) awayState(w http.ResponseWriter, r *http.Request) {
	a, ok := c.awayKeeperOf(w)
	if !ok {
		return
	}
	chat := r.URL.Query().Get("chat")
	if chat == "" {
		writeError(w, http.StatusBadRequest, "chat: missing: GET /api/away?chat=<chat ID>, e.g. telegram:42 or desk")
		return
	}
	if !awayChat(w, r, chat) {
		return
	}
	writeJSON(w, http.StatusOK, awayOf(a, chat, 0))
}

// setAway is POST /api/away.
func (c *Connector) setAway(w http.ResponseWriter, r *http.Request) {
	a, ok := c.awayKeeperOf(w)
	if !ok {
		return
	}
	var req awayRequest
	if status, err := decodeJSON(r.Body, &req, acceptedAway, false); err != nil {
		writeError(w, status, err.Error())
		return
	}
	if req.Away == nil {
		writeError(w, http.StatusBadRequest, "away: missing: true (away from the desk) or false (back); expected "+acceptedAway)
		return
	}
	if !awayChat(w, r, req.ChatID) {
		return
	}
	released, err := a.SetAway(req.ChatID, *req.Away)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, awayOf(a, req.ChatID, released))
}

func awayOf(a awayKeeper, chat string, released int) awayBody {
	away, since := a.Away(chat)
	out := awayBody{ChatID: chat, Away: away, Released: released}
	if away {
		out.Since = &since
	}
	return out
}

// noticeRequest is the body of POST /api/away/notice.
type noticeRequest struct {
	ChatID string `json:"chat_id"`
	Text   string `json:"text"`
}

const (
	acceptedNotice = `{"chat_id":"…","text":"…"}`
	maxNoticeBytes = 2000
)

// awayNotice is POST /api/away/notice: what an agent in a terminal
// says while its person is away (a hook's notification), shown in the
// chat only then; {"shown":false} at the desk.
func (c *Connector) awayNotice(w http.ResponseWriter, r *http.Request) {
	a, ok := c.awayKeeperOf(w)
	if !ok {
		return
	}
	var req noticeRequest
	if status, err := decodeJSON(r.Body, &req, acceptedNotice, false); err != nil {
		writeError(w, status, err.Error())
		return
	}
	text := strings.TrimSpace(req.Text)
	switch {
	case text == "":
		writeError(w, http.StatusBadRequest, "text: missing: what to tell the person; expected "+acceptedNotice)
		return
	case len(text) > maxNoticeBytes || !utf8.ValidString(text):
		writeError(w, http.StatusBadRequest, fmt.Sprintf("text: at most %d bytes of UTF-8", maxNoticeBytes))
		return
	}
	if !awayChat(w, r, req.ChatID) {
		return
	}
	shown := a.AwayNotice(context.WithoutCancel(r.Context()), req.ChatID, text)
	writeJSON(w, http.StatusOK, map[string]bool{"shown": shown})
}

// awayActivity is POST /api/away/activity: a prompt was typed in a
// terminal whose hooks ask in the chat; it answers the away state.
func (c *Connector) awayActivity(w http.ResponseWriter, r *http.Request) {
	a, ok := c.awayKeeperOf(w)
	if !ok {
		return
	}
	var req struct {
		ChatID string `json:"chat_id"`
	}
	if status, err := decodeJSON(r.Body, &req, `{"chat_id":"…"}`, false); err != nil {
		writeError(w, status, err.Error())
		return
	}
	if !awayChat(w, r, req.ChatID) {
		return
	}
	if err := a.DeskActive(req.ChatID); err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, awayOf(a, req.ChatID, 0))
}
