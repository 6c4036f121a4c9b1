package discord

import (
	"context"
	"errors"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Why people are refused.
const (
	approverOnlyMsg = "You can decide plan reviews, tool approvals and approvals here, but not prompt the agent or run commands: that needs LEASHD_DISCORD_ALLOWED_USERS."
	expiredText     = "This question has expired."
	errOnlyApprover = "only approvers can decide plan reviews, tool approvals and approvals"
	errOnlyAllowed  = "only allowed users can answer the agent's questions"
	// AlreadyApprovedText tells someone whose approval counts already.
	AlreadyApprovedText = "You approved this already — your approval counts once."
	noThreadText        = "No leashd thread here yet: mention the bot with a prompt to start one; commands then apply to the latest thread."
)

// NotAllowedText is the one-time answer to a stranger: their user ID and
// the variable to add it to.
func NotAllowedText(user string) string {
	return "Not allowed. Your Discord user ID is " + user + " — add it to LEASHD_DISCORD_ALLOWED_USERS."
}

// person is who wrote or tapped, with their roles in the server (none in
// a DM).
type person struct {
	id    string
	name  string
	roles []string
	guild bool
}

func personOf(u *discordgo.User, m *discordgo.Member, guild string) person {
	if u == nil && m != nil {
		u = m.User
	}
	p := person{guild: guild != ""}
	if u != nil {
		p.id, p.name = u.ID, u.Username
		if u.GlobalName != "" {
			p.name = u.GlobalName
		}
	}
	if m != nil && p.guild {
		p.roles = m.Roles
	}
	return p
}

// allowed reports whether p may prompt and answer questions: a listed
// user, or in a server a member of a listed role.
func (c *Connector) allowed(p person) bool {
	if c.allowedIDs[p.id] {
		return true
	}
	if p.guild {
		for _, r := range p.roles {
			if c.roles[r] {
				return true
			}
		}
	}
	return false
}

// approver reports whether p may decide plan reviews and tool approvals.
func (c *Connector) approver(p person) bool {
	if c.ownApprovers {
		return c.approvers[p.id]
	}
	return c.allowed(p)
}

// IsGroupChat implements connectors.GroupTeller: a chat in a server (a
// thread) is a group chat; a direct message is not.
func (c *Connector) IsGroupChat(chatID string) bool {
	ref, err := parseChat(chatID)
	return err == nil && ref.guild != ""
}

// authorizer decides, under the coordinator's lock, whether p may answer
// an interaction: questions need someone allowed; plan reviews and tool
// approvals an approver.
func (c *Connector) authorizer(p person) func(interactions.Interaction) error {
	return func(it interactions.Interaction) error {
		if !it.Decides() {
			if c.allowed(p) {
				return nil
			}
			return errors.New(errOnlyAllowed)
		}
		if c.approver(p) {
			return nil
		}
		return errors.New(errOnlyApprover)
	}
}

// onMessage takes a Gateway MESSAGE_CREATE: a DM, a message in a leashd
// thread, or a mention of the bot in a channel (which starts a thread).
func (c *Connector) onMessage(_ *discordgo.Session, m *discordgo.MessageCreate) {
	c.mu.Lock()
	bot := c.botID
	_, known := c.threads[m.ChannelID]
	c.mu.Unlock()
	if m.Author == nil || m.Author.Bot || m.Author.ID == bot || m.ID == "" || !validSnowflake(m.ChannelID) {
		return // the bot's own posts (and other bots') come back too
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return // joins, pins, thread starters…
	}
	if !c.firstTime("msg:" + m.ID) {
		return // a resumed session may replay what was handled
	}
	p := personOf(m.Author, m.Member, m.GuildID)
	text := stripMention(m.Content, bot)
	files := c.filesOf(m.Message)
	switch {
	case m.GuildID == "":
		ref := chatRef{channel: m.ChannelID}
		c.spawn(ref.String(), func(ctx context.Context) { c.handleText(ctx, ref, p, text, m.ID, files) })
	case known:
		ref := chatRef{guild: m.GuildID, channel: m.ChannelID}
		c.spawn(ref.String(), func(ctx context.Context) { c.handleText(ctx, ref, p, text, m.ID, files) })
	case mentions(m.Message, bot):
		c.spawn("mention:"+m.ChannelID, func(ctx context.Context) { c.startThread(ctx, m.Message, p, text, files) })
	default: // maybe a thread leashd started before a restart
		ref := chatRef{guild: m.GuildID, channel: m.ChannelID}
		c.spawn(ref.String(), func(ctx context.Context) {
			if c.ownThread(ctx, m.ChannelID) {
				c.handleText(ctx, ref, p, text, m.ID, files)
			}
		})
	}
}

// ownThread reports whether channel is a thread the bot started (asked
// once per channel: the answer is remembered either way).
func (c *Connector) ownThread(ctx context.Context, channel string) bool {
	c.mu.Lock()
	_, known := c.threads[channel]
	asked := !c.asked.add(channel)
	c.mu.Unlock()
	if known || asked {
		return known
	}
	var ch *discordgo.Channel
	err := c.call(ctx, func(o ...discordgo.RequestOption) (err error) {
		ch, err = c.s.Channel(channel, o...)
		return err
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil || ch == nil || !ch.IsThread() || ch.OwnerID != c.botID {
		return false
	}
	c.threads[channel] = ch.ParentID
	return true
}

func mentions(m *discordgo.Message, bot string) bool {
	for _, u := range m.Mentions {
		if u != nil && u.ID == bot {
			return true
		}
	}
	return bot != "" && (strings.Contains(m.Content, "<@"+bot+">") || strings.Contains(m.Content, "<@!"+bot+">"))
}

func stripMention(text, bot string) string {
	if bot != "" {
		text = strings.ReplaceAll(text, "<@"+bot+">", "")
		text = strings.ReplaceAll(text, "<@!"+bot+">", "")
	}
	return strings.TrimSpace(text)
}

// startThread answers a mention in a channel: a stranger is refused
// beside it; otherwise a thread is started from the message and the text
// handled there. Where no thread can be started (the mention is in a
// thread already) the channel itself is the chat.
func (c *Connector) startThread(ctx context.Context, m *discordgo.Message, p person, text string, files []connectors.File) {
	if !c.allowed(p) && !c.approver(p) {
		c.refuse(ctx, chatRef{guild: m.GuildID, channel: m.ChannelID}, p, NotAllowedText(p.id), m.ID)
		return
	}
	name := connectors.Truncate(strings.Join(strings.Fields(text), " "), 90)
	if name == "" {
		name = "leashd"
	}
	var th *discordgo.Channel
	err := c.call(ctx, func(o ...discordgo.RequestOption) (err error) {
		th, err = c.s.MessageThreadStartComplex(m.ChannelID, m.ID, &discordgo.ThreadStart{Name: name, AutoArchiveDuration: 1440}, o...)
		return err
	})
	thread := m.ChannelID
	if err == nil && th != nil && validSnowflake(th.ID) {
		thread = th.ID
	} else {
		c.log.Info("no thread started; answering in the channel", "channel", m.ChannelID, c.errAttr(err))
	}
	ref := chatRef{guild: m.GuildID, channel: thread}
	c.mu.Lock()
	c.threads[thread] = m.ChannelID
	c.lastThread[m.ChannelID] = thread
	c.mu.Unlock()
	c.spawn(ref.String(), func(ctx context.Context) { c.handleText(ctx, ref, p, text, "", files) })
}

// handleText checks who wrote and hands the text, and the files
// attached, to the engine. Files without words still go: the engine
// keeps them for the person's next message.
func (c *Connector) handleText(ctx context.Context, ref chatRef, p person, text, msgID string, files []connectors.File) {
	h := c.handler()
	chatID := ref.String()
	allowed, approver := c.allowed(p), c.approver(p)
	if !allowed && !approver {
		c.refuse(ctx, ref, p, NotAllowedText(p.id), msgID)
		return
	}
	// An approver's words may answer a decision; their files reach no
	// agent, so they are refused rather than dropped.
	if !allowed && (strings.HasPrefix(text, "/") || len(files) > 0 || !awaitsDecision(h.Pending(chatID))) {
		c.refuse(ctx, ref, p, approverOnlyMsg, msgID)
		return
	}
	if text == "" && len(files) == 0 {
		if err := c.Say(ctx, chatID, "What should I do? Write it here."); err != nil {
			c.log.Warn("answering an empty mention", c.errAttr(err))
		}
		return
	}
	in := connectors.Incoming{ChatID: chatID, UserID: p.id, UserName: p.name, Text: text, Group: ref.guild != "", Authorize: c.authorizer(p), Files: files}
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

// refuse answers p's message once per chat and reason, as a reply to it.
func (c *Connector) refuse(ctx context.Context, ref chatRef, p person, why, msgID string) {
	c.mu.Lock()
	first := c.warned.add(p.id + "|" + ref.String() + "|" + why)
	c.mu.Unlock()
	c.log.Info("message refused", "user", p.id, "chat", ref.String(), "why", why)
	if !first {
		return
	}
	msg := &discordgo.MessageSend{Content: why, AllowedMentions: noMentions()}
	if msgID != "" {
		msg.Reference = &discordgo.MessageReference{MessageID: msgID, ChannelID: ref.channel}
	}
	if _, err := c.send(ctx, ref.channel, msg); err != nil {
		c.log.Warn("answering a refused message", c.errAttr(err))
	}
}
