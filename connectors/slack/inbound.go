package slack

import (
	"context"
	"errors"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// humanMessage is what the connector needs of a message or app_mention.
type humanMessage struct {
	mention  bool // an app_mention event
	channel  string
	chanType string
	user     string
	botID    string
	subtype  string
	text     string
	ts       string
	threadTS string
	files    []slack.File // shared with the message (files.go)
}

// onEvent handles an Events API event (already acknowledged): each human
// message once, whether it came as app_mention, as message or both, and
// however often Slack retried it.
func (c *Connector) onEvent(eventID string, ev slackevents.EventsAPIEvent) {
	if eventID != "" && !c.firstTime("event:"+eventID) {
		c.log.Debug("duplicate event ignored", "event_id", eventID)
		return
	}
	var m humanMessage
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		m = humanMessage{mention: true, channel: e.Channel, user: e.User, botID: e.BotID, text: e.Text, ts: e.TimeStamp, threadTS: e.ThreadTimeStamp, files: e.Files}
	case *slackevents.MessageEvent:
		m = humanMessage{channel: e.Channel, chanType: e.ChannelType, user: e.User, botID: e.BotID, subtype: e.SubType, text: e.Text, ts: e.TimeStamp, threadTS: e.ThreadTimeStamp}
		if e.Message != nil {
			m.files = e.Message.Files
		}
	default:
		return
	}
	c.onMessage(m)
}

func isDM(channel, chanType string) bool {
	return chanType == "im" || (chanType == "" && strings.HasPrefix(channel, "D"))
}

func (c *Connector) onMessage(m humanMessage) {
	c.mu.Lock()
	botUser, botID := c.botUserID, c.botID
	c.mu.Unlock()
	switch {
	case m.user == "" || m.ts == "" || !validChannel(m.channel):
		return
	case m.botID != "" || m.user == botUser || (botID != "" && m.botID == botID):
		return // the bot's own posts (and other bots') echo back
	case m.subtype != "" && m.subtype != "thread_broadcast" && m.subtype != "file_share":
		return // edits, deletions, joins…
	}
	mentionTag := "<@" + botUser + ">"
	mentioned := m.mention || (botUser != "" && strings.Contains(m.text, mentionTag))
	var ref chatRef
	dm := isDM(m.channel, m.chanType)
	switch {
	case dm:
		ref = chatRef{channel: m.channel}
	case m.threadTS != "" && m.threadTS != m.ts:
		ref = chatRef{channel: m.channel, thread: m.threadTS}
		c.mu.Lock()
		known := c.threads[m.channel+":"+m.threadTS]
		c.mu.Unlock()
		if !known && !mentioned {
			return // a thread leashd is not part of
		}
	case mentioned:
		ref = chatRef{channel: m.channel, thread: m.ts}
	default:
		return // channel chatter not addressed to the bot
	}
	// A mention arrives as app_mention and as message: handle it once.
	if !c.firstTime("msg:" + m.channel + ":" + m.ts) {
		return
	}
	text := strings.TrimSpace(strings.ReplaceAll(m.text, mentionTag, ""))
	chatID := ref.String()
	files := m.files
	c.spawn(chatID, func(ctx context.Context) { c.handleText(ctx, ref, m.user, text, !dm, files...) })
}

// handleText checks who wrote and hands the text to the engine.
func (c *Connector) handleText(ctx context.Context, ref chatRef, user, text string, group bool, files ...slack.File) {
	h := c.handler()
	chatID := ref.String()
	allowed, approver := c.allowed[user], c.approvers[user]
	if !allowed && !approver {
		c.refuse(ctx, ref, user, notAllowedText)
		return
	}
	if !allowed { // an approver only: may answer what awaits a decision
		if strings.HasPrefix(text, "/") || !awaitsDecision(h.Pending(chatID)) {
			c.refuse(ctx, ref, user, approverOnlyMsg)
			return
		}
	}
	if group && ref.thread != "" {
		c.mu.Lock()
		c.threads[ref.channel+":"+ref.thread] = true
		c.lastThread[ref.channel] = ref.thread
		c.mu.Unlock()
	}
	var in connectors.Incoming
	if allowed {
		in.Files = c.filesOf(files) // approvers who are not users only answer
	}
	if text == "" && len(in.Files) == 0 {
		if err := c.Say(ctx, chatID, "What should I do? Write it here."); err != nil {
			c.log.Warn("answering an empty mention", c.errAttr(err))
		}
		return
	}
	in.ChatID, in.UserID, in.UserName, in.Text, in.Group, in.Authorize = chatID, user, user, text, group, c.authorizer(user)
	if _, err := h.HandleMessage(ctx, in); err != nil {
		c.log.Debug("message not taken", "chat", chatID, c.errAttr(err))
	}
}

func awaitsDecision(pending []interactions.Interaction) bool {
	for _, it := range pending {
		if it.Decides() {
			return true
		}
	}
	return false
}

// refuse tells user privately, once per chat, why they were ignored.
func (c *Connector) refuse(ctx context.Context, ref chatRef, user, why string) {
	c.mu.Lock()
	first := c.warned.add(user + "|" + ref.String() + "|" + why)
	c.mu.Unlock()
	c.log.Info("message refused", "user", user, "chat", ref.String(), "why", why)
	if !first {
		return
	}
	thread := ref.thread
	c.mu.Lock()
	if !c.threads[ref.channel+":"+thread] {
		thread = "" // a refused mention starts no thread: answer beside it
	}
	c.mu.Unlock()
	c.ephemeral(ctx, ref.channel, thread, user, why)
}

