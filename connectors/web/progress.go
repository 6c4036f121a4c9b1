package web

import (
	"context"
	"time"
)

// progressEvent is a running turn's signs of life ("" when they end).
type progressEvent struct {
	ChatID string    `json:"chat_id"`
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
}

// Progress implements connectors.Progresser: a turn.progress event, each
// replacing the chat's last in the replay; the page shows it under the
// chat's latest output.
func (c *Connector) Progress(_ context.Context, chatID, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.progress == nil {
		c.progress = map[string]uint64{}
	}
	id := c.publishLocked("turn.progress", chatID, progressEvent{chatID, text, time.Now()}, "", c.progress[chatID])
	if text == "" {
		delete(c.progress, chatID)
	} else {
		c.progress[chatID] = id
	}
	return nil
}
