package discordfake

import (
	"encoding/json"
	"time"
)

// callback is an interaction's one response, within AckDeadline of its
// dispatch; a late or second one is refused as Discord refuses it.
func (s *Server) callback(id, token string, body []byte) reply {
	var resp struct {
		Type int             `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return fail(400, 50109, "The request body contains invalid JSON.")
	}
	s.mu.Lock()
	it := s.interactions[id]
	switch {
	case it == nil || it.Token != token:
		s.mu.Unlock()
		return fail(404, 10062, "Unknown interaction")
	case !it.Responded.IsZero():
		it.Late++
		s.mu.Unlock()
		return fail(400, 40060, "Interaction has already been acknowledged.")
	case it.Sent.IsZero() || time.Since(it.Sent) > AckDeadline:
		it.Late++
		s.mu.Unlock()
		return fail(404, 10062, "Unknown interaction")
	}
	s.mu.Unlock()
	if resp.Type == 4 { // a message
		if r := s.respondMessage(it, resp.Data); r != nil {
			return *r
		}
	} else if resp.Type != 5 && resp.Type != 6 && resp.Type != 7 {
		return fail(400, 50035, "Invalid Form Body")
	}
	s.mu.Lock()
	it.Responded, it.Response = time.Now(), resp.Type
	s.mu.Unlock()
	s.notify()
	return reply{204, nil}
}

// respondMessage posts a response's or follow-up's message: ephemeral to
// the person (flag 64) or in the channel.
func (s *Server) respondMessage(it *Interaction, data json.RawMessage) *reply {
	m, bad := s.checked("interaction message", data, true)
	if bad != nil {
		return bad
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.Flags&64 != 0 {
		s.ephemeral = append(s.ephemeral, Ephemeral{User: it.User, ChannelID: it.ChannelID, Content: deref(m.Content)})
		return nil
	}
	s.msgs = append(s.msgs, &Message{ID: s.nextID(), ChannelID: it.ChannelID, Content: deref(m.Content), Components: m.Components, Posted: m.Components})
	return nil
}

// followup is a message after the response, with the interaction's token
// (valid 15 minutes).
func (s *Server) followup(app, token string, wait bool, body []byte) reply {
	s.mu.Lock()
	var it *Interaction
	for _, x := range s.interactions {
		if x.Token == token {
			it = x
		}
	}
	s.mu.Unlock()
	if app != AppID || it == nil || it.Responded.IsZero() || time.Since(it.Sent) > 15*time.Minute {
		return fail(404, 10015, "Unknown Webhook")
	}
	if r := s.respondMessage(it, body); r != nil {
		return *r
	}
	if !wait {
		return reply{204, nil}
	}
	return reply{200, map[string]any{"id": "0", "channel_id": it.ChannelID, "content": "", "type": 0}}
}
