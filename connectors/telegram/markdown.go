package telegram

import (
	"regexp"
	"strings"
)

// markdownToHTML renders Markdown as the agent writes it into Telegram's
// HTML subset: headings become bold lines, list items get bullets, fenced
// code becomes <pre><code>, `code` becomes <code>, **bold**, *italic*,
// _italic_, ~~strike~~ and [links](https://…) their tags; everything else is
// escaped. The result always parses as Telegram HTML: every tag is closed
// on the line it opens on (except <pre><code>, which closes at the fence or
// the end), and '<', '>', '&' and '"' in text are entities.
func markdownToHTML(md string) string {
	var b strings.Builder
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	inFence := false
	var fence string
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		trimmed := strings.TrimLeft(line, " \t")
		if inFence {
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				b.WriteString("</code></pre>")
				inFence = false
				continue
			}
			b.WriteString(escape(line))
			continue
		}
		if f, lang, ok := fenceOpen(trimmed); ok {
			inFence, fence = true, f
			if lang != "" {
				b.WriteString(`<pre><code class="language-` + lang + `">`)
			} else {
				b.WriteString("<pre><code>")
			}
			continue
		}
		b.WriteString(blockLine(line))
	}
	if inFence {
		b.WriteString("</code></pre>")
	}
	return cleanPreNewlines(b.String())
}

// cleanPreNewlines drops the newline right after an opening <pre><code…>
// and right before </code></pre>, so code blocks do not show blank lines.
func cleanPreNewlines(s string) string {
	s = preOpenNL.ReplaceAllString(s, "$1")
	return strings.ReplaceAll(s, "\n</code></pre>", "</code></pre>")
}

var preOpenNL = regexp.MustCompile(`(<pre><code(?: class="language-[A-Za-z0-9_+#.-]*")?>)\n`)

var langRE = regexp.MustCompile(`^[A-Za-z0-9_+#.-]{1,32}$`)

// fenceOpen recognises ``` or ~~~ (three or more) with an optional
// language.
func fenceOpen(s string) (fence, lang string, ok bool) {
	for _, c := range []string{"```", "~~~"} {
		if strings.HasPrefix(s, c) {
			n := len(s) - len(strings.TrimLeft(s, c[:1]))
			rest := strings.TrimSpace(s[n:])
			if c == "```" && strings.Contains(rest, "`") {
				return "", "", false // inline code such as ```x```
			}
			if f := strings.Fields(rest); len(f) > 0 && langRE.MatchString(f[0]) {
				lang = f[0]
			}
			return s[:n], lang, true
		}
	}
	return "", "", false
}

var (
	headingRE = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	bulletRE  = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	numberRE  = regexp.MustCompile(`^(\s*)(\d{1,9})[.)]\s+(.*)$`)
	ruleRE    = regexp.MustCompile(`^\s{0,3}([-*_])(\s*[-*_]){2,}\s*$`)
	quoteRE   = regexp.MustCompile(`^\s{0,3}>\s?(.*)$`)
	taskRE    = regexp.MustCompile(`^\[( |x|X)\]\s+(.*)$`)
)

func blockLine(line string) string {
	if m := headingRE.FindStringSubmatch(line); m != nil {
		if strings.TrimSpace(m[2]) == "" {
			return ""
		}
		return "<b>" + inline(m[2], inHeading) + "</b>"
	}
	if ruleRE.MatchString(line) {
		return "——————"
	}
	if m := bulletRE.FindStringSubmatch(line); m != nil {
		item := m[2]
		bullet := "•"
		if t := taskRE.FindStringSubmatch(item); t != nil {
			bullet, item = "☐", t[2]
			if t[1] != " " {
				bullet = "☑"
			}
		}
		return indent(m[1]) + bullet + " " + inline(item, 0)
	}
	if m := numberRE.FindStringSubmatch(line); m != nil {
		return indent(m[1]) + m[2] + ". " + inline(m[3], 0)
	}
	if m := quoteRE.FindStringSubmatch(line); m != nil {
		return "▎" + inline(m[1], 0)
	}
	return inline(line, 0)
}

// indent keeps nesting visible: two spaces per level.
func indent(ws string) string {
	n := 0
	for _, c := range ws {
		if c == '\t' {
			n += 4
		} else {
			n++
		}
	}
	return strings.Repeat("  ", min(n/2, 8))
}

