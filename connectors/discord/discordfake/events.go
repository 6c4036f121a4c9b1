package discordfake

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// SetUser names a user and gives them roles in the guild.
func (s *Server) SetUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
}

func (s *Server) user(id string) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[id]; ok {
		return u
	}
	return User{ID: id, Name: "user" + id}
}

func userJSON(u User) map[string]any {
	return map[string]any{"id": u.ID, "username": u.Name, "global_name": u.Name, "discriminator": "0"}
}

func memberJSON(u User) map[string]any {
	roles := u.Roles
	if roles == nil {
		roles = []string{}
	}
	return map[string]any{"user": userJSON(u), "roles": roles, "joined_at": "2024-01-01T00:00:00Z"}
}

// send dispatches an event in the newest session; an error when no client
// ever identified.
func (s *Server) send(typ string, data map[string]any, sent func()) error {
	sess := s.current()
	if sess == nil {
		return fmt.Errorf("discordfake: no Gateway session to send %s in", typ)
	}
	s.dispatch(sess, typ, data, sent)
	return nil
}

// DM sends a direct message from user in the DM channel and returns its
// ID.
func (s *Server) DM(user, channel, text string) (string, error) {
	return s.message(user, channel, "", text, false)
}

// Post sends a message from user in a guild channel (or thread); mention
// puts a mention of the bot before the text, as Discord clients write it.
// It returns the message ID.
func (s *Server) Post(user, channel, text string, mention bool) (string, error) {
	return s.message(user, channel, GuildID, text, mention)
}

func (s *Server) message(user, channel, guild, text string, mention bool) (string, error) {
	return s.messageWith(user, channel, guild, text, mention, nil)
}

func (s *Server) messageWith(user, channel, guild, text string, mention bool, files []Attachment) (string, error) {
	u := s.user(user)
	atts, flags := s.attachmentsJSON(files)
	s.mu.Lock()
	id := s.nextID()
	if guild != "" {
		s.guildChannels[channel] = true
	}
	s.mu.Unlock()
	mentions := []any{}
	if mention {
		text = "<@" + BotID + "> " + text
		mentions = append(mentions, map[string]any{"id": BotID, "username": "leashd", "bot": true})
	}
	m := map[string]any{"id": id, "channel_id": channel, "content": text, "author": userJSON(u), "type": 0,
		"mentions": mentions, "timestamp": time.Now().UTC().Format(time.RFC3339), "attachments": atts, "flags": flags}
	if guild != "" {
		m["guild_id"] = guild
		m["member"] = map[string]any{"roles": rolesOf(u), "joined_at": "2024-01-01T00:00:00Z"}
	}
	return id, s.send("MESSAGE_CREATE", m, nil)
}

func rolesOf(u User) []string {
	if u.Roles == nil {
		return []string{}
	}
	return u.Roles
}

// Click taps the button with customID on message m, as user, and returns
// the interaction's ID.
func (s *Server) Click(user string, m Message, customID string) (string, error) {
	return s.component(user, m, map[string]any{"custom_id": customID, "component_type": 2})
}

// Select picks values in the select menu with customID on message m.
func (s *Server) Select(user string, m Message, customID string, values ...string) (string, error) {
	if values == nil {
		values = []string{}
	}
	return s.component(user, m, map[string]any{"custom_id": customID, "component_type": 3, "values": values})
}

func (s *Server) component(user string, m Message, data map[string]any) (string, error) {
	return s.interaction(user, m.ChannelID, 3, data, map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "type": 0})
}

// Command runs application command name with its text option ("" for
// none) in channel, as user, and returns the interaction's ID.
func (s *Server) Command(user, channel, name, text string) (string, error) {
	data := map[string]any{"id": "cmd-" + name, "name": name, "type": 1}
	if text != "" {
		data["options"] = []any{map[string]any{"name": "text", "type": 3, "value": text}}
	}
	return s.interaction(user, channel, 2, data, nil)
}

// interaction dispatches an INTERACTION_CREATE: its 3 s start when it is
// written to the Gateway.
func (s *Server) interaction(user, channel string, typ int, data, msg map[string]any) (string, error) {
	u := s.user(user)
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	s.mu.Lock()
	it := &Interaction{ID: s.nextID(), Token: "itok-" + hex.EncodeToString(tok[:]), User: u.ID, ChannelID: channel}
	s.interactions[it.ID] = it
	_, inThread := s.threads[channel]
	s.mu.Unlock()
	ev := map[string]any{"id": it.ID, "application_id": AppID, "type": typ, "data": data, "channel_id": channel,
		"token": it.Token, "version": 1, "locale": "en-US"}
	if msg != nil {
		ev["message"] = msg
	}
	if inThread || s.isGuildChannel(channel) {
		ev["guild_id"] = GuildID
		ev["member"] = memberJSON(u)
	} else {
		ev["user"] = userJSON(u)
	}
	return it.ID, s.send("INTERACTION_CREATE", ev, func() {
		s.mu.Lock()
		it.Sent = time.Now()
		s.mu.Unlock()
		s.notify()
	})
}

// GuildChannel marks channel as one of the guild's text channels (the
// default for channels the fake has not seen as DMs).
func (s *Server) GuildChannel(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.guildChannels[channel] = true
}

func (s *Server) isGuildChannel(channel string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.guildChannels[channel]
}

// Backdate moves an interaction's dispatch d into the past, so a test can
// see a response after Discord's 3 s refused without waiting for it.
func (s *Server) Backdate(id string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if it := s.interactions[id]; it != nil {
		it.Sent = it.Sent.Add(-d)
	}
}
