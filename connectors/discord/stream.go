package discord

import (
	"cmp"
	"context"
	"strings"
	"time"
)

// stream is a chat's running agent output: one message edited at most
// once per streamGap, continued in a new message before it grows past
// Discord's 2,000 characters.
type stream struct {
	md       string    // Markdown of the current message
	id       string    // the current message, once posted
	shown    string    // what it shows
	last     time.Time // when the current message was last sent or edited
	timer    *time.Timer
	flushing bool // a flush is running: it schedules the next one itself
	streamed bool // this turn showed agent text
}

// StreamText implements connectors.Output.
func (c *Connector) StreamText(_ context.Context, chatID, text string) error {
	if _, err := parseChat(chatID); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streams[chatID]
	if s == nil {
		s = &stream{}
		c.streams[chatID] = s
	}
	s.md += text
	s.streamed = true
	if s.timer == nil && !s.flushing {
		wait := max(time.Until(s.last.Add(c.streamGap)), 0)
		s.timer = time.AfterFunc(wait, func() { c.flushLater(chatID) })
	}
	return nil
}

func (c *Connector) flushLater(chatID string) {
	c.mu.Lock()
	ctx := c.runCtx
	c.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	l := c.outLock(chatID)
	l.Lock()
	defer l.Unlock()
	if err := c.flush(ctx, chatID, false); err != nil {
		c.log.Warn("streaming agent text", "chat", chatID, c.errAttr(err))
	}
}

// flush shows a chat's pending stream text; seal ends the current message
// so what follows starts a new one. Called with the chat's outLock held.
func (c *Connector) flush(ctx context.Context, chatID string, seal bool) error {
	ref, err := parseChat(chatID)
	if err != nil {
		return err
	}
	c.mu.Lock()
	s := c.streams[chatID]
	if s == nil {
		c.mu.Unlock()
		return nil
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.flushing = true
	md, id, shown, last := s.md, s.id, s.shown, s.last
	c.mu.Unlock()

	var firstErr error
	sent := false
	var parts []string
	if strings.TrimSpace(md) != "" {
		parts = splitMarkdown(md, maxContent)
	}
	for i, part := range parts {
		text := toDiscord(part)
		switch {
		case id != "" && text == shown:
		case id != "":
			if err := sleepUntil(ctx, last.Add(c.streamGap)); err != nil {
				firstErr = cmp.Or(firstErr, err)
				continue
			}
			firstErr = cmp.Or(firstErr, c.edit(ctx, ref.channel, id, outMsg{content: text}))
			last, sent = time.Now(), true
		default:
			newID, err := c.post(ctx, ref, outMsg{content: text})
			if err != nil {
				firstErr = cmp.Or(firstErr, err)
				continue
			}
			id, last, sent = newID, time.Now(), true
		}
		shown = text
		if i < len(parts)-1 { // this message is full: the rest goes into new ones
			id, shown = "", ""
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s.flushing = false
	if c.streams[chatID] != s {
		return firstErr
	}
	if sent {
		s.last = last
	}
	added := strings.TrimPrefix(s.md, md) // text added meanwhile stays
	if len(parts) > 0 {
		s.md = parts[len(parts)-1] + added
	} else {
		s.md = added
	}
	s.id, s.shown = id, shown
	if seal {
		s.md, s.id, s.shown = added, "", ""
	}
	if added != "" && s.timer == nil {
		s.timer = time.AfterFunc(max(time.Until(s.last.Add(c.streamGap)), 0), func() { c.flushLater(chatID) })
	}
	return firstErr
}
