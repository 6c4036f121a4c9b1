package telegram

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// cbKey is what a button carries as callback_data: the
// interaction ID and which button, never the label, so it stays short
// (≤ 64 bytes) whatever the labels' length or script:
//
//	<id>:<n>   option n of a question
//	<id>:p<n>  plan decision n (interactions.PlanOptions)
//	<id>:t<n>  tool decision n (interactions.ToolOptions)
//	<id>:done  confirm a multi-select question
type cbKey struct {
	id    string
	kind  byte // 'q', 'p', 't'; 0 with done
	index int
	done  bool
}

const maxKeyIDLen = 40

func (k cbKey) String() string {
	switch {
	case k.done:
		return k.id + ":done"
	case k.kind == 'q':
		return k.id + ":" + strconv.Itoa(k.index)
	default:
		return k.id + ":" + string(k.kind) + strconv.Itoa(k.index)
	}
}

var errBadKey = errors.New("not a leashd button")

// parseKey decodes callback data; anything else is an error naming what
// is accepted.
func parseKey(s string) (cbKey, error) {
	id, rest, ok := strings.Cut(s, ":")
	if !ok || id == "" || len(id) > maxKeyIDLen || !validID(id) {
		return cbKey{}, fmt.Errorf("%w: %q (expected <interaction id>:<option index>, :p<n>, :t<n> or :done)", errBadKey, s)
	}
	if rest == "done" {
		return cbKey{id: id, done: true}, nil
	}
	k := cbKey{id: id, kind: 'q'}
	if rest != "" && (rest[0] == 'p' || rest[0] == 't') {
		k.kind, rest = rest[0], rest[1:]
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n > 99 || strconv.Itoa(n) != rest {
		return cbKey{}, fmt.Errorf("%w: %q has no option index 0-99", errBadKey, s)
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

// msgRef is a Telegram message: what Present returns as the reference.
type msgRef struct {
	chat int64
	msg  int
}

func (r msgRef) String() string { return strconv.FormatInt(r.chat, 10) + ":" + strconv.Itoa(r.msg) }

func parseRef(s string) (msgRef, bool) {
	c, m, ok := strings.Cut(s, ":")
	chat, err1 := strconv.ParseInt(c, 10, 64)
	msg, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || chat == 0 || msg <= 0 {
		return msgRef{}, false
	}
	return msgRef{chat, msg}, true
}
