package discord

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

func (c *Connector) countOut() { connectors.CountOutbound(c.stats, appName) }

// send posts a message in a channel and returns its ID.
func (c *Connector) send(ctx context.Context, channel string, m *discordgo.MessageSend) (string, error) {
	m.Content = truncate(m.Content, maxContent)
	if m.AllowedMentions == nil {
		m.AllowedMentions = noMentions()
	}
	var msg *discordgo.Message
	err := c.call(ctx, func(o ...discordgo.RequestOption) (err error) {
		msg, err = c.s.ChannelMessageSendComplex(channel, m, o...)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("discord: sending a message: %s", c.redact(err.Error()))
	}
	c.countOut()
	return msg.ID, nil
}

// post posts content (with components) in a chat.
func (c *Connector) post(ctx context.Context, ref chatRef, m outMsg) (string, error) {
	return c.send(ctx, ref.channel, &discordgo.MessageSend{Content: m.content, Components: m.components})
}

// edit replaces a message's content and, when components is not nil, its
// components (an empty list removes them).
func (c *Connector) edit(ctx context.Context, channel, id string, m outMsg) error {
	content := truncate(m.content, maxContent)
	e := &discordgo.MessageEdit{ID: id, Channel: channel, Content: &content, AllowedMentions: noMentions()}
	if m.components != nil {
		e.Components = &m.components
	}
	err := c.call(ctx, func(o ...discordgo.RequestOption) error {
		_, err := c.s.ChannelMessageEditComplex(e, o...)
		return err
	})
	if err != nil {
		return fmt.Errorf("discord: editing a message: %s", c.redact(err.Error()))
	}
	c.countOut()
	return nil
}

// place is how a chat's interactions are shown: "Only approvers can
// decide" in a server thread, and in a DM when approvers were configured
// apart from the allowed users.
func (c *Connector) place(ref chatRef) place {
	return place{thread: ref.guild != "", approversOnly: ref.guild != "" || c.ownApprovers}
}

// outLock serialises what leashd posts in one chat, so a question comes
// after the text before it.
func (c *Connector) outLock(chatID string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.outLocks[chatID]
	if m == nil {
		m = &sync.Mutex{}
		c.outLocks[chatID] = m
	}
	return m
}

// known records a thread the engine talks in (after a restart leashd
// learns its threads again from what it is asked to show there), so that
// replies in it reach the agent without a mention.
func (c *Connector) known(ref chatRef) {
	if ref.guild == "" {
		return
	}
	c.mu.Lock()
	if _, ok := c.threads[ref.channel]; !ok {
		c.threads[ref.channel] = ""
	}
	c.mu.Unlock()
}

// Say implements connectors.Output.
func (c *Connector) Say(ctx context.Context, chatID, text string) error {
	ref, err := parseChat(chatID)
	if err != nil {
		return err
	}
	c.known(ref)
	l := c.outLock(chatID)
	l.Lock()
	defer l.Unlock()
	ferr := c.flush(ctx, chatID, true)
	for _, part := range splitMarkdown(text, maxContent) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		if _, err := c.post(ctx, ref, outMsg{content: toDiscord(part)}); err != nil {
			return errors.Join(ferr, err)
		}
	}
	return ferr
}

// Done implements connectors.Output: the stream is flushed, then the
// result (when nothing was streamed) and the summary line are posted.
func (c *Connector) Done(ctx context.Context, chatID string, sum connectors.Summary) error {
	ref, err := parseChat(chatID)
	if err != nil {
		return err
	}
	l := c.outLock(chatID)
	l.Lock()
	defer l.Unlock()
	err = c.flush(ctx, chatID, true)
	c.mu.Lock()
	streamed := c.streams[chatID] != nil && c.streams[chatID].streamed
	delete(c.streams, chatID)
	c.mu.Unlock()
	var texts []string
	if !streamed && strings.TrimSpace(sum.Result) != "" {
		for _, p := range splitMarkdown(sum.Result, maxContent) {
			texts = append(texts, toDiscord(p))
		}
	}
	texts = append(texts, "-# "+sum.Line())
	for _, t := range texts {
		if _, perr := c.post(ctx, ref, outMsg{content: t}); perr != nil {
			return errors.Join(err, perr)
		}
	}
	return err
}

// Present implements connectors.Output: the interaction as messages in
// the chat (a long plan or command spans several); the reference is the
// message with the buttons, "<channel>/<message>".
func (c *Connector) Present(ctx context.Context, it *interactions.Interaction) (string, error) {
	ref, err := parseChat(it.ChatID)
	if err != nil {
		return "", err
	}
	c.known(ref)
	l := c.outLock(it.ChatID)
	l.Lock()
	defer l.Unlock()
	if err := c.flush(ctx, it.ChatID, true); err != nil {
		c.log.Warn("flushing agent text before an interaction", c.errAttr(err))
	}
	var id string
	for _, m := range render(*it, c.place(ref), nil) {
		if id, err = c.post(ctx, ref, m); err != nil {
			return "", err
		}
	}
	mr := msgRef{channel: ref.channel, id: id}.String()
	c.mu.Lock()
	c.refs[it.ID] = mr
	c.mu.Unlock()
	return mr, nil
}

// Update implements connectors.Output: the interaction's message shows the
// selection, the adjust prompt, a quorum's count, or the outcome and who
// gave it (components removed; an interrupted one keeps them, as they
// still work).
func (c *Connector) Update(ctx context.Context, ev interactions.Event) error {
	ref, err := parseChat(ev.Interaction.ChatID)
	if err != nil {
		return err
	}
	c.known(ref)
	// Present holds this lock until the reference is recorded, so a tap
	// faster than Present's return still finds its message.
	l := c.outLock(ev.Interaction.ChatID)
	l.Lock()
	defer l.Unlock()
	c.mu.Lock()
	refText := ev.Ref
	if refText == "" {
		refText = c.refs[ev.Interaction.ID]
	}
	if ev.Type == interactions.EventResolved {
		delete(c.refs, ev.Interaction.ID)
	}
	c.mu.Unlock()
	mr, ok := parseRef(refText)
	if !ok {
		return nil // never shown (or shown by another connector)
	}
	return c.edit(ctx, mr.channel, mr.id, renderUpdate(ev, c.place(ref)))
}
