package discord

import (
	"context"
	"errors"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/leashd/leashd/interactions"
)

// onInteraction takes a Gateway INTERACTION_CREATE: a component tap or an
// application command. Each is acknowledged first — Discord waits 3 s —
// and handled after.
func (c *Connector) onInteraction(_ *discordgo.Session, ic *discordgo.InteractionCreate) {
	i := ic.Interaction
	if i == nil || i.ID == "" || !c.firstTime("interaction:"+i.ID) {
		return
	}
	p := personOf(i.User, i.Member, i.GuildID)
	if p.id == "" {
		return
	}
	switch i.Type {
	case discordgo.InteractionMessageComponent:
		c.spawn("", func(ctx context.Context) {
			if err := c.respond(ctx, i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}); err != nil {
				c.log.Warn("acknowledging a tap", c.errAttr(err))
				return
			}
			c.tap(ctx, i, p)
		})
	case discordgo.InteractionApplicationCommand:
		c.spawn("", func(ctx context.Context) { c.command(ctx, i, p) })
	}
}

// tap handles one button or select menu. Every refusal is an ephemeral
// note to the person who tapped; nothing changes for anyone else.
func (c *Connector) tap(ctx context.Context, i *discordgo.Interaction, p person) {
	h := c.handler()
	data := i.MessageComponentData()
	menu := data.ComponentType == discordgo.SelectMenuComponent
	t, err := parseCustomID(data.CustomID, menu, data.Values)
	if err != nil {
		c.log.Info("unknown component", "user", p.id, c.errAttr(err))
		c.tell(ctx, i, expiredText)
		return
	}
	// One path before and after a restart: an interaction the last run
	// left pending is pending again (the engine registers it at start-up).
	it, found := h.Interaction(t.key.ID)
	ref, perr := parseChat(it.ChatID)
	if !found || perr != nil || ref.channel != i.ChannelID {
		if found {
			c.log.Warn("component tapped outside its chat", "user", p.id, "id", t.key.ID, "channel", i.ChannelID)
		}
		c.tell(ctx, i, expiredText)
		return
	}
	err = c.apply(ctx, it, t, interactions.Reply{By: p.id, Authorize: c.authorizer(p)})
	switch {
	case err == nil:
	case errors.Is(err, interactions.ErrAlreadyApproved):
		c.tell(ctx, i, AlreadyApprovedText)
	case interactions.IsStale(err):
		c.tell(ctx, i, expiredText)
	case errors.Is(err, interactions.ErrUnauthorized):
		c.tell(ctx, i, "You are not allowed to answer this: "+unauthorizedReason(err))
	default:
		c.tell(ctx, i, "That was not accepted: "+err.Error())
	}
}

// apply hands a decoded tap to the engine: a select menu's options, a
// question's option (toggled on a multi-select), Done, or a decision.
func (c *Connector) apply(ctx context.Context, it interactions.Interaction, t tapped, r interactions.Reply) error {
	h := c.handler()
	k := t.key
	switch {
	case t.menu:
		for _, n := range t.picks {
			if n >= len(it.Options) {
				return interactions.ErrInvalidReply
			}
			r.Answers = append(r.Answers, it.Options[n].Label)
		}
		if len(r.Answers) == 0 {
			return errors.New("pick at least one option")
		}
		_, err := h.Reply(ctx, k.ID, r)
		return err
	case k.Done:
		return h.Confirm(ctx, k.ID, r)
	case k.Kind == 'q':
		if k.Index >= len(it.Options) {
			return interactions.ErrInvalidReply
		}
		label := it.Options[k.Index].Label
		if it.MultiSelect {
			_, err := h.Toggle(ctx, k.ID, label, r)
			return err
		}
		r.Answers = []string{label}
		_, err := h.Reply(ctx, k.ID, r)
		return err
	}
	opts := interactions.PlanOptions
	kind := interactions.KindPlanReview
	if k.Kind == 't' {
		opts, kind = interactions.ToolOptions, interactions.KindToolApproval
	}
	if k.Index >= len(opts) || it.Kind != kind {
		return interactions.ErrInvalidReply
	}
	r.Answers = []string{opts[k.Index].Label}
	_, err := h.Reply(ctx, k.ID, r)
	return err
}

func unauthorizedReason(err error) string {
	msg := err.Error()
	for _, s := range []string{errOnlyApprover, errOnlyAllowed} {
		if strings.Contains(msg, s) {
			return s + "."
		}
	}
	return msg
}

// command runs an application command: in a DM or a leashd thread it
// applies there; in a channel, to the channel's latest leashd thread.
// Someone allowed sees it echoed in the chat (and the engine's answer
// after it); anyone else gets an ephemeral refusal.
func (c *Connector) command(ctx context.Context, i *discordgo.Interaction, p person) {
	data := i.ApplicationCommandData()
	text := "/" + data.Name
	for _, o := range data.Options {
		if o.Name == "text" && o.Type == discordgo.ApplicationCommandOptionString {
			if s := strings.TrimSpace(o.StringValue()); s != "" {
				text += " " + s
			}
		}
	}
	ref := chatRef{channel: i.ChannelID}
	if i.GuildID != "" {
		ref.guild = i.GuildID
		c.mu.Lock()
		last := c.lastThread[i.ChannelID]
		c.mu.Unlock()
		if !c.ownThread(ctx, i.ChannelID) { // run in a channel: its latest thread
			ref.channel = last
		}
	}
	var why string
	switch {
	case !c.allowed(p):
		why = NotAllowedText(p.id)
		if c.approver(p) {
			why = approverOnlyMsg
		}
	case ref.channel == "":
		why = noThreadText
	}
	if why != "" {
		c.log.Info("command refused", "user", p.id, "command", data.Name, "why", why)
		c.respondText(ctx, i, why, true)
		return
	}
	echo := text
	if ref.channel != i.ChannelID { // shown where it was run; it applies in the thread
		echo += " → <#" + ref.channel + ">"
	}
	c.respondText(ctx, i, connTruncate(echo), false)
	c.spawn(ref.String(), func(ctx context.Context) { c.handleText(ctx, ref, p, text, "", nil) })
}

func connTruncate(s string) string { return truncate(s, maxContent) }

// respondText answers an application command with a message, ephemeral
// (only its author sees it) or in the chat.
func (c *Connector) respondText(ctx context.Context, i *discordgo.Interaction, text string, ephemeral bool) {
	data := &discordgo.InteractionResponseData{Content: text, AllowedMentions: noMentions()}
	if ephemeral {
		data.Flags = discordgo.MessageFlagsEphemeral
	}
	err := c.respond(ctx, i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource, Data: data})
	if err != nil {
		c.log.Warn("answering a command", c.errAttr(err))
	}
}

// tell sends the person who tapped an ephemeral follow-up.
func (c *Connector) tell(ctx context.Context, i *discordgo.Interaction, text string) {
	err := c.call(ctx, func(o ...discordgo.RequestOption) error {
		_, err := c.s.FollowupMessageCreate(i, false, &discordgo.WebhookParams{Content: truncate(text, maxContent),
			Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions()}, o...)
		return err
	})
	if err != nil {
		c.log.Warn("telling someone about their tap", c.errAttr(err))
		return
	}
	c.countOut()
}

// respond is the interaction's one response (its acknowledgement).
func (c *Connector) respond(ctx context.Context, i *discordgo.Interaction, resp *discordgo.InteractionResponse) error {
	return c.call(ctx, func(o ...discordgo.RequestOption) error { return c.s.InteractionRespond(i, resp, o...) })
}
