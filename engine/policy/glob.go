package policy

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// GlobSyntax says what a glob may contain, for error messages and docs.
const GlobSyntax = "* (any run of characters but /), ** (any run including /; **/ also matches no directory), ? (one character but /), [abc], [a-z], [!abc] (one character of, or not of, a set); \\ escapes the next character"

// compileGlob turns a glob into an anchored regular expression. In a glob,
// "*" is any run of characters except "/"; "**" any run of characters, "/"
// included, and "**/" also matches nothing (so "**/.env" matches ".env" and
// "a/b/.env"); "?" one character except "/"; "[...]" one character of a
// set, "[!...]" or "[^...]" one not of it (ranges such as a-z as in regular
// expressions); a backslash makes the next character match itself.
// Everything else matches itself. Tool names and chat IDs contain no "/",
// so for them "*" and "**" are the same.
func compileGlob(glob string) (*regexp.Regexp, error) {
	if glob == "" {
		return nil, fmt.Errorf("the glob is empty; accepted: %s", GlobSyntax)
	}
	if !utf8.ValidString(glob) {
		return nil, fmt.Errorf("glob %q is not valid UTF-8", glob)
	}
	var b strings.Builder
	b.WriteString(`\A`)
	rs := []rune(glob)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch c {
		case '*':
			if i+1 < len(rs) && rs[i+1] == '*' {
				i++
				for i+1 < len(rs) && rs[i+1] == '*' { // *** is **
					i++
				}
				if i+1 < len(rs) && rs[i+1] == '/' {
					i++
					b.WriteString(`(?:.*/)?`)
				} else {
					b.WriteString(`.*`)
				}
				continue
			}
			b.WriteString(`[^/]*`)
		case '?':
			b.WriteString(`[^/]`)
		case '\\':
			if i+1 >= len(rs) {
				return nil, fmt.Errorf("glob %q ends with a lone \\; write \\\\ for a backslash", glob)
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case '[':
			j, class, err := globClass(rs, i)
			if err != nil {
				return nil, fmt.Errorf("glob %q: %w", glob, err)
			}
			b.WriteString(class)
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	if err != nil { // a class the regexp package refuses, e.g. [z-a]
		return nil, fmt.Errorf("glob %q is malformed (%v); accepted: %s", glob, err, GlobSyntax)
	}
	return re, nil
}

// globClass translates the set starting at rs[i] ('[') and returns the
// index of its closing ']'.
func globClass(rs []rune, i int) (int, string, error) {
	var b strings.Builder
	b.WriteByte('[')
	j := i + 1
	if j < len(rs) && (rs[j] == '!' || rs[j] == '^') {
		b.WriteByte('^')
		j++
	}
	first := true
	for ; j < len(rs); j++ {
		c := rs[j]
		switch {
		case c == ']' && !first:
			s := b.String()
			if s == "[" || s == "[^" {
				return 0, "", fmt.Errorf("the set at character %d is empty", i+1)
			}
			if s[1] == '^' {
				b.WriteString("/") // a negated set never matches /, like ? and *
			}
			b.WriteByte(']')
			return j, b.String(), nil
		case c == '\\':
			if j+1 >= len(rs) {
				return 0, "", fmt.Errorf("the set at character %d ends with a lone \\", i+1)
			}
			j++
			b.WriteString(regexp.QuoteMeta(string(rs[j])))
		case c == '-' && !first && j+1 < len(rs) && rs[j+1] != ']':
			b.WriteByte('-')
		case c == '[' || c == ']' || c == '-' || c == '^':
			b.WriteByte('\\')
			b.WriteRune(c)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
		first = false
	}
	return 0, "", fmt.Errorf("the set [ at character %d is not closed with ]", i+1)
}
