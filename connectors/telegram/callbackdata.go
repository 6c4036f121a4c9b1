package telegram

import (
	"strconv"
	"strings"

	"github.com/leashd/leashd/connectors"
)

// cbKey is what a button carries as callback_data (connectors.ButtonKey,
// shared with the other chat apps).
type cbKey = connectors.ButtonKey

const maxKeyIDLen = connectors.MaxButtonIDLen

var errBadKey = connectors.ErrNotAButton

func parseKey(s string) (cbKey, error) { return connectors.ParseButtonKey(s) }

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
