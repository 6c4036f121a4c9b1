package tgfake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// callLocked answers one API call but getUpdates: a failure FailNext set,
// then the rate limits of the methods that write to a chat, then the
// method itself.
func (s *Server) callLocked(method string, f url.Values, pc content) (any, *apiError) {
	if codes := s.fail[method]; len(codes) > 0 {
		s.fail[method] = codes[1:]
		return nil, &apiError{codes[0], http.StatusText(codes[0]), 0}
	}
	chatID, _ := strconv.ParseInt(f.Get("chat_id"), 10, 64)
	switch method {
	case "sendMessage", "editMessageText", "editMessageReplyMarkup", "deleteMessage":
		if chatID == 0 {
			return nil, &apiError{400, "Bad Request: chat_id is empty", 0}
		}
		if e := s.rateLocked(chatID); e != nil {
			return nil, e
		}
	}
	switch method {
	case "getMe":
		return tgbotapi.User{ID: 123456, IsBot: true, FirstName: "leashd", UserName: "leashd_bot"}, nil
	case "setMyCommands":
		return s.setMyCommandsLocked(f)
	case "setWebhook":
		return s.setWebhookLocked(f)
	case "deleteWebhook":
		s.unhookLocked()
		s.webhookURL, s.secret = "", ""
		s.notifyPollLocked()
		return true, nil
	case "getWebhookInfo":
		return s.webhookInfoLocked(), nil
	case "answerCallbackQuery":
		return s.answerCallbackQueryLocked(f)
	case "sendMessage":
		return s.sendMessageLocked(chatID, f, pc)
	case "editMessageText", "editMessageReplyMarkup":
		return s.editMessageLocked(method, chatID, f, pc)
	case "deleteMessage":
		return s.deleteMessageLocked(chatID, f)
	case "getFile":
		return s.getFileLocked(f)
	case "sendPhoto", "sendDocument":
		return s.sendFileLocked(method, chatID, f, pc)
	}
	return nil, &apiError{404, "Not Found: method " + method + " is not implemented by tgfake", 0}
}

// setMyCommandsLocked keeps the command list (Commands).
func (s *Server) setMyCommandsLocked(f url.Values) (any, *apiError) {
	var cmds []tgbotapi.BotCommand
	if err := json.Unmarshal([]byte(f.Get("commands")), &cmds); err != nil {
		return nil, &apiError{400, "Bad Request: can't parse commands JSON object", 0}
	}
	s.commands = cmds
	return true, nil
}

// setWebhookLocked sets (or, with an empty url, removes) the webhook and
// moves the updates queued for getUpdates to it.
func (s *Server) setWebhookLocked(f url.Values) (any, *apiError) {
	u := f.Get("url")
	if u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://127.0.0.1") {
		return nil, &apiError{400, "Bad Request: bad webhook: HTTPS url must be provided for webhook", 0}
	}
	sec := f.Get("secret_token")
	if sec != "" && !validSecret(sec) {
		return nil, &apiError{400, "Bad Request: secret token contains unallowed characters", 0}
	}
	conns := DefaultMaxConnections
	if v := f.Get("max_connections"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, &apiError{400, "Bad Request: max_connections must be an integer 1-100", 0}
		}
		conns = min(max(n, 1), 100) // Telegram clamps it to 1-100
	}
	if u == "" {
		s.unhookLocked()
	}
	s.webhookURL, s.secret = u, sec
	if conns != s.maxConns {
		s.hookClient.CloseIdleConnections()
		s.maxConns, s.hookClient = conns, newHookClient(conns, s.hookTimeout)
	}
	// Updates queued for getUpdates go to the webhook now, in order.
	if u != "" {
		for _, q := range s.updates {
			var up tgbotapi.Update
			_ = json.Unmarshal(q.raw, &up)
			s.enqueueHookLocked(updateChat(up), q)
		}
		s.updates = nil
	}
	s.pumpHookLocked()
	s.notifyPollLocked() // a pending getUpdates now conflicts
	return true, nil
}

