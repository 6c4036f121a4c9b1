package claude

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// closeTruncated turns head, the first bytes of a JSON object cut off at
// the message limit, into a valid JSON object: the string being cut (the
// long text, as a rule) is ended with note, and whatever was open is
// closed. A value cut outside a string is dropped (a cut number, literal
// or key becomes null). noted reports whether note went into a string. ok
// is false when head is not the start of a JSON object.
func closeTruncated(head []byte, note string) (out []byte, noted, ok bool) {
	i := 0
	for i < len(head) && isSpace(head[i]) {
		i++
	}
	if i == len(head) || head[i] != '{' {
		return nil, false, false
	}
	sc := truncScan{uDigits: -1, litStart: -1}
	for ; i < len(head); i++ {
		c := head[i]
		if sc.inStr {
			if !sc.stringByte(i, c) {
				return nil, false, false
			}
			continue
		}
		ended, valid := sc.valueByte(i, c)
		if !valid {
			return nil, false, false
		}
		if ended {
			// The object ended within head: nothing was cut inside it.
			return head[:i+1], false, json.Valid(head[:i+1])
		}
	}
	out = make([]byte, 0, len(head)+len(note)+len(sc.stack)+16)
	if sc.inStr {
		out, noted = sc.endString(out, head, note)
	} else {
		out = sc.endValue(out, head)
	}
	for j := len(sc.stack) - 1; j >= 0; j-- {
		if sc.stack[j].obj {
			out = append(out, '}')
		} else {
			out = append(out, ']')
		}
	}
	if !json.Valid(out) {
		return nil, false, false
	}
	return out, noted, true
}

// truncFrame is an open object or array.
type truncFrame struct {
	obj      bool
	afterKey bool // an object's key was read: a colon and value follow
	wantKey  bool // an object expects a key (after '{' or ',')
}

// truncScan is where closeTruncated is in the JSON read so far.
type truncScan struct {
	stack    []truncFrame
	inStr    bool
	strIsKey bool
	esc      bool
	uDigits  int // digits read of a \uXXXX escape (-1: none)
	escStart int // where the current escape began
	litStart int // where the current number or literal began (-1: none)
}

// stringByte reads byte c, at i, inside a string; it reports false for
// one that cannot be there.
func (sc *truncScan) stringByte(i int, c byte) bool {
	switch {
	case sc.uDigits >= 0:
		if !isHex(c) {
			return false
		}
		sc.uDigits++
		if sc.uDigits == 4 {
			sc.uDigits = -1
		}
	case sc.esc:
		sc.esc = false
		switch c {
		case 'u':
			sc.uDigits = 0
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		default:
			return false
		}
	case c == '\\':
		sc.esc, sc.escStart = true, i
	case c == '"':
		sc.inStr = false
		if sc.strIsKey {
			sc.stack[len(sc.stack)-1].afterKey = true
		}
	case c < 0x20:
		return false
	}
	return true
}

// valueByte reads byte c, at i, outside any string. ended reports that
// the outermost object closed; valid is false for a byte that cannot be
// there.
func (sc *truncScan) valueByte(i int, c byte) (ended, valid bool) {
	if sc.litStart >= 0 && !isLiteral(c) {
		sc.litStart = -1
	}
	switch {
	case isSpace(c):
	case c == '"':
		sc.inStr = true
		top := &sc.stack[len(sc.stack)-1]
		sc.strIsKey = top.obj && top.wantKey
		if sc.strIsKey {
			top.wantKey = false
		}
	case c == '{':
		sc.stack = append(sc.stack, truncFrame{obj: true, wantKey: true})
	case c == '[':
		sc.stack = append(sc.stack, truncFrame{})
	case c == '}' || c == ']':
		if len(sc.stack) == 0 || sc.stack[len(sc.stack)-1].obj != (c == '}') {
			return false, false
		}
		sc.stack = sc.stack[:len(sc.stack)-1]
		return len(sc.stack) == 0, true
	case c == ':':
		if len(sc.stack) == 0 || !sc.stack[len(sc.stack)-1].afterKey {
			return false, false
		}
		sc.stack[len(sc.stack)-1].afterKey = false
	case c == ',':
		if top := &sc.stack[len(sc.stack)-1]; top.obj {
			top.wantKey = true
		}
	case isLiteral(c):
		if sc.litStart < 0 {
			sc.litStart = i
		}
	default:
		return false, false
	}
	return false, true
}

// endString appends head, cut inside a string, to out with the string
// ended: a value string with note, a key with a null value.
func (sc *truncScan) endString(out, head []byte, note string) ([]byte, bool) {
	cut := head
	switch {
	case sc.uDigits >= 0:
		cut = cut[:sc.escStart] // a partial \uXXXX
	case sc.esc:
		cut = cut[:len(cut)-1] // a lone backslash
	}
	cut = trimPartialRune(cut)
	out = append(out, cut...)
	if sc.strIsKey {
		return append(out, `":null`...), false
	}
	n, _ := json.Marshal(note) // cannot fail
	out = append(out, n[1:len(n)-1]...)
	return append(out, '"'), true
}

// endValue appends head, cut outside a string, to out with null for
// whatever value was cut or still missing.
func (sc *truncScan) endValue(out, head []byte) []byte {
	cut := head
	if sc.litStart >= 0 {
		cut = cut[:sc.litStart] // a cut number or literal: null instead
	}
	cut = bytes.TrimRight(cut, " \t\r\n")
	out = append(out, cut...)
	top := sc.stack[len(sc.stack)-1]
	switch {
	case sc.litStart >= 0:
		out = append(out, "null"...)
	case top.afterKey:
		out = append(out, ":null"...)
	case len(cut) > 0 && cut[len(cut)-1] == ':':
		out = append(out, "null"...)
	case len(cut) > 0 && cut[len(cut)-1] == ',':
		out = out[:len(out)-1]
	}
	return out
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for k := 1; k <= utf8.UTFMax && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return b // ASCII: complete
		}
		if utf8.RuneStart(c) {
			if r, _ := utf8.DecodeRune(b[len(b)-k:]); r == utf8.RuneError {
				return b[:len(b)-k]
			}
			return b
		}
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isLiteral reports whether c can be part of a number, true, false or null.
func isLiteral(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || c == '-' || c == '+' || c == '.' || 'A' <= c && c <= 'Z'
}
