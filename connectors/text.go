package connectors

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/leashd/leashd/interactions"
)

// DecisionLabel is the button text people see for a plan or tool decision
// (the label the engine and API use is the key).
func DecisionLabel(decision string) string {
	switch decision {
	case interactions.DecisionCleanEdit:
		return "Approve, fresh session (recommended)"
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
// question's option or of an agent's own option, the human name of a
// decision.
func OptionText(it interactions.Interaction, label string) string {
	if it.Kind == interactions.KindQuestion || it.OwnOptions() {
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

// ToolNotes are the lines a tool approval shows beside the call, plain
// text for each connector to escape: the MCP server serving the tool, why
// the agent asks (Interaction.Reason, as the engine wrote it), and what
// its options mean when they are not the usual ones.
func ToolNotes(it interactions.Interaction) []string {
	var notes []string
	if it.MCPServer != "" {
		notes = append(notes, "MCP server: "+it.MCPServer)
	}
	if r := strings.TrimSpace(it.Reason); r != "" {
		notes = append(notes, r) // the engine's lines: why, the path, the ask rule
	}
	if it.RequiresDetails {
		notes = append(notes, "Review the whole request before you answer.")
	}
	if it.DefaultToNo {
		notes = append(notes, "Deny comes first: approve only on purpose.")
	}
	return notes
}

// ToolDetails is a tool call's whole input, indented JSON, for a request
// that must be read in full (Interaction.RequiresDetails).
func ToolDetails(it interactions.Interaction) string {
	var out bytes.Buffer
	if err := json.Indent(&out, it.ToolInput, "", "  "); err != nil {
		return string(it.ToolInput)
	}
	// Go's encoder writes <, > and & as \u escapes: show them as they are
	// (each connector escapes for its own markup).
	return unescapeHTML(out.String())
}

// DecisionIndex is a plan or tool decision's position in its fixed list
// (interactions.PlanOptions, ToolOptions): buttons carry it, so a key
// means the same decision whatever order an interaction shows them in.
// It returns -1 for a label in neither list.
func DecisionIndex(kind interactions.Kind, label string) int {
	opts := interactions.ToolOptions
	if kind == interactions.KindPlanReview {
		opts = interactions.PlanOptions
	}
	for i, o := range opts {
		if o.Label == label {
			return i
		}
	}
	return -1
}

// WithdrawnNote is what replaces the buttons of a request the agent
// withdrew, or the program that asked left (interactions.AskerGoneText),
// or "" when res is not such a withdrawal.
func WithdrawnNote(res interactions.Resolution) string {
	if res.Status != interactions.StatusCancelled {
		return ""
	}
	switch res.Text {
	case interactions.WithdrawnText, interactions.AskerGoneText:
		return "↩️ " + res.Text
	}
	return ""
}

// unescapeHTML turns the JSON escapes \u003c, \u003e and \u0026 back into
// <, > and &, leaving every other escape (an escaped backslash followed by
// "u003c" included) as it is.
func unescapeHTML(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch strings.ToLower(s[i+2 : i+6]) {
			case "003c":
				b.WriteByte('<')
				i += 5
				continue
			case "003e":
				b.WriteByte('>')
				i += 5
				continue
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			}
		}
		b.WriteString(s[i : i+2]) // an escape pair, kept
		i++
	}
	return b.String()
}
