package terminal

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

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
	index int // 0-based option, for actSelect and actToggle
	// indexes are the 0-based options an actToggle flips, in the order
	// typed (index is the first).
	indexes []int
	text    string // for actText and actCommand
	hint    string // for actInvalid: what was wrong and what is accepted
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
// number picks the option at index, or rejects outright.
type approvalKey struct {
	letter, number string
	index          int
	reject         bool   // rejects: the agent is told, the turn stops
	text           string // the answer as shown
}

// approvalKeys are the answers of an approval: a or 1 approves (the first
// option), r or 2 the second. A tool approval's options are Allow, Allow
// for this session and Deny: a/1 is Allow, r/2 rejects at once (as Ctrl+C
// does: the turn stops), s/3 is Allow for this session and d/4 Deny with a
// reason, which asks for the reason the agent reads before it goes on. It
// returns nil when the options do not fit.
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
	keys := []approvalKey{key("a", "1", allow), {letter: "r", number: "2", index: -1, reject: true, text: "Reject"}}
	if session >= 0 {
		keys = append(keys, key("s", "3", session))
	}
	d := key("d", strconv.Itoa(len(keys)+1), deny)
	d.text += " with a reason"
	keys = append(keys, d)
	if it.DefaultToNo {
		// One stray key must not approve: Reject is offered first, and
		// only the letters answer (no digits).
		keys[0], keys[1] = keys[1], keys[0]
		for i := range keys {
			keys[i].number = ""
		}
	}
	return keys
}

// parseApproval reads an answer to an approval: a key's letter or number
// picks its option (or rejects). There is no default: anything else, Enter
// alone included, re-prompts with the valid inputs.
func parseApproval(input string, keys []approvalKey) act {
	s := strings.TrimSpace(input)
	if a, ok := command(s); ok {
		return a
	}
	for _, k := range keys {
		if strings.EqualFold(s, k.letter) || (k.number != "" && s == k.number) {
			if k.reject {
				return act{kind: actReject}
			}
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

// numbers is input made only of whole numbers separated by spaces or
// commas: "2", "1 3", "1,3", "1, 3", "-1".
var numbers = regexp.MustCompile(`^[+-]?[0-9]+(?:[\s,]+[+-]?[0-9]+)*$`)

// parseChoice reads an answer to a list of n options with the arrow
// pointer at pointer (n is the Reject line). Single-select: a number picks
// that option, Enter alone the pointed one. Multi-select: a number toggles
// that option, several ("1 3", "1,3", or "13" when every option has a
// one-digit number, so 13 can only mean 1 and 3) toggle each once, and
// Enter alone confirms (or rejects on the Reject line). With free set (a
// question, which takes an answer of its own as "Other"), text that is not
// numbers, r or a /command is the answer; "quoted" text is the answer
// as it is inside the quotes, so a number or r can be answered too.
func parseChoice(input string, n, pointer int, multi, free bool) act {
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
	if free && len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if t := strings.TrimSpace(s[1 : len(s)-1]); t != "" {
			return act{kind: actText, text: t}
		}
		return act{kind: actInvalid, hint: "Nothing between the quotes: " + validRange(n, multi, free)}
	}
	if !numbers.MatchString(s) {
		if free {
			return act{kind: actText, text: s}
		}
		return act{kind: actInvalid, hint: fmt.Sprintf("%q is not a choice: %s", clip(s), validRange(n, multi, free))}
	}
	idx, what := pickNumbers(s, n, multi)
	if what != "" {
		return act{kind: actInvalid, hint: what + ": " + validRange(n, multi, free)}
	}
	if multi {
		return act{kind: actToggle, index: idx[0], indexes: idx}
	}
	return act{kind: actSelect, index: idx[0]}
}

// pickNumbers reads the numbers of s (which matches numbers) as 0-based
// options of n, each once, in the order typed; or says what was wrong
// with them.
func pickNumbers(s string, n int, multi bool) ([]int, string) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(fields) > 1 && !multi {
		return nil, fmt.Sprintf("%q names %d options, this takes one", clip(s), len(fields))
	}
	var idx []int
	seen := make(map[int]bool)
	add := func(k int) {
		if !seen[k] {
			seen[k] = true
			idx = append(idx, k)
		}
	}
	for _, f := range fields {
		k, err := strconv.Atoi(f)
		if err == nil && k >= 1 && k <= n {
			add(k - 1)
			continue
		}
		if multi && n <= 9 && oneDigitOptions(f, n) {
			for _, c := range f {
				add(int(c - '1'))
			}
			continue
		}
		return nil, fmt.Sprintf("%s is out of range", clip(f))
	}
	return idx, ""
}

// oneDigitOptions reports whether f is two or more digits each naming one
// of n (at most 9) options: "13" of 3 options can only mean 1 and 3.
func oneDigitOptions(f string, n int) bool {
	if len(f) < 2 {
		return false
	}
	for _, c := range f {
		if c < '1' || int(c-'0') > n {
			return false
		}
	}
	return true
}

// validRange says what a choice prompt accepts.
func validRange(n int, multi, free bool) string {
	nums := "1"
	if n > 1 {
		nums = fmt.Sprintf("a number from 1 to %d", n)
	}
	own := ""
	if free {
		own = ` Other text is your own answer ("in quotes" if it is a number or r).`
	}
	if multi {
		more := ""
		if n > 1 {
			more = " (several: 1 3)"
		}
		return "type " + nums + more + " to toggle it (or Space), Enter confirms, r rejects." + own
	}
	return "type " + nums + " (or ↑/↓ and Enter), r rejects." + own
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
