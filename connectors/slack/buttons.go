package slack

import (
	"errors"
	"fmt"
	"strings"

	"github.com/leashd/leashd/connectors"
)

// chatRef is a chat ID. A direct message conversation is one chat, "slack:<channel>"
// (e.g. "slack:D024BE91L"). In a channel, each thread started by mentioning
// the bot is one chat, "slack:<channel>:<thread_ts>" (e.g.
// "slack:C123:1700000000.000100"): everything leashd says for that session
// goes into the thread.
type chatRef struct {
	channel string
	thread  string // thread_ts; "" for a DM
}

func (c chatRef) String() string {
	if c.thread == "" {
		return appName + ":" + c.channel
	}
	return appName + ":" + c.channel + ":" + c.thread
}

var errBadChat = errors.New("not a Slack chat ID")

// parseChat decodes a chat ID of this connector.
func parseChat(id string) (chatRef, error) {
	rest, ok := strings.CutPrefix(id, appName+":")
	if !ok {
		return chatRef{}, fmt.Errorf("%w: %q (expected slack:<channel> or slack:<channel>:<thread_ts>)", errBadChat, id)
	}
	ch, thread, threaded := strings.Cut(rest, ":")
	if !validChannel(ch) || (threaded && !validTS(thread)) || strings.Count(rest, ":") > 1 {
		return chatRef{}, fmt.Errorf("%w: %q (expected slack:<channel> or slack:<channel>:<thread_ts>)", errBadChat, id)
	}
	return chatRef{channel: ch, thread: thread}, nil
}

// validChannel accepts Slack conversation IDs: upper-case letters and
// digits, 2 to 32 of them.
func validChannel(s string) bool {
	if len(s) < 2 || len(s) > 32 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// validTS accepts Slack message timestamps such as "1700000000.000100".
func validTS(s string) bool {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || sec == "" || frac == "" || len(s) > 32 {
		return false
	}
	for _, c := range []byte(sec + frac) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// buttonKey is what a button carries as its value (and, prefixed with
// keyPrefix, as its action_id): connectors.ButtonKey, shared with the
// other chat apps.
type buttonKey = connectors.ButtonKey

// keyPrefix starts the action_id of every leashd button.
const keyPrefix = "leashd:"

const maxKeyIDLen = connectors.MaxButtonIDLen

// actionIDOf is the button's action_id: unique within a message because
// each button has its own key.
func actionIDOf(k buttonKey) string { return keyPrefix + k.String() }

var errBadKey = connectors.ErrNotAButton

// parseAction decodes a tapped button's action_id and value. They must
// agree (a forged or altered tap does not); anything else is an error
// naming what is accepted.
func parseAction(actionID, value string) (buttonKey, error) {
	k, err := parseKey(value)
	if err != nil {
		return buttonKey{}, err
	}
	if actionID != actionIDOf(k) {
		return buttonKey{}, fmt.Errorf("%w: action_id %q does not match value %q (expected %q)", errBadKey, actionID, value, actionIDOf(k))
	}
	return k, nil
}

func parseKey(s string) (buttonKey, error) { return connectors.ParseButtonKey(s) }

// msgRef is a posted message: what Present returns as the reference,
// "<channel>:<ts>".
type msgRef struct {
	channel string
	ts      string
}

func (r msgRef) String() string { return r.channel + ":" + r.ts }

func parseRef(s string) (msgRef, bool) {
	ch, ts, ok := strings.Cut(s, ":")
	if !ok || !validChannel(ch) || !validTS(ts) {
		return msgRef{}, false
	}
	return msgRef{ch, ts}, true
}
