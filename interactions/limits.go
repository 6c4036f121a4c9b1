package interactions

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on what a program may ask (an interaction with an Asker: the HTTP
// API, `leashd ask`, the MCP server, the Go client). A person reads it on a
// phone and taps one of its buttons; what does not fit there is refused,
// not cut. Agents' own requests are cut to fit by the engine instead.
const (
	MaxOptions          = 10
	MaxQuestionBytes    = 4000
	MaxHeaderChars      = 100
	MaxLabelBytes       = 200
	MaxDescriptionBytes = 500
	MaxPlanBytes        = 256 << 10
	MaxToolNameBytes    = 200
	MaxToolInputBytes   = 256 << 10
	MaxToolSummaryBytes = 16 << 10
)

// ErrInvalid is what errors.Is finds in the error for an interaction that
// cannot be asked as given (an *InvalidError).
var ErrInvalid = errors.New("invalid interaction")

// InvalidError names the field of an interaction that cannot be asked as
// given, and what is accepted there: "options: 11 options; at most 10".
type InvalidError struct {
	Field   string
	Problem string
}

func (e *InvalidError) Error() string { return e.Field + ": " + e.Problem }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// invalid is an InvalidError naming field.
func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// CheckProgramRequest refuses what a program asks beyond the limits above.
// The coordinator runs it on every request with an Asker, so every way a
// program asks gets the same answer; an API may run it first to answer
// before it asks.
func CheckProgramRequest(it *Interaction) error {
	if err := textWithin("header", it.Header, MaxHeaderChars, "characters", utf8.RuneCountInString); err != nil {
		return err
	}
	if err := textWithin("question", it.Question, MaxQuestionBytes, "bytes", byteLen); err != nil {
		return err
	}
	if err := textWithin("plan", it.Plan, MaxPlanBytes, "bytes", byteLen); err != nil {
		return err
	}
	if err := textWithin("tool_name", it.ToolName, MaxToolNameBytes, "bytes", byteLen); err != nil {
		return err
	}
	if len(it.ToolInput) > MaxToolInputBytes {
		return invalid("tool_input", "%d bytes; at most %d", len(it.ToolInput), MaxToolInputBytes)
	}
	if err := textWithin("tool_summary", it.ToolSummary, MaxToolSummaryBytes, "bytes", byteLen); err != nil {
		return err
	}
	if it.Kind != KindQuestion {
		return nil // the options are leashd's own
	}
	return checkOptions(it.Options)
}

// checkOptions refuses too many options, empty or repeated labels (a tap
// must mean one option) and labels or descriptions too long for a button.
func checkOptions(opts []Choice) error {
	if len(opts) > MaxOptions {
		return invalid("options", "%d options; at most %d", len(opts), MaxOptions)
	}
	seen := make(map[string]bool, len(opts))
	for i, o := range opts {
		field := fmt.Sprintf("options[%d].label", i)
		label := strings.TrimSpace(o.Label)
		switch {
		case label == "":
			return invalid(field, "missing")
		case seen[label]:
			return invalid(field, "%s is given twice; labels must differ", quoteShort(label))
		}
		seen[label] = true
		if err := textWithin(field, o.Label, MaxLabelBytes, "bytes", byteLen); err != nil {
			return err
		}
		if err := textWithin(fmt.Sprintf("options[%d].description", i), o.Description, MaxDescriptionBytes, "bytes", byteLen); err != nil {
			return err
		}
	}
	return nil
}

func byteLen(s string) int { return len(s) }

// textWithin refuses text that is not UTF-8 or longer than max units.
func textWithin(field, s string, max int, unit string, length func(string) int) error {
	if !utf8.ValidString(s) || length(s) > max {
		return invalid(field, "must be UTF-8 of at most %d %s", max, unit)
	}
	return nil
}

// quoteShort quotes s for an error message, cut to 80 characters.
func quoteShort(s string) string {
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
