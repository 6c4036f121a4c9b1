package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

func (c *Connector) handlerOf() connectors.Handler {
	c.hot.RLock()
	defer c.hot.RUnlock()
	return c.handler
}

// handleMessage passes an allowed person's text to the engine; a stranger
// gets one reply saying how to be allowed, and nothing else happens.
func (c *Connector) handleMessage(ctx context.Context, m *tgbotapi.Message) {
	if m.From == nil || m.From.IsBot {
		return
	}
	chat := m.Chat.ID
	// An approver who is not an allowed user may type only what a
	// pending decision asks for (a deny reason, plan feedback).
	if !c.allowedUser(m.From.ID) && !(c.approver(m.From.ID) && c.awaitsDecision(chat)) {
		c.log.Info("telegram: message from a user not in LEASHD_TELEGRAM_ALLOWED_USERS refused", "user", m.From.ID, "chat", chat)
		if !c.refuseOnce(chat, m.From.ID) {
			return // told recently: a stranger cannot make the bot flood a chat
		}
		if err := c.sayPlain(ctx, chat, notAllowedText(m.From.ID)); err != nil {
			c.log.Warn("telegram: telling a stranger they are not allowed failed", "chat", chat, "err", err)
		}
		return
	}
	c.rememberName(m.From)
	text := m.Text
	if strings.TrimSpace(text) == "" {
		text = m.Caption
	}
	var files []connectors.File
	if c.allowedUser(m.From.ID) {
		files = c.filesOf(m) // files.go; approvers who are not users only answer
	}
	if strings.TrimSpace(text) == "" && len(files) == 0 {
		if err := c.sayPlain(ctx, chat, "I can only read text, pictures, files and voice notes."); err != nil {
			c.log.Warn("telegram: reply failed", "chat", chat, "err", err)
		}
		return
	}
	text, forUs := c.stripBotName(text)
	if !forUs {
		return // a command for another bot in a group
	}
	if !c.allowedUser(m.From.ID) && strings.HasPrefix(strings.TrimSpace(text), "/") {
		if err := c.sayPlain(ctx, chat, approverOnlyText); err != nil {
			c.log.Warn("telegram: reply failed", "chat", chat, "err", err)
		}
		return
	}
	in := connectors.Incoming{
		ChatID:   chatID(chat),
		UserID:   strconv.FormatInt(m.From.ID, 10),
		UserName: c.nameOf(strconv.FormatInt(m.From.ID, 10)),
		Text:     text,
		Group:    m.Chat.IsGroup() || m.Chat.IsSuperGroup(),
		Files:    files,
	}
	user := m.From.ID
	in.Authorize = func(it interactions.Interaction) error {
		return c.mayAnswer(user, it) // typed text denies or adjusts: approvers only
	}
	if _, err := c.handlerOf().HandleMessage(ctx, in); err != nil {
		c.log.Debug("telegram: message not handled", "chat", chat, "err", err)
	}
}

// stripBotName turns "/stop@leashd_bot args" (how commands look in groups)
// into "/stop args"; forUs is false for a command addressed to another bot.
func (c *Connector) stripBotName(text string) (out string, forUs bool) {
	if !strings.HasPrefix(text, "/") {
		return text, true
	}
	word, rest, _ := strings.Cut(text, " ")
	cmd, bot, ok := strings.Cut(word, "@")
	if !ok {
		return text, true
	}
	c.mu.Lock()
	self := c.self.UserName
	c.mu.Unlock()
	if !strings.EqualFold(bot, self) {
		return text, false
	}
	if rest != "" {
		return cmd + " " + rest, true
	}
	return cmd, true
}

var errForeignChat = errors.New("this button belongs to another chat")