// onInteraction handles an interactive payload (already acknowledged).
func (c *Connector) onInteraction(cb slack.InteractionCallback) {
	if cb.Type != slack.InteractionTypeBlockActions {
		return
	}
	for _, a := range cb.ActionCallback.BlockActions {
		c.spawn("", func(ctx context.Context) { c.tap(ctx, cb, a) })
	}
}

// tap handles one button. Every refusal is an ephemeral note to the person
// who tapped; nothing changes for anyone else.
func (c *Connector) tap(ctx context.Context, cb slack.InteractionCallback, a *slack.BlockAction) {
	h := c.handler()
	user := cb.User.ID
	channel := cb.Container.ChannelID
	if channel == "" {
		channel = cb.Channel.ID
	}
	thread := cb.Container.ThreadTs
	key, err := parseAction(a.ActionID, a.Value)
	if err != nil || user == "" {
		c.log.Info("unknown button", "user", user, c.errAttr(err))
		c.ephemeral(ctx, channel, thread, user, expiredText)
		return
	}
	// One path before and after a restart: an interaction the last run
	// left pending is pending again (the engine registers it at start-up).
	it, found := h.Interaction(key.ID)
	if !found {
		c.ephemeral(ctx, channel, thread, user, expiredText)
		return
	}
	ref, err := parseChat(it.ChatID)
	if err != nil || ref.channel != channel || (ref.thread != "" && thread != "" && thread != ref.thread) {
		c.log.Warn("button tapped outside its chat", "user", user, "id", key.ID, "channel", channel)
		c.ephemeral(ctx, channel, thread, user, expiredText)
		return
	}
	r := interactions.Reply{By: user, Authorize: c.authorizer(user)}
	switch {
	case key.Done:
		err = h.Confirm(ctx, key.ID, r)
	case key.Kind == 'q':
		if key.Index >= len(it.Options) {
			err = interactions.ErrInvalidReply
			break
		}
		label := it.Options[key.Index].Label
		if it.MultiSelect {
			_, err = h.Toggle(ctx, key.ID, label, r)
		} else {
			r.Answers = []string{label}
			_, err = h.Reply(ctx, key.ID, r)
		}
	default:
		opts := interactions.PlanOptions
		if key.Kind == 't' {
			opts = interactions.ToolOptions
		}
		if key.Index >= len(opts) || it.Kind != kindOf(key.Kind) {
			err = interactions.ErrInvalidReply
			break
		}
		r.Answers = []string{opts[key.Index].Label}
		_, err = h.Reply(ctx, key.ID, r)
	}
	switch {
	case err == nil:
	case errors.Is(err, interactions.ErrAlreadyApproved):
		c.ephemeral(ctx, channel, thread, user, alreadyApprovedText)
	case interactions.IsStale(err):
		c.ephemeral(ctx, channel, thread, user, expiredText)
	case errors.Is(err, interactions.ErrUnauthorized):
		c.ephemeral(ctx, channel, thread, user, "You are not allowed to answer this: "+unauthorizedReason(err))
	default:
		c.ephemeral(ctx, channel, thread, user, "That was not accepted: "+err.Error())
	}
}

func kindOf(k byte) interactions.Kind {
	if k == 'p' {
		return interactions.KindPlanReview
	}
	return interactions.KindToolApproval
}

func unauthorizedReason(err error) string {
	msg := err.Error()
	if strings.Contains(msg, errOnlyApprover) {
		return errOnlyApprover + "."
	}
	if strings.Contains(msg, errOnlyAllowed) {
		return errOnlyAllowed + "."
	}
	return msg
}

// onCommand handles "/leashd <command>" (already acknowledged): in a DM it
// applies to the DM; in a channel to the channel's latest leashd thread.
func (c *Connector) onCommand(cmd slack.SlashCommand) {
	if !validChannel(cmd.ChannelID) || cmd.UserID == "" {
		return
	}
	text := strings.TrimSpace(cmd.Text)
	if text == "" {
		text = "help"
	}
	if !strings.HasPrefix(text, "/") {
		text = "/" + text
	}
	var ref chatRef
	dm := strings.HasPrefix(cmd.ChannelID, "D")
	if dm {
		ref = chatRef{channel: cmd.ChannelID}
	} else {
		c.mu.Lock()
		thread := c.lastThread[cmd.ChannelID]
		c.mu.Unlock()
		if thread == "" {
			c.spawn("", func(ctx context.Context) {
				c.ephemeral(ctx, cmd.ChannelID, "", cmd.UserID, "No leashd thread here yet: mention the bot with a prompt to start one; /leashd commands then apply to the latest thread.")
			})
			return
		}
		ref = chatRef{channel: cmd.ChannelID, thread: thread}
	}
	c.spawn(ref.String(), func(ctx context.Context) {
		if !c.allowed[cmd.UserID] {
			c.refuse(ctx, ref, cmd.UserID, notAllowedText)
			return
		}
		c.handleText(ctx, ref, cmd.UserID, text, !dm)
	})
}
