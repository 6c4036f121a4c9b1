package slack

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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
// keyPrefix, as its action_id): the interaction ID and which button, never
// the label, so it stays short whatever the labels are:
//
//	<id>:<n>   option n of a question (toggles it on a multi-select)
//	<id>:p<n>  plan decision n (interactions.PlanOptions)
//	<id>:t<n>  tool decision n (interactions.ToolOptions)
//	<id>:done  confirm a multi-select question
type buttonKey struct {
	id    string
	kind  byte // 'q', 'p', 't'; 0 with done
	index int
	done  bool
}

// keyPrefix starts the action_id of every leashd button.
const keyPrefix = "leashd:"

const maxKeyIDLen = 40

func (k buttonKey) String() string {
	switch {
	case k.done:
		return k.id + ":done"
	case k.kind == 'q':
		return k.id + ":" + strconv.Itoa(k.index)
	default:
		return k.id + ":" + string(k.kind) + strconv.Itoa(k.index)
	}
}

// actionID is the button's action_id: unique within a message because
// each button has its own key.
func (k buttonKey) actionID() string { return keyPrefix + k.String() }

var errBadKey = errors.New("not a leashd button")

// parseAction decodes a tapped button's action_id and value. They must
// agree (a forged or altered tap does not); anything else is an error
// naming what is accepted.
func parseAction(actionID, value string) (buttonKey, error) {
	k, err := parseKey(value)
	if err != nil {
		return buttonKey{}, err
	}
	if actionID != k.actionID() {
		return buttonKey{}, fmt.Errorf("%w: action_id %q does not match value %q (expected %q)", errBadKey, actionID, value, k.actionID())
	}
	return k, nil
}

// parseKey decodes a button value.
func parseKey(s string) (buttonKey, error) {
	id, rest, ok := strings.Cut(s, ":")
	if !ok || id == "" || len(id) > maxKeyIDLen || !validID(id) {
		return buttonKey{}, fmt.Errorf("%w: %q (expected <interaction id>:<option index>, :p<n>, :t<n> or :done)", errBadKey, s)
	}
	if rest == "done" {
		return buttonKey{id: id, done: true}, nil
	}
	k := buttonKey{id: id, kind: 'q'}
	if rest != "" && (rest[0] == 'p' || rest[0] == 't') {
		k.kind, rest = rest[0], rest[1:]
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n > 99 || strconv.Itoa(n) != rest {
		return buttonKey{}, fmt.Errorf("%w: %q has no option index 0-99", errBadKey, s)
	}
	k.index = n
	return k, nil
}

func validID(id string) bool {
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

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