// handleTap answers a button tap. Every callback query is answered
// exactly once; a stale or forged key only gets staleText.
func (c *Connector) handleTap(ctx context.Context, q *tgbotapi.CallbackQuery) {
	a := &tapAnswer{c: c, ctx: ctx, id: q.ID}
	defer a.answer("", false)
	if q.From == nil || (!c.allowedUser(q.From.ID) && !c.approver(q.From.ID)) {
		var id int64
		if q.From != nil {
			id = q.From.ID
		}
		c.log.Info("telegram: button tap from a user not in LEASHD_TELEGRAM_ALLOWED_USERS ignored", "user", id)
		a.answer(notAllowedText(id), true)
		return
	}
	c.rememberName(q.From)
	k, err := parseKey(q.Data)
	if err != nil || q.Message == nil || q.Message.Chat == nil {
		// leashd's buttons are always on a message it sent in a chat.
		a.answer(staleText, false)
		return
	}
	h := c.handlerOf()
	// A button answers only the interaction of the chat it was shown in:
	// forged data naming another chat's interaction is refused.
	tapChat := chatID(q.Message.Chat.ID)
	user := q.From.ID
	r := interactions.Reply{By: strconv.FormatInt(user, 10), Authorize: func(it interactions.Interaction) error {
		if it.ChatID != tapChat {
			return errForeignChat
		}
		return c.mayAnswer(user, it)
	}}
	// One path before and after a restart: an interaction the last run
	// left pending is pending again (the engine registers it at start-up).
	it, pending := h.Interaction(k.ID)
	if !pending || it.ChatID != tapChat {
		a.answer(staleText, false)
		return
	}
	out, answered, err := c.applyTap(ctx, h, k, it, r, a)
	if !answered {
		c.answerTap(ctx, q, k, a, out, err)
	}
}

// tapAnswer answers a callback query once: the client spins until it is
// answered, and a second answer fails.
type tapAnswer struct {
	c        *Connector
	ctx      context.Context
	id       string
	answered bool
}

func (a *tapAnswer) answer(text string, alert bool) {
	if a.answered {
		return
	}
	a.answered = true
	cfg := tgbotapi.NewCallback(a.id, text)
	cfg.ShowAlert = alert
	if err := a.c.out.direct(a.ctx, cfg); err != nil {
		a.c.log.Warn("telegram: answering a button tap failed", "err", err)
	}
}

// applyTap hands the tap to the engine: Done confirms a multi-select, an
// option toggles one or answers. answered reports that the tap was
// answered already (stale, or a toggle that worked).
func (c *Connector) applyTap(ctx context.Context, h connectors.Handler, k cbKey, it interactions.Interaction, r interactions.Reply, a *tapAnswer) (out interactions.Outcome, answered bool, err error) {
	if k.Done {
		if !it.MultiSelect {
			a.answer(staleText, false)
			return 0, true, nil
		}
		return interactions.Resolved, false, h.Confirm(ctx, k.ID, r)
	}
	label, ok := labelFor(k, it)
	if !ok {
		a.answer(staleText, false)
		return 0, true, nil
	}
	if it.MultiSelect {
		if _, err = h.Toggle(ctx, k.ID, label, r); err == nil {
			a.answer("", false)
			return 0, true, nil
		}
		return 0, false, err
	}
	r.Answers = []string{label}
	out, err = h.Reply(ctx, k.ID, r)
	return out, false, err
}

// answerTap tells the person what their tap did.
func (c *Connector) answerTap(ctx context.Context, q *tgbotapi.CallbackQuery, k cbKey, a *tapAnswer, out interactions.Outcome, err error) {
	switch {
	case err == nil && out == interactions.AwaitingFeedback:
		a.answer(feedbackPrompt, false)
		if e := c.sayPlain(ctx, q.Message.Chat.ID, feedbackPrompt); e != nil {
			c.log.Warn("telegram: asking for plan feedback failed", "err", e)
		}
	case err == nil && out == interactions.Counted:
		a.answer(countedText, false)
	case err == nil:
		a.answer("✓", false)
	case errors.Is(err, interactions.ErrAlreadyApproved):
		a.answer(alreadyApprovedText, false)
	case interactions.IsStale(err):
		a.answer(staleText, false)
	case errors.Is(err, interactions.ErrUnauthorized), errors.Is(err, interactions.ErrInvalidReply):
		a.answer(connectors.Truncate(err.Error(), 200), true)
	default:
		c.log.Warn("telegram: button tap failed", "id", k.ID, "err", err)
		a.answer(connectors.Truncate("Something went wrong: "+err.Error(), 200), true)
	}
}

// labelFor finds the option a key points at in the pending interaction.
func labelFor(k cbKey, it interactions.Interaction) (string, bool) {
	var opts []interactions.Choice
	switch k.Kind {
	case 'p':
		if it.Kind != interactions.KindPlanReview {
			return "", false
		}
		opts = interactions.PlanOptions
	case 't':
		if it.Kind != interactions.KindToolApproval {
			return "", false
		}
		opts = interactions.ToolOptions
	default:
		if it.Kind != interactions.KindQuestion && !it.OwnOptions() {
			return "", false
		}
		opts = it.Options
	}
	if k.Index >= len(opts) {
		return "", false
	}
	return opts[k.Index].Label, true
}
