package telegram

// Who may do what: allowed users, approvers, and the names shown for them.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/leashd/leashd/interactions"
)

// parseUserIDs turns LEASHD_TELEGRAM_ALLOWED_USERS entries into user IDs;
// the error names the entry that is not a number.
func parseUserIDs(ids []string) ([]int64, error) {
	out := make([]int64, 0, len(ids))
	for _, s := range ids {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("telegram: allowed user %q is not a numeric Telegram user ID (e.g. 123456789)", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// chatID is the leashd chat ID of a Telegram chat.
func chatID(id int64) string { return "telegram:" + strconv.FormatInt(id, 10) }

// parseChat returns the Telegram chat of a leashd chat ID.
func parseChat(id string) (int64, error) {
	rest, ok := strings.CutPrefix(id, "telegram:")
	n, err := strconv.ParseInt(rest, 10, 64)
	if !ok || err != nil || n == 0 {
		return 0, fmt.Errorf("telegram: %q is not a Telegram chat ID (expected telegram:<numeric chat id>)", id)
	}
	return n, nil
}

func (c *Connector) allowedUser(id int64) bool { return c.allowed[id] }

// IsGroupChat implements connectors.GroupTeller: a Telegram chat with a
// negative ID is a group or supergroup (private chats are the user's ID).
func (c *Connector) IsGroupChat(chatID string) bool {
	n, err := parseChat(chatID)
	return err == nil && n < 0
}

// approver reports whether a user may decide plan reviews and tool
// approvals.
func (c *Connector) approver(id int64) bool {
	if c.approvers == nil {
		return c.allowed[id]
	}
	return c.approvers[id]
}

// awaitsDecision reports whether a plan review or tool approval is pending
// in chat.
func (c *Connector) awaitsDecision(chat int64) bool {
	h := c.handlerOf()
	if h == nil {
		return false
	}
	for _, it := range h.Pending(chatID(chat)) {
		if it.Decides() {
			return true
		}
	}
	return false
}

// errNotApprover refuses a decision from someone not among the approvers.
var errNotApprover = errors.New("only approvers (LEASHD_TELEGRAM_APPROVERS) can decide plan reviews, tool approvals and approvals")

// errNotAllowed refuses an answer to a question from an approver who is
// not an allowed user.
var errNotAllowed = errors.New("only allowed users (LEASHD_TELEGRAM_ALLOWED_USERS) answer questions")

// mayAnswer decides whether user may answer it: approvers decide plan
// reviews and tool approvals, allowed users answer questions.
func (c *Connector) mayAnswer(user int64, it interactions.Interaction) error {
	if !it.Decides() {
		if !c.allowed[user] {
			return errNotAllowed
		}
		return nil
	}
	if !c.approver(user) {
		return errNotApprover
	}
	return nil
}

// refuseInterval is how often a stranger is told they are not allowed in
// one chat; their other messages are dropped without a reply.
const refuseInterval = time.Minute

// refuseOnce reports whether a stranger should be told (again) now.
func (c *Connector) refuseOnce(chat, user int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	k := [2]int64{chat, user}
	if t, ok := c.refused[k]; ok && now.Sub(t) < refuseInterval {
		return false
	}
	if len(c.refused) > 10000 {
		clear(c.refused)
	}
	c.refused[k] = now
	return true
}

// notAllowedText is the one reply a stranger gets.
func notAllowedText(userID int64) string {
	return fmt.Sprintf("Not allowed. Your user ID is %d — add it to LEASHD_TELEGRAM_ALLOWED_USERS.", userID)
}

func (c *Connector) rememberName(u *tgbotapi.User) {
	if u == nil {
		return
	}
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if u.UserName != "" {
		name = "@" + u.UserName
	}
	id := strconv.FormatInt(u.ID, 10)
	c.namesMu.RLock()
	known, ok := c.names[id]
	c.namesMu.RUnlock()
	if ok && known == name {
		return // the usual case: no write lock for every message and tap
	}
	c.namesMu.Lock()
	defer c.namesMu.Unlock()
	if len(c.names) > 10000 {
		clear(c.names)
	}
	c.names[id] = name
}

func (c *Connector) nameOf(userID string) string {
	c.namesMu.RLock()
	defer c.namesMu.RUnlock()
	if n, ok := c.names[userID]; ok {
		return n
	}
	return "user " + userID
}
