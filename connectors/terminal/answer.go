package terminal

import (
	"fmt"
	"strconv"
	"strings"
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

// parseApproval reads an answer to a two-option approval: a or 1 picks the
// first (approve) option, r or 2 the second (reject) one. There is no
// default: anything else, Enter alone included, re-prompts.
func parseApproval(input string, approve, reject string) act {
	s := strings.TrimSpace(input)
	if a, ok := command(s); ok {
		return a
	}
	switch strings.ToLower(s) {
	case "a", "1":
		return act{kind: actSelect, index: 0}
	case "r", "2":
		return act{kind: actSelect, index: 1}
	}
	what := "Nothing typed"
	if s != "" {
		what = fmt.Sprintf("%q is not an answer", clip(s))
	}
	return act{kind: actInvalid, hint: fmt.Sprintf("%s: type a or 1 for %s, r or 2 for %s (Ctrl+C or /reject rejects).", what, approve, reject)}
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
