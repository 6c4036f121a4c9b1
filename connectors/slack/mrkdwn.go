package slack

import (
	"strings"
)

// toMrkdwn converts the agent's Markdown to Slack mrkdwn: **bold** → *bold*,
// *italic* and _italic_ → _italic_, ~~strike~~ → ~strike~, headings →
// bold lines, list bullets → •, [text](url) → <url|text> (http, https and
// mailto only; other targets are shown as text), code spans and fenced
// blocks kept (the fence's language dropped). &, < and > are escaped
// everywhere else, so agent text can never ping @channel or a user; a ">"
// at the start of a line stays a quote.
func toMrkdwn(md string) string {
	var b strings.Builder
	b.Grow(len(md) + len(md)/8)
	lines := strings.Split(md, "\n")
	inFence := false
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		trimmed := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(trimmed, "```") {
			if inFence {
				b.WriteString("```")
				if rest := strings.TrimSpace(strings.TrimLeft(trimmed, "`")); rest != "" {
					b.WriteString("\n" + escape(rest))
				}
			} else {
				b.WriteString("```")
			}
			inFence = !inFence
			continue
		}
		if inFence {
			b.WriteString(escape(line))
			continue
		}
		b.WriteString(block(line))
	}
	if inFence { // an unclosed fence would swallow what follows
		b.WriteString("\n```")
	}
	return b.String()
}

// block converts one line outside code fences.
func block(line string) string {
	indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
	t := line[len(indent):]
	switch {
	case t == "":
		return line
	case isRule(t):
		return "──────────"
	case t[0] == '#':
		n := 0
		for n < len(t) && t[n] == '#' {
			n++
		}
		if n <= 6 && (n == len(t) || t[n] == ' ') {
			if h := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[n:]), "#")); h != "" {
				return "*" + strings.ReplaceAll(inline(h), "*", "") + "*"
			}
			return ""
		}
	case len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ':
		return indent + "• " + inline(strings.TrimLeft(t[2:], " "))
	case t[0] == '>':
		return "> " + inline(strings.TrimLeft(t[1:], " "))
	}
	return indent + inline(t)
}

func isRule(t string) bool {
	t = strings.ReplaceAll(t, " ", "")
	if len(t) < 3 {
		return false
	}
	return strings.Trim(t, "-") == "" || strings.Trim(t, "*") == "" || strings.Trim(t, "_") == ""
}

// inline converts a line's inline markup.
func inline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '`':
			n := run(s[i:], '`')
			if end := strings.Index(window(s, i+n, maxSpan), s[i:i+n]); end >= 0 {
				code := s[i+n : i+n+end]
				if strings.TrimSpace(code) != "" {
					b.WriteString("`" + strings.ReplaceAll(escape(code), "`", "'") + "`")
				} else {
					b.WriteString(escape(s[i : i+n+end+n]))
				}
				i += n + end + n
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_~[]()#>-+!|", s[i+1]) >= 0:
			b.WriteString(escape(s[i+1 : i+2]))
			i += 2
		case (c == '*' || c == '_') && strings.HasPrefix(s[i:], string([]byte{c, c})):
			if end, ok := closer(s, i+2, string([]byte{c, c})); ok {
				b.WriteString("*" + stripMark(inline(s[i+2:end]), '*') + "*")
				i = end + 2
				continue
			}
			b.WriteString(s[i : i+2])
			i += 2
		case c == '*' || c == '_':
			if end, ok := closer(s, i+1, string(c)); ok && (c == '*' || wordEdge(s, i, end+1)) {
				b.WriteString("_" + stripMark(inline(s[i+1:end]), '_') + "_")
				i = end + 1
				continue
			}
			b.WriteByte(c)
			i++
		case c == '~' && strings.HasPrefix(s[i:], "~~"):
			if end, ok := closer(s, i+2, "~~"); ok {
				b.WriteString("~" + stripMark(inline(s[i+2:end]), '~') + "~")
				i = end + 2
				continue
			}
			b.WriteString("~~")
			i += 2
		case c == '[':
			if text, url, n, ok := link(window(s, i, maxSpan)); ok {
				b.WriteString(renderLink(text, url))
				i += n
				continue
			}
			b.WriteByte('[')
			i++
		case c == '<':
			if end := strings.IndexByte(window(s, i, maxSpan), '>'); end > 0 && safeURL(s[i+1:i+end]) {
				b.WriteString(renderLink("", s[i+1:i+end]))
				i += end + 1
				continue
			}
			b.WriteString("&lt;")
			i++
		case c == '>':
			b.WriteString("&gt;")
			i++
		case c == '&':
			b.WriteString("&amp;")
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// stripMark removes a Slack emphasis mark from already converted inner
// text: Slack does not nest the same mark.
func stripMark(s string, m byte) string { return strings.ReplaceAll(s, string(m), "") }

func run(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// maxSpan bounds how far the end of a code span, link or autolink is
// looked for, so converting a long line stays linear.
const maxSpan = 2000

// window is s[from:] cut to at most n bytes.
func window(s string, from, n int) string { return s[from:min(len(s), from+n)] }

// maxEmphasis bounds how far a closing emphasis mark is looked for, so
// converting a long line stays linear.
const maxEmphasis = 500

// closer finds the closing delimiter d for emphasis opened before from:
// the content must not start or end with a space and must not be empty.
func closer(s string, from int, d string) (int, bool) {
	if from >= len(s) || s[from] == ' ' {
		return 0, false
	}
	for j := from + 1; j+len(d) <= len(s) && j-from <= maxEmphasis; j++ {
		if s[j] == d[0] && s[j:j+len(d)] == d && s[j-1] != ' ' && s[j-1] != '\\' {
			return j, true
		}
	}
	return 0, false
}

// wordEdge reports whether an underscore pair at start and end (exclusive)
// sits at word edges, so snake_case_names stay as they are.
func wordEdge(s string, start, end int) bool {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	return (start == 0 || !alnum(s[start-1])) && (end >= len(s) || !alnum(s[end]))
}

// link parses "[text](url)" at the start of s.
func link(s string) (text, url string, n int, ok bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				if i+1 >= len(s) || s[i+1] != '(' {
					return "", "", 0, false
				}
				end := strings.IndexByte(s[i+2:], ')')
				if end < 0 {
					return "", "", 0, false
				}
				return s[1:i], strings.TrimSpace(s[i+2 : i+2+end]), i + 2 + end + 1, true
			}
		}
	}
	return "", "", 0, false
}

func safeURL(u string) bool {
	if !(strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "mailto:")) {
		return false
	}
	return !strings.ContainsAny(u, " \t\n|<>")
}

// renderLink writes a Slack link, or "text (url)" when url is not one
// Slack should link.
func renderLink(text, url string) string {
	label := strings.ReplaceAll(inline(text), "|", "¦")
	if strings.ContainsAny(label, "<>") { // a link inside a link's text
		label = strings.ReplaceAll(escape(text), "|", "¦")
	}
	if !safeURL(url) {
		if url == "" {
			return label
		}
		return label + " (" + escape(url) + ")"
	}
	if label == "" {
		return "<" + escapeURL(url) + ">"
	}
	return "<" + escapeURL(url) + "|" + label + ">"
}

func escapeURL(u string) string { return strings.ReplaceAll(u, "&", "&amp;") }

// escape escapes the three characters Slack treats as control sequences.
func escape(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	return escaper.Replace(s)
}

// escaper is read-only after start-up.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
