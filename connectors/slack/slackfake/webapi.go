package slackfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// params reads a call's form fields, or its top-level JSON fields as text.
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

// api answers a Web API call and records it (Calls).
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
	if s.refuseLocked(w, &call) {
		return
	}
	s.answerLocked(w, method, p)
}

// refuseLocked answers a call that does not get through, as Slack would:
// rate limited (RateLimit), a wrong token, a failure set with FailNext, or
// blocks that break Block Kit's limits. It reports whether it answered.
func (s *Server) refuseLocked(w http.ResponseWriter, call *Call) bool {
	method, p := call.Method, call.Params
	if ra := s.limited[method]; len(ra) > 0 {
		s.limited[method] = ra[1:]
		call.Status = http.StatusTooManyRequests
		call.RetryAfter = time.Duration(ra[0]) * time.Second
		w.Header().Set("Retry-After", strconv.Itoa(ra[0]))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"})
		return true
	}
	want := s.BotToken
	if method == "apps.connections.open" {
		want = s.AppToken
	}
	if call.Token != want {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
		return true
	}
	if e, ok := s.failNext[method]; ok {
		delete(s.failNext, method)
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": e})
		return true
	}
	switch method {
	case "chat.postMessage", "chat.update", "chat.postEphemeral":
		if errs := ValidateBlocks(p["blocks"]); len(errs) > 0 {
			s.rejected = append(s.rejected, Rejection{Method: method, Blocks: p["blocks"], Errors: errs})
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_blocks", "errors": errs})
			return true
		}
	}
	return false
}

// answerLocked does what method asks and answers as Slack does.
func (s *Server) answerLocked(w http.ResponseWriter, method string, p map[string]string) {
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
		if s.answerFileLocked(w, method, p) { // files.go
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "unknown_method"})
	}
}

// rawBlocks is the blocks field as JSON (nil: none).
func rawBlocks(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}
