package terminal

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// actKind is what a typed answer asks for.
type actKind int

const (
	actInvalid actKind = iota // re-prompt with act.hint
	actSelect                 // choose option act.index
	actToggle                 // multi-select: flip option act.index
	actConfirm                // multi-select: confirm the selection
	actReject                 // decline the interaction outright
	actText                   // free text act.text
	actCommand                // a /command for the engine (act.text)
)

// act is the meaning of what a person typed at an interaction prompt.
type act struct {
	kind  actKind
	index int    // 0-based option, for actSelect and actToggle
	text  string // for actText and actCommand
	hint  string // for actInvalid: what was wrong and what is accepted
}

// command recognises "/reject" and other slash commands typed at any
// interaction prompt.
func command(s string) (act, bool) {
	if !strings.HasPrefix(s, "/") || len(s) < 2 {
		return act{}, false
	}
	name, _, _ := strings.Cut(s[1:], " ")
	if strings.EqualFold(name, "reject") {
		return act{kind: actReject}, true
	}
	return act{kind: actCommand, text: s}, true
}

// approvalKey is one answer an approval prompt takes: its letter or its
// number picks the option at index.
type approvalKey struct {
	letter, number string
	index          int
	text           string // the option as shown
}

// approvalKeys are the answers of an approval: a or 1 approves (the first
// option), r or 2 rejects (the second). A tool approval's options are
// Allow, Allow for this session and Deny: a/1 is Allow, r/2 Deny, and s/3
// Allow for this session. It returns nil when the options do not fit.
func approvalKeys(it interactions.Interaction) []approvalKey {
	key := func(letter, number string, i int) approvalKey {
		return approvalKey{letter: letter, number: number, index: i, text: connectors.OptionText(it, it.Options[i].Label)}
	}
	if it.Kind != interactions.KindToolApproval {
		if len(it.Options) != 2 {
			return nil
		}
		return []approvalKey{key("a", "1", 0), key("r", "2", 1)}
	}
	find := func(label string) int {
		for i, o := range it.Options {
			if o.Label == label {
				return i
			}
		}
		return -1
	}
	allow, deny, session := find(interactions.DecisionAllow), find(interactions.DecisionDeny), find(interactions.DecisionAllowSession)
	if allow < 0 || deny < 0 {
		return nil
	}
	keys := []approvalKey{key("a", "1", allow), key("r", "2", deny)}
	if session >= 0 {
		keys = append(keys, key("s", "3", session))
	}
	if it.DefaultToNo {
		// One stray key must not approve: Deny is offered first, and
		// only the letters answer (no digits).
		keys[0], keys[1] = keys[1], keys[0]
		for i := range keys {
			keys[i].number = ""
		}
	}
	return keys
}

// parseApproval reads an answer to an approval: a key's letter or number
// picks its option. There is no default: anything else, Enter alone
// included, re-prompts with the valid inputs.
func parseApproval(input string, keys []approvalKey) act {
	s := strings.TrimSpace(input)
	if a, ok := command(s); ok {
		return a
	}
	for _, k := range keys {
		if strings.EqualFold(s, k.letter) || (k.number != "" && s == k.number) {
			return act{kind: actSelect, index: k.index}
		}
	}
	what := "Nothing typed"
	if s != "" {
		what = fmt.Sprintf("%q is not an answer", clip(s))
	}
	valid := make([]string, len(keys))
	for i, k := range keys {
		valid[i] = fmt.Sprintf("%s or %s for %s", k.letter, k.number, k.text)
		if k.number == "" {
			valid[i] = fmt.Sprintf("%s for %s", k.letter, k.text)
		}
	}
	return act{kind: actInvalid, hint: fmt.Sprintf("%s: type %s (Ctrl+C or /reject rejects).", what, strings.Join(valid, ", "))}
}

// parseChoice reads an answer to a list of n options with the arrow
// pointer at pointer (n is the Reject line). Single-select: a number picks
// that option, Enter alone the pointed one. Multi-select: a number toggles
// that option, Enter alone confirms (or rejects on the Reject line).
func parseChoice(input string, n, pointer int, multi bool) act {
	s := strings.TrimSpace(input)
	if a, ok := command(s); ok {
		return a
	}
	if s == "" {
		switch {
		case pointer >= n || pointer < 0:
			return act{kind: actReject}
		case multi:
			return act{kind: actConfirm}
		default:
			return act{kind: actSelect, index: pointer}
		}
	}
	if strings.EqualFold(s, "r") {
		return act{kind: actReject}
	}
	k, err := strconv.Atoi(s)
	if err == nil && k >= 1 && k <= n {
		if multi {
			return act{kind: actToggle, index: k - 1}
		}
		return act{kind: actSelect, index: k - 1}
	}
	what := fmt.Sprintf("%q is not a choice", clip(s))
	if err == nil {
		what = fmt.Sprintf("%d is out of range", k)
	}
	return act{kind: actInvalid, hint: what + ": " + validRange(n, multi)}
}

// validRange says what a choice prompt accepts.
func validRange(n int, multi bool) string {
	nums := "1"
	if n > 1 {
		nums = fmt.Sprintf("a number from 1 to %d", n)
	}
	if multi {
		return "type " + nums + " to toggle it (or Space), Enter confirms, r rejects."
	}
	return "type " + nums + " (or ↑/↓ and Enter), r rejects."
}

// parseText reads a free-text answer: empty input re-prompts, r or /reject
// rejects, other /commands go to the engine.
func parseText(input string) act {
	s := strings.TrimSpace(input)
	if a, ok := command(s); ok {
		return a
	}
	switch {
	case s == "":
		return act{kind: actInvalid, hint: "Nothing typed: type your answer and press Enter (r or /reject rejects)."}
	case strings.EqualFold(s, "r"):
		return act{kind: actReject}
	}
	return act{kind: actText, text: s}
}

// clip keeps echoed input short in hints.
func clip(s string) string {
	r := []rune(s)
	if len(r) > 20 {
		return string(r[:19]) + "…"
	}
	return s
}
