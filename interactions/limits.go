package interactions

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on every interaction, whoever asks: a person reads it on a phone
// and taps one of its buttons. The coordinator applies them to each request
// (checkRequest). What a program asks (an interaction with an Asker: the
// HTTP API, `leashd ask`, the MCP server, the Go client) is refused beyond
// any of them, not cut: the program can fix its request. What the chat's
// own agent asks is refused where cutting would change what an answer
// means — the chat ID, the number of options, an empty, repeated or
// over-long label — and otherwise cut to fit with a note saying how much
// was left out: the question, header, option descriptions, plan, tool
// name, summary and input are only read, and the agent keeps its own copy
// (an answer names a label, never the text around it).
const (
	MaxChatIDBytes      = 200
	MaxOptions          = 10
	MaxQuestionBytes    = 16 << 10 // 4 Telegram messages; the connectors split it
	MaxHeaderChars      = 100
	MaxLabelBytes       = 200
	MaxDescriptionBytes = 500
	MaxPlanBytes        = 256 << 10
	MaxToolNameBytes    = 200
	MaxToolInputBytes   = 256 << 10
	MaxToolSummaryBytes = 16 << 10
	MaxDiffBytes        = 32 << 10
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
	if err := textWithin("diff", it.Diff, MaxDiffBytes, "bytes", byteLen); err != nil {
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

// CheckChatID refuses a chat ID that is empty, over MaxChatIDBytes, not
// UTF-8, or has spaces or control characters: the same for every door.
func CheckChatID(id string) error {
	if id == "" {
		return invalid("chat_id", "missing")
	}
	if len(id) > MaxChatIDBytes || !utf8.ValidString(id) {
		return invalid("chat_id", "must be UTF-8 of 1 to %d bytes", MaxChatIDBytes)
	}
	for _, r := range id {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return invalid("chat_id", "%s: no spaces or control characters", quoteShort(id))
		}
	}
	return nil
}

// checkRequest holds *it to the limits (see above): a program's request is
// refused beyond any; an agent's is refused for its chat ID or options
// and has its text cut to fit.
func checkRequest(it *Interaction) error {
	if err := CheckChatID(it.ChatID); err != nil {
		return err
	}
	if it.Asker != "" {
		return CheckProgramRequest(it)
	}
	fitAgentRequest(it)
	if it.Kind != KindQuestion {
		return nil // the options are leashd's own
	}
	return checkOptions(it.Options)
}

// fitAgentRequest cuts the text of an agent's request to the limits, each
// cut field ending with a note of how many bytes were left out, and makes
// it UTF-8. An over-long tool input is replaced by an object holding its
// start as text (cut JSON would not be JSON): people read the summary, and
// the agent's own copy of the input is what it runs.
func fitAgentRequest(it *Interaction) {
	it.Header = fitChars(it.Header, MaxHeaderChars)
	it.Question = fitBytes(it.Question, MaxQuestionBytes)
	it.Plan = fitBytes(it.Plan, MaxPlanBytes)
	it.ToolName = fitBytes(it.ToolName, MaxToolNameBytes)
	it.ToolSummary = fitBytes(it.ToolSummary, MaxToolSummaryBytes)
	it.Diff = fitBytes(it.Diff, MaxDiffBytes)
	if it.Kind == KindQuestion && slices.ContainsFunc(it.Options, func(o Choice) bool {
		return len(o.Description) > MaxDescriptionBytes || !utf8.ValidString(o.Description)
	}) {
		opts := slices.Clone(it.Options) // the caller's slice stays as it was
		for i := range opts {
			opts[i].Description = fitBytes(opts[i].Description, MaxDescriptionBytes)
		}
		it.Options = opts
	}
	if n := len(it.ToolInput); n > MaxToolInputBytes {
		excerpt, _ := json.Marshal(map[string]any{
			"leashd_cut": fmt.Sprintf("the tool input is %d bytes; this is its start", n),
			"start":      fitBytes(string(it.ToolInput[:MaxToolSummaryBytes]), MaxToolSummaryBytes),
		})
		it.ToolInput = excerpt
	}
}

// fitBytes is s as UTF-8 cut to at most limit bytes, its note ("… (N
// bytes cut)") included.
func fitBytes(s string, limit int) string {
	if len(s) <= limit && utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= limit {
		return s
	}
	cut := len(s) - limit
	for {
		note := fmt.Sprintf("… (%d bytes cut)", cut)
		room := max(limit-len(note), 0)
		for room > 0 && !utf8.RuneStart(s[room]) {
			room--
		}
		if len(s)-room == cut {
			return s[:room] + note
		}
		cut = len(s) - room
	}
}

// fitChars is s as UTF-8 cut to at most limit characters, ending in "…".
func fitChars(s string, limit int) string {
	if len(s) <= limit && utf8.ValidString(s) {
		return s // fewer bytes than the limit: fewer characters too
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit-1]) + "…"
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
