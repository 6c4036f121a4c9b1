package slack

import (
	"context"
	"strings"
	"time"
)

// Progress implements connectors.Progresser: the line goes in italics
// under the turn's streamed message (a message of its own when the agent
// has said nothing yet), edited in place as output is, no more often
// than the stream's edits; "" takes it away.
func (c *Connector) Progress(_ context.Context, chatID, text string) error {
	if _, err := parseChat(chatID); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streams[chatID]
	if s == nil {
		if text == "" {
			return nil
		}
		s = &stream{}
		c.streams[chatID] = s
	}
	s.progress = text
	if s.timer == nil && !s.flushing {
		wait := max(time.Until(s.last.Add(c.streamGap)), 0)
		s.timer = time.AfterFunc(wait, func() { c.flushLater(chatID) })
	}
	return nil
}

// withProgress is a message's mrkdwn with the progress line under it.
func withProgress(text, progress string) string {
	if progress == "" {
		return text
	}
	return strings.TrimLeft(text+"\n\n_"+escape(progress)+"_", "\n")
}

// streamParts are the stream's Markdown in parts that each fit a
// message; one empty part when there is only a progress line to show.
func streamParts(md, progress string) []string {
	if strings.TrimSpace(md) == "" {
		if progress != "" {
			return []string{""}
		}
		return nil
	}
	return splitMarkdown(md, maxMessage)
}
