package telegram

import (
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxMessage is Telegram's limit on a message's text, in UTF-16 units.
const maxMessage = 4096

// hlen is the length Telegram measures (UTF-16 code units). Counting the
// HTML source, not only the visible text, keeps parts under the limit with
// room to spare.
func hlen(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}

type tokKind int

const (
	tokText tokKind = iota // one character or one entity
	tokNewline
	tokOpen
	tokClose
)

type token struct {
	kind tokKind
	s    string
	name string // tag name for open/close
}

// tokenize cuts well-formed Telegram HTML into tags, entities and single
// characters.
func tokenize(s string) []token {
	var out []token
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			if end := strings.IndexByte(s[i:], '>'); end > 0 {
				tag := s[i : i+end+1]
				if strings.HasPrefix(tag, "</") {
					out = append(out, token{tokClose, tag, strings.TrimSpace(tag[2 : len(tag)-1])})
				} else {
					name, _, _ := strings.Cut(tag[1:len(tag)-1], " ")
					out = append(out, token{tokOpen, tag, name})
				}
				i += end + 1
				continue
			}
		case '&':
			if end := strings.IndexByte(s[i:], ';'); end > 0 && end <= 12 {
				out = append(out, token{tokText, s[i : i+end+1], ""})
				i += end + 1
				continue
			}
		case '\n':
			out = append(out, token{tokNewline, "\n", ""})
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		out = append(out, token{tokText, s[i : i+n], ""})
		i += n
	}
	return out
}

// splitHTML cuts Telegram HTML into parts of at most limit UTF-16 units
// each, breaking at line ends where it can and inside a line only when a
// line alone is too long. Tags open at a cut are closed at the end of the
// part and reopened at the start of the next, so every part is valid on its
// own (a code block split in two shows as two code blocks). Parts without
// visible text are left out.
func splitHTML(s string, limit int) []string {
	if hlen(s) <= limit {
		if visibleEmpty(s) {
			return nil
		}
		return []string{s}
	}
	toks := dropHugeTags(tokenize(s), limit)
	var parts []string
	var stack []token // open tags at the current position
	pos := 0
	for pos < len(toks) {
		prefix := ""
		for _, t := range stack {
			prefix += t.s
		}
		cur := strings.Builder{}
		cur.WriteString(prefix)
		curLen := hlen(prefix)
		st := append([]token(nil), stack...)
		closeLen := closersLen(st)
		// best cut at a newline: token index, the part so far, and the stack
		nlAt, nlText, nlStack := -1, "", []token(nil)
		i := pos
		for ; i < len(toks); i++ {
			t := toks[i]
			add := hlen(t.s)
			newClose := closeLen
			switch t.kind {
			case tokOpen:
				newClose += hlen("</" + t.name + ">")
			case tokClose:
				newClose -= hlen(t.s)
			}
			if curLen+add+newClose > limit && cur.Len() > len(prefix) {
				break
			}
			if t.kind == tokNewline {
				nlAt, nlText, nlStack = i, cur.String(), append([]token(nil), st...)
			}
			cur.WriteString(t.s)
			curLen += add
			closeLen = newClose
			switch t.kind {
			case tokOpen:
				st = append(st, t)
			case tokClose:
				if len(st) > 0 {
					st = st[:len(st)-1]
				}
			}
		}
		var part string
		if i < len(toks) && nlAt > pos {
			part = nlText + closers(nlStack)
			stack = nlStack
			pos = nlAt + 1 // the newline itself becomes the cut
		} else {
			part = cur.String() + closers(st)
			stack = st
			pos = i
		}
		if visibleEmpty(part) {
			continue
		}
		if hlen(part) > limit {
			// The tags to reopen leave no room (a link with a huge URL):
			// this part goes out as plain text.
			parts = append(parts, plainParts(part, limit)...)
			continue
		}
		parts = append(parts, part)
	}
	return parts
}

// plainParts drops the tags of HTML and cuts its text (entities kept
// whole) into parts of at most limit.
func plainParts(s string, limit int) []string {
	var parts []string
	var cur strings.Builder
	n := 0
	for _, t := range tokenize(s) {
		if t.kind == tokOpen || t.kind == tokClose {
			continue
		}
		l := hlen(t.s)
		if n+l > limit && n > 0 {
			parts = append(parts, cur.String())
			cur.Reset()
			n = 0
		}
		cur.WriteString(t.s)
		n += l
	}
	if n > 0 {
		parts = append(parts, cur.String())
	}
	return slices.DeleteFunc(parts, visibleEmpty)
}

// dropHugeTags removes tags too long to be reopened in every part (a link
// with a URL of thousands of characters): their text stays, and a link's
// URL follows its text in parentheses.
func dropHugeTags(toks []token, limit int) []token {
	type open struct {
		huge bool
		href string
	}
	var stack []open
	out := toks[:0:0]
	for _, t := range toks {
		switch t.kind {
		case tokOpen:
			huge := hlen(t.s) > limit/4
			o := open{huge: huge}
			if huge && t.name == "a" {
				if _, v, ok := strings.Cut(t.s, `href="`); ok {
					o.href, _, _ = strings.Cut(v, `"`)
				}
			}
			stack = append(stack, o)
			if huge {
				continue
			}
		case tokClose:
			if n := len(stack); n > 0 {
				o := stack[n-1]
				stack = stack[:n-1]
				if o.huge {
					if o.href != "" {
						out = append(out, tokenize(" ("+o.href+")")...)
					}
					continue
				}
			}
		}
		out = append(out, t)
	}
	return out
}

func closers(st []token) string {
	var b strings.Builder
	for i := len(st) - 1; i >= 0; i-- {
		b.WriteString("</" + st[i].name + ">")
	}
	return b.String()
}

func closersLen(st []token) int { return hlen(closers(st)) }

// visibleEmpty reports whether HTML shows no text but white space.
func visibleEmpty(s string) bool {
	for _, t := range tokenize(s) {
		if t.kind == tokText && strings.TrimSpace(t.s) != "" {
			return false
		}
	}
	return true
}
