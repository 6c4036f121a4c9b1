package tgfake

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// apiError is a failed call as Telegram answers it: HTTP status code,
// description and, for a 429, retry_after in seconds.
type apiError struct {
	code int
	desc string
	wait int
}

// serve answers every request to the fake: the token is checked, a Stall
// may hold the call, and each call is recorded (Requests).
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/file/bot") {
		s.serveDownload(w, r) // files.go
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	uploads, uerr := readUploads(r) // files.go: sendPhoto, sendDocument
	if uerr != nil {
		writeErr(w, *uerr)
		return
	}
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
	pc.files = uploads
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

// writeOK answers 200 with Telegram's {"ok":true,"result":...}.
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

// writeErr answers with Telegram's error body for e.
func writeErr(w http.ResponseWriter, e apiError) {
	resp := tgbotapi.APIResponse{Ok: false, ErrorCode: e.code, Description: e.desc}
	if e.wait > 0 {
		resp.Parameters = &tgbotapi.ResponseParameters{RetryAfter: e.wait}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.code)
	_ = json.NewEncoder(w).Encode(resp)
}

// content is a request's text and keyboard, checked.
type content struct {
	text   string
	markup *tgbotapi.InlineKeyboardMarkup
	err    *apiError
	files  map[string]upload // a multipart request's files
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

// checkContent checks a message's text (after HTML parsing) and keyboard
// as Telegram does.
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

// parseMarkup reads and checks an inline keyboard (nil: none).
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

// sameMarkup reports whether two keyboards are the same.
func sameMarkup(a, b *tgbotapi.InlineKeyboardMarkup) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