type inlineFlags int

const (
	inHeading inlineFlags = 1 << iota
	inLink                // no nested links, no code inside links
)

// inline renders one line's inline Markdown. Tags are only emitted with
// their closing tag, around non-empty content, so the output is balanced.
func inline(s string, f inlineFlags) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_{}[]()#+-.!~>|", s[i+1]) >= 0:
			b.WriteString(escape(s[i+1 : i+2]))
			i += 2
			continue
		case c == '`' && f&inLink == 0:
			n := runLen(s[i:], '`')
			delim := s[i : i+n]
			if j := strings.Index(s[i+n:], delim); j > 0 {
				code := s[i+n : i+n+j]
				if t := strings.TrimSpace(code); t != "" {
					b.WriteString("<code>" + escape(code) + "</code>")
					i += n + j + n
					continue
				}
			}
			b.WriteString(delim)
			i += n
			continue
		case c == '*' || c == '_' || c == '~':
			if tag, inner, n, ok := emphasis(s, i); ok {
				b.WriteString("<" + tag + ">" + inline(inner, f) + "</" + tag + ">")
				i += n
				continue
			}
			n := runLen(s[i:], c)
			b.WriteString(s[i : i+n])
			i += n
			continue
		case c == '[' && f&inLink == 0:
			if text, href, n, ok := link(s[i:]); ok {
				b.WriteString(`<a href="` + escape(href) + `">` + inline(text, f|inLink) + "</a>")
				i += n
				continue
			}
		}
		// Plain text up to the next special character.
		j := i + 1
		for j < len(s) && strings.IndexByte("\\`*_~[", s[j]) < 0 {
			j++
		}
		b.WriteString(escape(s[i:j]))
		i = j
	}
	return b.String()
}

func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// emphasis matches **x**, __x__, *x*, _x_ or ~~x~~ starting at s[i]. Word-
// internal underscores (snake_case) are not emphasis.
func emphasis(s string, i int) (tag, inner string, n int, ok bool) {
	c := s[i]
	run := runLen(s[i:], c)
	var delim string
	switch {
	case c == '~' && run >= 2:
		delim, tag = "~~", "s"
	case c == '~':
		return "", "", 0, false
	case run >= 2:
		delim, tag = string([]byte{c, c}), "b"
	default:
		delim, tag = string(c), "i"
	}
	if c == '_' && i > 0 && isWord(s[i-1]) {
		return "", "", 0, false
	}
	start := i + len(delim)
	if start >= len(s) || s[start] == ' ' {
		return "", "", 0, false
	}
	for j := start + 1; j+len(delim) <= len(s); j++ {
		if s[j] == '`' { // do not close inside a code span
			if k := strings.IndexByte(s[j+1:], '`'); k >= 0 {
				j += k + 1
				continue
			}
		}
		if s[j:j+len(delim)] != delim || s[j-1] == ' ' {
			continue
		}
		after := j + len(delim)
		if after < len(s) && s[after] == c {
			continue // part of a longer run: keep looking
		}
		if c == '_' && after < len(s) && isWord(s[after]) {
			continue
		}
		inner = s[start:j]
		if strings.TrimSpace(inner) == "" {
			return "", "", 0, false
		}
		return tag, inner, after - i, true
	}
	return "", "", 0, false
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// link matches [text](href) with an http(s), mailto or tg URL.
func link(s string) (text, href string, n int, ok bool) {
	close := strings.Index(s, "](")
	if close < 0 {
		return "", "", 0, false
	}
	text = s[1:close]
	end := strings.IndexByte(s[close+2:], ')')
	if end < 0 || strings.TrimSpace(text) == "" || strings.ContainsAny(text, "[]") {
		return "", "", 0, false
	}
	href = strings.TrimSpace(s[close+2 : close+2+end])
	if href == "" || strings.ContainsAny(href, " \t<>\"") {
		return "", "", 0, false
	}
	lower := strings.ToLower(href)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "mailto:") && !strings.HasPrefix(lower, "tg://") {
		return "", "", 0, false
	}
	return text, href, close + 2 + end + 1, true
}

// escape makes text safe for Telegram HTML.
func escape(s string) string { return htmlEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD")) }

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
