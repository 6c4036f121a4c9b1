package connectors

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ButtonKey is what a button of a chat app carries (Telegram's
// callback_data, Slack's value): the interaction ID and which button,
// never the label, so it stays short (≤ 64 bytes) whatever the labels'
// length or script:
//
//	<id>:<n>   option n of a question (toggles it on a multi-select)
//	<id>:p<n>  plan decision n (interactions.PlanOptions)
//	<id>:t<n>  tool decision n (interactions.ToolOptions)
//	<id>:done  confirm a multi-select question
type ButtonKey struct {
	ID    string
	Kind  byte // 'q', 'p', 't'; 0 with Done
	Index int
	Done  bool
}

// MaxButtonIDLen is the longest interaction ID a ButtonKey carries.
const MaxButtonIDLen = 40

func (k ButtonKey) String() string {
	switch {
	case k.Done:
		return k.ID + ":done"
	case k.Kind == 'q':
		return k.ID + ":" + strconv.Itoa(k.Index)
	default:
		return k.ID + ":" + string(k.Kind) + strconv.Itoa(k.Index)
	}
}

// ErrNotAButton is what ParseButtonKey returns for anything but a leashd
// button: a forged, altered or foreign tap.
var ErrNotAButton = errors.New("not a leashd button")

// ParseButtonKey decodes what a button carries; anything else is an error
// naming what is accepted.
func ParseButtonKey(s string) (ButtonKey, error) {
	id, rest, ok := strings.Cut(s, ":")
	if !ok || id == "" || len(id) > MaxButtonIDLen || !validButtonID(id) {
		return ButtonKey{}, fmt.Errorf("%w: %q (expected <interaction id>:<option index>, :p<n>, :t<n> or :done)", ErrNotAButton, s)
	}
	if rest == "done" {
		return ButtonKey{ID: id, Done: true}, nil
	}
	k := ButtonKey{ID: id, Kind: 'q'}
	if rest != "" && (rest[0] == 'p' || rest[0] == 't') {
		k.Kind, rest = rest[0], rest[1:]
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n > 99 || strconv.Itoa(n) != rest {
		return ButtonKey{}, fmt.Errorf("%w: %q has no option index 0-99", ErrNotAButton, s)
	}
	k.Index = n
	return k, nil
}

func validButtonID(id string) bool {
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
