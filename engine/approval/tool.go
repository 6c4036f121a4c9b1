package approval

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/interactions"
)

// EditTools are allowed without asking in acceptEdits mode.
var EditTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// ToolInteraction is the tool approval a person sees for req: the call,
// why the agent asks, the MCP server, and which options in what order.
// A request an ask rule forced offers no "allow for this session": such a
// rule would not stop the next prompt.
func ToolInteraction(chatID string, req agent.PermissionRequest) interactions.Interaction {
	var why []string
	if title := strings.TrimSpace(PlainText(req.Title)); title != "" && title != req.ToolName {
		why = append(why, title) // the agent's own words for the call (ACP)
	}
	if r := strings.TrimSpace(PlainText(req.Reason)); r != "" {
		why = append(why, "Why it asks: "+r)
	}
	if p := strings.TrimSpace(PlainText(req.BlockedPath)); p != "" {
		why = append(why, "Path: "+p)
	}
	if r := strings.TrimSpace(PlainText(req.AskRule)); r != "" {
		why = append(why, "Your ask rule "+r+" requires a person to decide.")
	}
	server := strings.TrimSpace(PlainText(req.MCPServer))
	if src := strings.TrimSpace(PlainText(req.MCPSource)); server != "" && src != "" {
		server += " (" + src + ")"
	}
	return interactions.Interaction{
		ChatID: chatID, Kind: interactions.KindToolApproval,
		ToolName: req.ToolName, ToolInput: req.Input, ToolSummary: ToolSummary(req.ToolName, req.Input),
		Reason: Excerpt(strings.Join(why, "\n"), 20), MCPServer: connectors.Truncate(strings.Join(strings.Fields(server), " "), 200),
		DefaultToNo: req.DefaultToNo, NoSessionAllow: req.NoSessionAllow || req.AskRule != "",
		RequiresDetails: req.RequiresDetails,
	}
}

// PlainText drops terminal escape sequences and control characters (but
// newlines and tabs) from text the agent says may carry them.
func PlainText(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == 0x1b: // ESC: skip a CSI/OSC sequence or the next char
			if i+1 < len(rs) && rs[i+1] == '[' {
				i += 2
				for i < len(rs) && (rs[i] < 0x40 || rs[i] > 0x7e) {
					i++
				}
			} else if i+1 < len(rs) && rs[i+1] == ']' {
				i += 2
				for i < len(rs) && rs[i] != 0x07 && !(rs[i] == 0x1b && i+1 < len(rs) && rs[i+1] == '\\') {
					i++
				}
				if i < len(rs) && rs[i] == 0x1b {
					i++
				}
			} else {
				i++
			}
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || (r >= 0x7f && r < 0xa0) || r == 0x2028 || r == 0x2029:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SessionRules are the rules "allow for this session" adds: the agent's own
// suggestion when it made one (always with destination session), else the
// exact Bash command, else the whole tool.
func SessionRules(req agent.PermissionRequest) []agent.Rule {
	if len(req.Suggestions) > 0 {
		var rules []agent.Rule
		for _, s := range req.Suggestions {
			if s.Type == "addRules" && (s.Behavior == "" || s.Behavior == "allow") {
				rules = append(rules, s.Rules...)
			}
		}
		if len(rules) > 0 {
			return rules
		}
	}
	if req.ToolName == "Bash" {
		var in struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(req.Input, &in) == nil && in.Command != "" {
			return []agent.Rule{{ToolName: "Bash", RuleContent: in.Command}}
		}
	}
	return []agent.Rule{{ToolName: req.ToolName}}
}

// ToolSummary renders a tool call for people: the Bash command, the file
// path and an excerpt of the change for Write/Edit, else compact JSON.
func ToolSummary(tool string, input json.RawMessage) string {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	str := func(k string) string {
		s, _ := in[k].(string)
		return s
	}
	switch tool {
	case "Bash":
		s := str("command")
		if d := str("description"); d != "" {
			s += "\n# " + d
		}
		return s
	case "Write":
		content := str("content")
		if content == "" {
			return str("file_path") + "\n(empty file)"
		}
		return str("file_path") + "\n" + Excerpt(prefixLines(content, "+ "), 20)
	case "Edit":
		return str("file_path") + "\n" + Excerpt(diffLines(str("old_string"), str("new_string")), 20)
	case "MultiEdit":
		var b strings.Builder
		b.WriteString(str("file_path"))
		edits, _ := in["edits"].([]any)
		for _, e := range edits {
			m, _ := e.(map[string]any)
			o, _ := m["old_string"].(string)
			n, _ := m["new_string"].(string)
			if d := diffLines(o, n); d != "" {
				b.WriteString("\n" + d)
			}
		}
		return Excerpt(b.String(), 24)
	case "NotebookEdit":
		return str("notebook_path") + "\n" + Excerpt(prefixLines(str("new_source"), "+ "), 20)
	case "Read", "Glob", "Grep", "LS":
		for _, k := range []string{"file_path", "path", "pattern"} {
			if s := str(k); s != "" {
				return s
			}
		}
	case "WebFetch":
		return str("url")
	}
	b, _ := json.Marshal(in)
	return Excerpt(string(b), 20)
}

// diffLines shows a replacement: the old lines with "- ", the new with
// "+ " (an insertion has no old lines, a deletion no new ones).
func diffLines(old, new string) string {
	var parts []string
	for _, p := range []string{prefixLines(old, "- "), prefixLines(new, "+ ")} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "\n")
}

func prefixLines(s, p string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = p + l
	}
	return strings.Join(lines, "\n")
}

// Excerpt keeps at most n lines and 3000 characters, saying what was cut.
func Excerpt(s string, n int) string {
	lines := strings.Split(s, "\n")
	cut := false
	if len(lines) > n {
		lines, cut = lines[:n], true
	}
	out := strings.Join(lines, "\n")
	if utf8.RuneCountInString(out) > 3000 {
		out, cut = string([]rune(out)[:3000]), true
	}
	if cut {
		out += "\n… (cut)"
	}
	return out
}
