package connectors

import (
	"strings"
	"unicode/utf8"

	"github.com/leashd/leashd/interactions"
)

// DecisionLabel is the button text people see for a plan or tool decision
// (the label the engine and API use is the key).
func DecisionLabel(decision string) string {
	switch decision {
	case interactions.DecisionCleanEdit:
		return "Approve, clear context"
	case interactions.DecisionEdit:
		return "Approve, auto-accept edits"
	case interactions.DecisionDefault:
		return "Approve, review edits"
	case interactions.DecisionAdjust:
		return "Adjust"
	case interactions.DecisionAllow:
		return "Allow"
	case interactions.DecisionAllowSession:
		return "Allow for this session"
	case interactions.DecisionDeny:
		return "Deny"
	case interactions.DecisionReject:
		return "Rejected"
	}
	return decision
}

// OptionText is what to show on an interaction's option: the label of a
// question's option, the human name of a decision.
func OptionText(it interactions.Interaction, label string) string {
	if it.Kind == interactions.KindQuestion {
		return label
	}
	return DecisionLabel(label)
}

// SplitLines cuts s into parts of at most max characters (runes), breaking
// at line ends where it can and inside a line only when one line alone is
// longer than max. Joining the parts with "\n" gives s back where it broke at
// line ends.
func SplitLines(s string, max int) []string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return []string{s}
	}
	var parts []string
	var cur strings.Builder
	curLen := 0
	flush := func() {
		parts = append(parts, cur.String())
		cur.Reset()
		curLen = 0
	}
	for _, line := range strings.Split(s, "\n") {
		n := utf8.RuneCountInString(line)
		sep := 0
		if curLen > 0 {
			sep = 1
		}
		if curLen+sep+n <= max {
			if sep == 1 {
				cur.WriteByte('\n')
			}
			cur.WriteString(line)
			curLen += sep + n
			continue
		}
		if curLen > 0 {
			flush()
		}
		for n > max { // a single over-long line: hard cut by runes
			cut := 0
			for i := range line {
				if cut == max {
					parts = append(parts, line[:i])
					line = line[i:]
					break
				}
				cut++
			}
			n -= max
		}
		cur.WriteString(line)
		curLen = n
	}
	if curLen > 0 || len(parts) == 0 {
		flush()
	}
	return parts
}

// Truncate shortens s to at most max runes, ending with "…" when cut.
func Truncate(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	if max <= 1 {
		return string(r[:max])
	}
	return string(r[:max-1]) + "…"
}
