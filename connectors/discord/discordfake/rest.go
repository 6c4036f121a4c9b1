package discordfake

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxBody bounds what the fake reads of a request: past Discord's upload
// limit, so an oversized upload is refused as Discord refuses it.
const maxBody = 64 << 20

// apiError is Discord's error body.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Errors  any    `json:"errors,omitempty"`
}

// reply is a handler's answer: status and JSON body (nil: none).
type reply struct {
	status int
	body   any
}

func fail(status, code int, msg string) reply {
	return reply{status, apiError{Code: code, Message: msg}}
}

// rest serves /api/v9/… and /api/v10/…: the bot token checked (interaction callbacks
// and follow-ups carry their own token instead), the rate limits applied,
// then the endpoint.
func (s *Server) rest(w http.ResponseWriter, r *http.Request) {
	version, path, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/api/"), "/")
	if version != "v9" && version != "v10" {
		http.Error(w, "API version "+version+" is not served (v9, v10)", http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	up, upErr := readUpload(r, body)
	if up != nil {
		body = up.payload // recorded and checked as a JSON post's body
	}
	route, bucket := routeOf(r.Method, path)
	public := strings.HasPrefix(path, "interactions/") || strings.HasPrefix(path, "webhooks/") || path == "gateway"
	now := time.Now()
	s.mu.Lock()
	var rep reply
	if !public && r.Header.Get("Authorization") != "Bot "+s.Token {
		rep = fail(http.StatusUnauthorized, 0, "401: Unauthorized")
	} else if wait, global := s.limit(w.Header(), route, bucket, now); wait > 0 {
		rep = reply{http.StatusTooManyRequests, map[string]any{"message": "You are being rate limited.", "retry_after": wait.Seconds(), "global": global, "code": 0}}
	}
	s.mu.Unlock()
	if rep.status == 0 && upErr != nil {
		rep = fail(400, 50035, "Invalid Form Body: "+upErr.Error())
	}
	if rep.status == 0 {
		rep = s.endpoint(r.Method, strings.Split(path, "/"), r, body, up)
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: path, Status: rep.status, At: now, Body: body})
	s.mu.Unlock()
	s.notify()
	if rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	_ = json.NewEncoder(w).Encode(rep.body)
}

// endpoint routes a request by method and path segments.
func (s *Server) endpoint(method string, p []string, r *http.Request, body []byte, up *upload) reply {
	switch {
	case method == "GET" && (len(p) == 1 && p[0] == "gateway" || len(p) == 2 && p[0] == "gateway" && p[1] == "bot"):
		url := strings.Replace(s.srv.URL, "http", "ws", 1) + "/gateway"
		return reply{200, map[string]any{"url": url, "shards": 1, "session_start_limit": map[string]any{"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}}}
	case method == "GET" && len(p) == 2 && p[0] == "users" && p[1] == "@me":
		return reply{200, map[string]any{"id": BotID, "username": "leashd", "bot": true, "discriminator": "0"}}
	case method == "GET" && len(p) == 2 && p[0] == "channels":
		return s.channel(p[1])
	case method == "POST" && len(p) == 3 && p[0] == "channels" && p[2] == "messages":
		return s.createMessage(p[1], body, up)
	case method == "PATCH" && len(p) == 4 && p[0] == "channels" && p[2] == "messages":
		return s.editMessage(p[1], p[3], body)
	case method == "POST" && len(p) == 5 && p[0] == "channels" && p[2] == "messages" && p[4] == "threads":
		return s.startThread(p[1], p[3], body)
	case method == "POST" && len(p) == 4 && p[0] == "interactions" && p[3] == "callback":
		return s.callback(p[1], p[2], body)
	case method == "POST" && len(p) == 3 && p[0] == "webhooks":
		return s.followup(p[1], p[2], r.URL.Query().Get("wait") == "true", body)
	case method == "PUT" && len(p) == 3 && p[0] == "applications" && p[2] == "commands":
		return s.putCommands(p[1], body)
	}
	return fail(http.StatusNotFound, 0, "404: Not Found")
}

type messageBody struct {
	Content    *string         `json:"content"`
	Components json.RawMessage `json:"components"`
	Flags      int             `json:"flags"`
	Reference  *struct {
		MessageID string `json:"message_id"`
	} `json:"message_reference"`
	AllowedMentions json.RawMessage `json:"allowed_mentions"`
}

// checked parses a message body and checks it; a refusal is recorded.
func (s *Server) checked(call string, body []byte, needContent bool) (messageBody, *reply) {
	var m messageBody
	if err := json.Unmarshal(body, &m); err != nil {
		r := fail(400, 50109, "The request body contains invalid JSON.")
		return m, &r
	}
	content := ""
	if m.Content != nil {
		content = *m.Content
	}
	errs := ValidateMessage(content, m.Components)
	if needContent && strings.TrimSpace(content) == "" && (len(m.Components) == 0 || string(m.Components) == "[]") {
		errs = append(errs, "Cannot send an empty message")
	}
	if len(errs) > 0 {
		s.mu.Lock()
		s.rejected = append(s.rejected, Rejection{Call: call, Errors: errs})
		s.mu.Unlock()
		r := reply{400, apiError{Code: 50035, Message: "Invalid Form Body", Errors: errs}}
		return m, &r
	}
	return m, nil
}

func (s *Server) createMessage(channel string, body []byte, up *upload) reply {
	call := "POST channels/" + channel + "/messages"
	m, bad := s.checked(call, body, up == nil || len(up.files) == 0)
	if bad != nil {
		return *bad
	}
	s.mu.Lock()
	if bad := s.checkUpload(call, up); bad != nil {
		s.mu.Unlock()
		return *bad
	}
	msg := &Message{ID: s.nextID(), ChannelID: channel, Content: deref(m.Content), Components: m.Components, Posted: m.Components, Mentions: m.AllowedMentions}
	if up != nil {
		msg.Files = up.files
	}
	if m.Reference != nil {
		msg.ReplyTo = m.Reference.MessageID
	}
	s.msgs = append(s.msgs, msg)
	out := msg.json()
	s.mu.Unlock()
	return reply{200, out}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (m *Message) json() map[string]any {
	comps := m.Components
	if len(comps) == 0 {
		comps = json.RawMessage("[]")
	}
	atts := []any{}
	for i, f := range m.Files {
		atts = append(atts, map[string]any{"id": m.ID + strconv.Itoa(i), "filename": f.Name, "size": len(f.Data), "content_type": f.ContentType})
	}
	return map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "components": comps, "type": 0, "attachments": atts,
		"author": map[string]any{"id": BotID, "username": "leashd", "bot": true}, "timestamp": time.Now().UTC().Format(time.RFC3339)}
}

func (s *Server) editMessage(channel, id string, body []byte) reply {
	m, bad := s.checked("PATCH channels/"+channel+"/messages/"+id, body, false)
	if bad != nil {
		return *bad
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, msg := range s.msgs {
		if msg.ID == id && msg.ChannelID == channel {
			if m.Content != nil {
				msg.Content = *m.Content
			}
			if m.Components != nil {
				msg.Components = m.Components
			}
			msg.Edits++
			return reply{200, msg.json()}
		}
	}
	return fail(404, 10008, "Unknown Message")
}

func (s *Server) startThread(channel, message string, body []byte) reply {
	var t struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(body, &t)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len([]rune(t.Name)); n == 0 || n > 100 {
		s.rejected = append(s.rejected, Rejection{Call: "POST threads", Errors: []string{"name: 1 to 100 characters"}})
		return fail(400, 50035, "Invalid Form Body")
	}
	if _, isThread := s.threads[channel]; isThread {
		return fail(400, 50024, "Cannot execute action on this channel type")
	}
	if s.started[message] != "" {
		return fail(400, 160004, "A thread has already been created for this message")
	}
	id := s.nextID()
	s.threads[id] = channel
	s.started[message] = id
	return reply{201, map[string]any{"id": id, "type": 11, "guild_id": GuildID, "parent_id": channel, "name": t.Name}}
}

// channel describes a thread (owned by the bot, which starts them all),
// a guild text channel, or nothing known.
func (s *Server) channel(id string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if parent, ok := s.threads[id]; ok {
		return reply{200, map[string]any{"id": id, "type": 11, "guild_id": GuildID, "parent_id": parent, "owner_id": BotID, "name": "thread"}}
	}
	if s.guildChannels[id] {
		return reply{200, map[string]any{"id": id, "type": 0, "guild_id": GuildID, "name": "general"}}
	}
	return fail(404, 10003, "Unknown Channel")
}

func (s *Server) putCommands(app string, body []byte) reply {
	if app != AppID {
		return fail(403, 50001, "Missing Access")
	}
	if errs := validateCommands(body); len(errs) > 0 {
		s.mu.Lock()
		s.rejected = append(s.rejected, Rejection{Call: "PUT commands", Errors: errs})
		s.mu.Unlock()
		return reply{400, apiError{Code: 50035, Message: "Invalid Form Body", Errors: errs}}
	}
	s.mu.Lock()
	s.commands = append(json.RawMessage(nil), body...)
	s.mu.Unlock()
	return reply{200, json.RawMessage(body)}
}