// webhookInfoLocked is getWebhookInfo's answer.
func (s *Server) webhookInfoLocked() tgbotapi.WebhookInfo {
	info := tgbotapi.WebhookInfo{URL: s.webhookURL, PendingUpdateCount: len(s.updates) + s.hookPendingLocked()}
	if s.webhookURL != "" {
		info.MaxConnections = s.maxConns
		if s.hookErr != "" {
			info.LastErrorDate, info.LastErrorMessage = int(s.hookErrAt.Unix()), s.hookErr
		}
	}
	return info
}

// answerCallbackQueryLocked records the bot's answer to a tap, once per
// query (CallbackAnswer).
func (s *Server) answerCallbackQueryLocked(f url.Values) (any, *apiError) {
	id := f.Get("callback_query_id")
	if _, done := s.answers[id]; done || id == "" {
		return nil, &apiError{400, "Bad Request: query is too old and response timeout expired or query ID is invalid", 0}
	}
	if len([]rune(f.Get("text"))) > 200 {
		return nil, &apiError{400, "Bad Request: MESSAGE_TOO_LONG", 0}
	}
	s.answers[id] = CallbackAnswer{Text: f.Get("text"), ShowAlert: f.Get("show_alert") == "true", At: s.now()}
	return true, nil
}

// sendMessageLocked adds the bot's message, checked in pc, to the chat.
func (s *Server) sendMessageLocked(chatID int64, f url.Values, pc content) (any, *apiError) {
	text, markup, e := pc.text, pc.markup, pc.err
	if e != nil {
		return nil, e
	}
	s.nextMsg[chatID]++
	m := &Message{ID: s.nextMsg[chatID], ChatID: chatID, FromBot: true, Text: text, ParseMode: f.Get("parse_mode"), Markup: markup}
	s.msgs[chatID] = append(s.msgs[chatID], m)
	return tgbotapi.Message{MessageID: m.ID, Chat: chat(chatID), Date: int(s.now().Unix()), Text: text, ReplyMarkup: markup}, nil
}

// editMessageLocked changes the text and keyboard (editMessageText) or the
// keyboard only (editMessageReplyMarkup) of one of the bot's messages;
// an edit that changes nothing is refused, as Telegram refuses it.
func (s *Server) editMessageLocked(method string, chatID int64, f url.Values, pc content) (any, *apiError) {
	id, _ := strconv.Atoi(f.Get("message_id"))
	m := s.findLocked(chatID, id)
	if m == nil || !m.FromBot {
		return nil, &apiError{400, "Bad Request: message to edit not found", 0}
	}
	text, parse := m.Text, m.ParseMode
	var markup *tgbotapi.InlineKeyboardMarkup
	if method == "editMessageText" {
		var e *apiError
		text, markup, e = pc.text, pc.markup, pc.err
		if e != nil {
			return nil, e
		}
		parse = f.Get("parse_mode")
	} else {
		var e *apiError
		markup, e = pc.markup, pc.err
		if e != nil {
			return nil, e
		}
	}
	if text == m.Text && parse == m.ParseMode && sameMarkup(markup, m.Markup) {
		return nil, &apiError{400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message", 0}
	}
	m.Text, m.ParseMode, m.Markup = text, parse, markup
	m.Edits++
	return tgbotapi.Message{MessageID: m.ID, Chat: chat(chatID), Text: text, ReplyMarkup: markup}, nil
}

// deleteMessageLocked removes a message from the chat.
func (s *Server) deleteMessageLocked(chatID int64, f url.Values) (any, *apiError) {
	id, _ := strconv.Atoi(f.Get("message_id"))
	list := s.msgs[chatID]
	i := slices.IndexFunc(list, func(m *Message) bool { return m.ID == id })
	if i < 0 {
		return nil, &apiError{400, "Bad Request: message to delete not found", 0}
	}
	s.msgs[chatID] = slices.Delete(list, i, i+1)
	return true, nil
}

// validSecret is Telegram's rule for secret_token: 1-256 of A-Z a-z 0-9 _ -.
func validSecret(s string) bool {
	if len(s) > 256 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
