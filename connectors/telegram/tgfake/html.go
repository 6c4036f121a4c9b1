package tgfake

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// allowedTags are the tags Telegram accepts with parse_mode HTML.
var allowedTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true,
	"a": true, "code": true, "pre": true, "blockquote": true, "tg-emoji": true,
}

// ParseHTML checks s the way Telegram checks a message sent with
// parse_mode HTML and returns its visible text. The error text is what
// Telegram puts after "Bad Request: can't parse entities: ". Rules enforced:
// only Telegram's tags, each closed in order; attributes only where Telegram
// takes them (a href, span class="tg-spoiler", code class="language-…"
// directly inside pre); no tags inside code or pre other than one code
// directly inside pre; '<' and '&' only as parts of tags or entities; named
// entities only &lt; &gt; &amp; &quot;, numeric ones only for valid code
// points.
func ParseHTML(s string) (string, error) {
	type open struct {
		name string
		at   int
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("Strings must be encoded in UTF-8")
	}
	var stack []open
	var text strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("Unclosed start tag at byte offset %d", i)
			}
			tag := s[i+1 : i+end]
			if strings.HasPrefix(tag, "/") {
				name := strings.ToLower(strings.TrimSpace(tag[1:]))
				if len(stack) == 0 || stack[len(stack)-1].name != name {
					return "", fmt.Errorf("Unexpected end tag at byte offset %d", i)
				}
				stack = stack[:len(stack)-1]
			} else {
				name, attrs, _ := strings.Cut(tag, " ")
				name = strings.ToLower(name)
				if !allowedTags[name] {
					return "", fmt.Errorf("Unsupported start tag %q at byte offset %d", name, i)
				}
				if len(stack) > 0 {
					parent := stack[len(stack)-1].name
					if parent == "code" || (parent == "pre" && name != "code") {
						return "", fmt.Errorf("Unsupported start tag %q inside %q at byte offset %d", name, parent, i)
					}
				}
				if name == "a" {
					for _, o := range stack {
						if o.name == "a" {
							return "", fmt.Errorf("Nested links are not allowed at byte offset %d", i)
						}
					}
				}
				inPre := len(stack) > 0 && stack[len(stack)-1].name == "pre"
				if err := checkAttrs(name, strings.TrimSpace(attrs), inPre, i); err != nil {
					return "", err
				}
				stack = append(stack, open{name, i})
			}
			i += end + 1
		case '&':
			r, n, err := entity(s[i:])
			if err != nil {
				return "", fmt.Errorf("%v at byte offset %d", err, i)
			}
			text.WriteRune(r)
			i += n
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return "", fmt.Errorf("Strings must be encoded in UTF-8")
			}
			text.WriteRune(r)
			i += n
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("Can't find end tag corresponding to start tag %q", stack[len(stack)-1].name)
	}
	return text.String(), nil
}

func checkAttrs(name, attrs string, inPre bool, at int) error {
	if name == "blockquote" && attrs == "expandable" {
		return nil // a quote shown folded until tapped
	}
	if attrs == "" {
		if name == "a" {
			return fmt.Errorf("Can't find href attribute of the link at byte offset %d", at)
		}
		return nil
	}
	key, val, ok := strings.Cut(attrs, "=")
	if !ok || len(val) < 2 || (val[0] != '"' && val[0] != '\'') || val[len(val)-1] != val[0] || strings.ContainsRune(val[1:len(val)-1], rune(val[0])) {
		return fmt.Errorf("Expected a quoted attribute value in tag %q at byte offset %d", name, at)
	}
	v := val[1 : len(val)-1]
	if strings.ContainsRune(v, '<') {
		return fmt.Errorf("Unexpected '<' in attribute of tag %q at byte offset %d", name, at)
	}
	for j := 0; j < len(v); {
		if v[j] != '&' {
			j++
			continue
		}
		_, n, err := entity(v[j:])
		if err != nil {
			return fmt.Errorf("%v in attribute of tag %q at byte offset %d", err, name, at)
		}
		j += n
	}
	switch {
	case name == "a" && key == "href":
	case name == "span" && key == "class" && v == "tg-spoiler":
	case name == "code" && key == "class" && inPre && strings.HasPrefix(v, "language-"):
	case name == "tg-emoji" && key == "emoji-id":
	default:
		return fmt.Errorf("Unsupported attribute %q in tag %q at byte offset %d", key, name, at)
	}
	return nil
}

// entity decodes the HTML entity at the start of s.
func entity(s string) (rune, int, error) {
	end := strings.IndexByte(s, ';')
	if end < 0 || end > 12 {
		return 0, 0, fmt.Errorf("Character '&' is reserved and must be escaped as &amp;")
	}
	body := s[1:end]
	switch body {
	case "lt":
		return '<', end + 1, nil
	case "gt":
		return '>', end + 1, nil
	case "amp":
		return '&', end + 1, nil
	case "quot":
		return '"', end + 1, nil
	}
	if strings.HasPrefix(body, "#") {
		num := body[1:]
		base := 10
		if strings.HasPrefix(num, "x") || strings.HasPrefix(num, "X") {
			num, base = num[1:], 16
		}
		n, err := strconv.ParseUint(num, base, 32)
		if err == nil && n > 0 && n <= utf8.MaxRune && !(n >= 0xD800 && n <= 0xDFFF) && num != "" && num[0] != '+' {
			return rune(n), end + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("Unsupported HTML entity %q", s[:end+1])
}

// Len is the length Telegram measures: UTF-16 code units.
func Len(s string) int { return len(utf16.Encode([]rune(s))) }
