package tgfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// Text injects a text message from user in chat (negative chat IDs are
// groups) and returns its update ID.
func (s *Server) Text(chatID, userID int64, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextMsg[chatID]++
	m := &tgbotapi.Message{
		MessageID: s.nextMsg[chatID],
		From:      s.userLocked(userID),
		Chat:      chat(chatID),
		Date:      int(s.now().Unix()),
		Text:      text,
	}
	if strings.HasPrefix(text, "/") {
		cmd, _, _ := strings.Cut(text, " ")
		m.Entities = []tgbotapi.MessageEntity{{Type: "bot_command", Offset: 0, Length: len(cmd)}}
	}
	s.msgs[chatID] = append(s.msgs[chatID], &Message{ID: m.MessageID, ChatID: chatID, Text: text})
	return s.pushLocked(tgbotapi.Update{Message: m})
}

// SetUserName sets the first name users are shown with (default "User N").
func (s *Server) SetUserName(userID int64, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[userID] = name
}

// Tap injects a button tap (a callback query) by user on a message, with
// the given callback data, and returns the query ID.
func (s *Server) Tap(chatID, userID int64, messageID int, data string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tapLocked(chatID, userID, messageID, data)
}

// Push injects an arbitrary update (e.g. a duplicate) as it is; an
// UpdateID of 0 is assigned the next ID. It returns the update ID.
func (s *Server) Push(u tgbotapi.Update) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.UpdateID != 0 {
		s.queueLocked(u)
		return u.UpdateID
	}
	return s.pushLocked(u)
}

// tapLocked queues a callback query for a tap and returns its ID.
func (s *Server) tapLocked(chatID, userID int64, messageID int, data string) string {
	s.nextQuery++
	id := "q" + strconv.Itoa(s.nextQuery)
	s.queryChat[id] = chatID
	var msg *tgbotapi.Message
	if m := s.findLocked(chatID, messageID); m != nil {
		msg = &tgbotapi.Message{MessageID: m.ID, Chat: chat(chatID), Text: m.Text, ReplyMarkup: m.Markup}
	}
	s.pushLocked(tgbotapi.Update{CallbackQuery: &tgbotapi.CallbackQuery{
		ID: id, From: s.userLocked(userID), Message: msg, ChatInstance: "ci" + strconv.FormatInt(chatID, 10), Data: data,
	}})
	return id
}

// TapButton taps the button whose text is text on a message; it fails when
// the message has no such button.
func (s *Server) TapButton(chatID, userID int64, messageID int, text string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findLocked(chatID, messageID)
	if m == nil {
		return "", fmt.Errorf("tgfake: chat %d has no message %d", chatID, messageID)
	}
	if m.Markup != nil {
		for _, row := range m.Markup.InlineKeyboard {
			for _, b := range row {
				if b.Text == text && b.CallbackData != nil {
					return s.tapLocked(chatID, userID, messageID, *b.CallbackData), nil
				}
			}
		}
	}
	return "", fmt.Errorf("tgfake: message %d in chat %d has no button %q (buttons: %q)", messageID, chatID, text, m.Buttons())
}

// chat is the Chat of an ID: negative IDs are supergroups.
func chat(id int64) *tgbotapi.Chat {
	if id < 0 {
		return &tgbotapi.Chat{ID: id, Type: "supergroup", Title: "Group " + strconv.FormatInt(-id, 10)}
	}
	return &tgbotapi.Chat{ID: id, Type: "private"}
}

// userLocked is the User of an ID, with the name SetUserName gave it.
func (s *Server) userLocked(id int64) *tgbotapi.User {
	name, ok := s.users[id]
	if !ok {
		name = "User " + strconv.FormatInt(id, 10)
	}
	return &tgbotapi.User{ID: id, FirstName: name}
}

// queuedUpdate is an update not yet confirmed, encoded once when queued.
type queuedUpdate struct {
	id  int
	raw []byte
}

// pushLocked gives u the next update ID and queues it.
func (s *Server) pushLocked(u tgbotapi.Update) int {
	s.nextUpdate++
	u.UpdateID = s.nextUpdate
	s.queueLocked(u)
	return u.UpdateID
}

// queueLocked queues u for getUpdates, or posts it to the webhook if one
// is set.
func (s *Server) queueLocked(u tgbotapi.Update) {
	raw, _ := json.Marshal(u)
	s.notifyLocked()
	if s.webhookURL == "" {
		s.updates = append(s.updates, queuedUpdate{id: u.UpdateID, raw: raw})
		s.notifyPollLocked()
		return
	}
	s.enqueueHookLocked(updateChat(u), queuedUpdate{id: u.UpdateID, raw: raw})
}

// MaxUpdates is how many updates one getUpdates answers at most (its
// limit parameter, 1-100; Telegram's default and maximum).
const MaxUpdates = 100

// getUpdates answers a long poll: the updates from offset on, at most
// limit of them, as soon as there are any or when the timeout passes.
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request) {
	offset, _ := strconv.Atoi(r.Form.Get("offset"))
	timeout, _ := strconv.Atoi(r.Form.Get("timeout"))
	limit := MaxUpdates
	if v := r.Form.Get("limit"); v != "" {
		n, _ := strconv.Atoi(v)
		limit = min(max(n, 1), MaxUpdates) // Telegram clamps it to 1-100
	}
	deadline := time.Now().Add(time.Duration(timeout) * time.Second)
	for {
		s.mu.Lock()
		req := Request{At: s.now(), Method: "getUpdates", Params: r.Form, Status: http.StatusOK}
		var aerr *apiError
		switch {
		case len(s.fail["getUpdates"]) > 0:
			code := s.fail["getUpdates"][0]
			s.fail["getUpdates"] = s.fail["getUpdates"][1:]
			aerr = &apiError{code, http.StatusText(code), 0}
		case s.webhookURL != "":
			aerr = &apiError{409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first", 0}
		case s.conflict:
			aerr = &apiError{409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running", 0}
		}
		if aerr != nil {
			req.Status, req.Error = aerr.code, aerr.desc
			s.requests = append(s.requests, req)
			s.notifyLocked()
			s.mu.Unlock()
			writeErr(w, *aerr)
			return
		}
		if offset > 0 {
			s.updates = slices.DeleteFunc(s.updates, func(u queuedUpdate) bool { return u.id < offset })
		}
		if len(s.updates) > 0 || !time.Now().Before(deadline) || s.closed {
			out := s.updates[:min(len(s.updates), limit)]
			n := 32
			for _, u := range out {
				n += len(u.raw) + 1
			}
			body := make([]byte, 0, n)
			body = append(body, `{"ok":true,"result":[`...)
			for i, u := range out {
				if i > 0 {
					body = append(body, ',')
				}
				body = append(body, u.raw...)
			}
			body = append(body, "]}\n"...)
			s.requests = append(s.requests, req)
			s.notifyLocked()
			s.mu.Unlock()
			writeBody(w, body)
			return
		}
		ch := s.polled
		s.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		case <-r.Context().Done():
			return
		}
	}
}
