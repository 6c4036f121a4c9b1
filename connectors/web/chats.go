package web

import (
	"slices"
	"time"

	"github.com/leashd/leashd/connectors"
)

// DefaultMaxChats is how many chats the connector lists unless
// WithMaxChats says otherwise.
const DefaultMaxChats = 1000

// noteChatLocked records activity in a chat: when, and its first and
// last text. The list of chats is bounded: a flood of new chat names (a
// script asking in a new chat each time) would otherwise grow it for as
// long as leashd runs. Past maxChats the chats idle longest are
// forgotten, a tenth at a time so that the sort is rare. A forgotten
// chat loses nothing a person needs: its events stay in the replay (the
// hub's own bound), its pending requests keep it listed (chatList asks
// the handler), and its next event lists it again.
func (c *Connector) noteChatLocked(chat, text string) {
	ci := c.chats[chat]
	if ci == nil {
		if len(c.chats) >= c.maxChats {
			c.evictIdleLocked()
		}
		ci = &chatInfo{ID: chat}
		c.chats[chat] = ci
	}
	ci.Updated = time.Now()
	if text != "" {
		ci.LastText = connectors.Truncate(text, 120)
		if ci.FirstText == "" {
			ci.FirstText = ci.LastText
		}
	}
}

// evictIdleLocked forgets the chats idle longest, down to nine tenths of
// maxChats, with what is kept about them (a stream of text cut short).
func (c *Connector) evictIdleLocked() {
	all := make([]*chatInfo, 0, len(c.chats))
	for _, ci := range c.chats {
		all = append(all, ci)
	}
	slices.SortFunc(all, func(a, b *chatInfo) int { return a.Updated.Compare(b.Updated) })
	keep := c.maxChats * 9 / 10
	for _, ci := range all[:max(len(all)-keep, 0)] {
		delete(c.chats, ci.ID)
		delete(c.streams, ci.ID)
	}
}

// Chats is how many chats the connector lists now (at most maxChats).
func (c *Connector) Chats() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.chats)
}
