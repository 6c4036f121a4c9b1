package discord

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/leashd/leashd/connectors"
)

// chatRef is a chat ID. A direct message channel is one chat,
// "discord:<channel>"; in a server (guild), each thread leashd started
// from a mention of the bot is one chat (one agent session),
// "discord:<guild>:<thread>": everything leashd says for it goes into the
// thread.
type chatRef struct {
	guild   string // "" for a DM
	channel string // the DM channel, or the thread (a thread is a channel)
}

func (c chatRef) String() string {
	if c.guild == "" {
		return appName + ":" + c.channel
	}
	return appName + ":" + c.guild + ":" + c.channel
}

var errBadChat = errors.New("not a Discord chat ID")

// parseChat decodes a chat ID of this connector.
func parseChat(id string) (chatRef, error) {
	rest, ok := strings.CutPrefix(id, appName+":")
	if !ok {
		return chatRef{}, fmt.Errorf("%w: %q (expected discord:<channel> or discord:<guild>:<thread>)", errBadChat, id)
	}
	a, b, two := strings.Cut(rest, ":")
	if !validSnowflake(a) || (two && !validSnowflake(b)) {
		return chatRef{}, fmt.Errorf("%w: %q (expected discord:<channel> or discord:<guild>:<thread>)", errBadChat, id)
	}
	if !two {
		return chatRef{channel: a}, nil
	}
	return chatRef{guild: a, channel: b}, nil
}

// msgRef is a posted message, what Present returns as the reference:
// "<channel>/<message>".
type msgRef struct{ channel, id string }

func (r msgRef) String() string { return r.channel + "/" + r.id }

func parseRef(s string) (msgRef, bool) {
	ch, id, ok := strings.Cut(s, "/")
	if !ok || !validSnowflake(ch) || !validSnowflake(id) {
		return msgRef{}, false
	}
	return msgRef{ch, id}, true
}

// buttonKey is what a component carries: connectors.ButtonKey, shared
// with the other chat apps.
type buttonKey = connectors.ButtonKey

// keyPrefix starts the custom_id of every leashd component.
const keyPrefix = "leashd:"

// maxCustomID is Discord's limit on a component's custom_id.
const maxCustomID = 100

// maxPicks bounds a select menu's values (Discord offers at most 25
// options).
const maxPicks = 25

// customID is the component's custom_id: a button's key, or for the
// multi-select menu the key that confirms (<id>:done), its values being
// the options' indices.
func customID(k buttonKey) string { return keyPrefix + k.String() }

// tapped is a decoded component interaction: which key, and for a select
// menu the options picked (indices, in the order given).
type tapped struct {
	key   buttonKey
	picks []int
	menu  bool
}

// parseCustomID decodes a component's custom_id and, for a select menu,
// its values. Anything but a leashd component — a foreign prefix, a key
// that does not parse, values on a button, an index out of 0-99, a repeat
// — is an error naming what is accepted.
func parseCustomID(id string, menu bool, values []string) (tapped, error) {
	if len(id) > maxCustomID {
		return tapped{}, fmt.Errorf("%w: custom_id of %d bytes (at most %d)", connectors.ErrNotAButton, len(id), maxCustomID)
	}
	rest, ok := strings.CutPrefix(id, keyPrefix)
	if !ok {
		return tapped{}, fmt.Errorf("%w: custom_id %q (expected %q followed by <interaction id>:<option>)", connectors.ErrNotAButton, id, keyPrefix)
	}
	k, err := connectors.ParseButtonKey(rest)
	if err != nil {
		return tapped{}, err
	}
	if !menu {
		if len(values) > 0 {
			return tapped{}, fmt.Errorf("%w: a button carries no values", connectors.ErrNotAButton)
		}
		return tapped{key: k}, nil
	}
	if !k.Done {
		return tapped{}, fmt.Errorf("%w: select menu %q (expected <interaction id>:done)", connectors.ErrNotAButton, id)
	}
	if len(values) > maxPicks {
		return tapped{}, fmt.Errorf("%w: %d values (at most %d)", connectors.ErrNotAButton, len(values), maxPicks)
	}
	t := tapped{key: k, menu: true}
	seen := make(map[int]bool, len(values))
	for _, v := range values {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 99 || strconv.Itoa(n) != v || seen[n] {
			return tapped{}, fmt.Errorf("%w: select value %q (expected distinct option indices 0-99)", connectors.ErrNotAButton, v)
		}
		seen[n] = true
		t.picks = append(t.picks, n)
	}
	return t, nil
}
