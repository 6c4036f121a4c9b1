package tgfake

import (
	"slices"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// Messages returns a copy of a chat's messages (the users' and the bot's)
// in order.
func (s *Server) Messages(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.msgs[chatID]))
	for _, m := range s.msgs[chatID] {
		out = append(out, *m)
	}
	return out
}

// BotMessages returns the messages the bot sent in a chat.
func (s *Server) BotMessages(chatID int64) []Message {
	var out []Message
	for _, m := range s.Messages(chatID) {
		if m.FromBot {
			out = append(out, m)
		}
	}
	return out
}

// CallbackAnswer returns the answer to a tap, if the bot gave one.
func (s *Server) CallbackAnswer(queryID string) (CallbackAnswer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.answers[queryID]
	return a, ok
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Count returns how many requests of method were received (any outcome).
func (s *Server) Count(method string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == method {
			n++
		}
	}
	return n
}

// Violations lists requests sent to a chat before the retry_after of a
// 429 for that chat had elapsed.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

// Webhook returns the webhook URL and secret token set with setWebhook.
func (s *Server) Webhook() (string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhookURL, s.secret
}

// Commands returns the command list set with setMyCommands.
func (s *Server) Commands() []tgbotapi.BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.commands)
}

// PendingUpdates is how many updates are not yet confirmed by getUpdates
// or accepted (2xx) by the webhook.
func (s *Server) PendingUpdates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates) + s.hookPendingLocked()
}

// Wait blocks until cond holds (checked after every change) or timeout
// passes, and reports whether it held. cond must not call methods that
// block forever; it may call the Server's accessors.
func (s *Server) Wait(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond): // cond may depend on others' state
		case <-deadline.C:
			return cond()
		}
	}
}

// findLocked returns a chat's message by ID (nil: none).
func (s *Server) findLocked(chatID int64, id int) *Message {
	for _, m := range s.msgs[chatID] {
		if m.ID == id {
			return m
		}
	}
	return nil
}
