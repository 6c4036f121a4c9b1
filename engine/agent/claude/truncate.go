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
	type frame struct {
		obj      bool
		afterKey bool // an object's key was read: a colon and value follow
		wantKey  bool // an object expects a key (after '{' or ',')
	}
	var (
		stack    []frame
		inStr    bool
		strIsKey bool
		esc      bool
		uDigits  = -1 // digits read of a \uXXXX escape (-1: none)
		escStart int  // where the current escape began
		litStart = -1 // where the current number or literal began
	)
	i := 0
	for i < len(head) && isSpace(head[i]) {
		i++
	}
	if i == len(head) || head[i] != '{' {
		return nil, false, false
	}
	for ; i < len(head); i++ {
		c := head[i]
		if inStr {
			switch {
			case uDigits >= 0:
				if !isHex(c) {
					return nil, false, false
				}
				uDigits++
				if uDigits == 4 {
					uDigits = -1
				}
			case esc:
				esc = false
				switch c {
				case 'u':
					uDigits = 0
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				default:
					return nil, false, false
				}
			case c == '\\':
				esc, escStart = true, i
			case c == '"':
				inStr = false
				if strIsKey {
					stack[len(stack)-1].afterKey = true
				}
			case c < 0x20:
				return nil, false, false
			}
			continue
		}
		if litStart >= 0 && !isLiteral(c) {
			litStart = -1
		}
		switch {
		case isSpace(c):
		case c == '"':
			inStr = true
			top := &stack[len(stack)-1]
			strIsKey = top.obj && top.wantKey
			if strIsKey {
				top.wantKey = false
			}
		case c == '{':
			stack = append(stack, frame{obj: true, wantKey: true})
		case c == '[':
			stack = append(stack, frame{})
		case c == '}' || c == ']':
			if len(stack) == 0 || stack[len(stack)-1].obj != (c == '}') {
				return nil, false, false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				// The object ended within head: nothing was cut inside it.
				return head[:i+1], false, json.Valid(head[:i+1])
			}
		case c == ':':
			if len(stack) == 0 || !stack[len(stack)-1].afterKey {
				return nil, false, false
			}
			stack[len(stack)-1].afterKey = false
		case c == ',':
			if top := &stack[len(stack)-1]; top.obj {
				top.wantKey = true
			}
		case isLiteral(c):
			if litStart < 0 {
				litStart = i
			}
		default:
			return nil, false, false
		}
	}

	out = make([]byte, 0, len(head)+len(note)+len(stack)+16)
	switch {
	case inStr:
		cut := head
		switch {
		case uDigits >= 0:
			cut = cut[:escStart] // a partial \uXXXX
		case esc:
			cut = cut[:len(cut)-1] // a lone backslash
		}
		cut = trimPartialRune(cut)
		out = append(out, cut...)
		if strIsKey {
			out = append(out, `":null`...)
		} else {
			n, _ := json.Marshal(note) // cannot fail
			out = append(out, n[1:len(n)-1]...)
			out = append(out, '"')
			noted = true
		}
	default:
		cut := head
		if litStart >= 0 {
			cut = cut[:litStart] // a cut number or literal: null instead
		}
		cut = bytes.TrimRight(cut, " \t\r\n")
		out = append(out, cut...)
		top := stack[len(stack)-1]
		switch {
		case litStart >= 0:
			out = append(out, "null"...)
		case top.afterKey:
			out = append(out, ":null"...)
		case len(cut) > 0 && cut[len(cut)-1] == ':':
			out = append(out, "null"...)
		case len(cut) > 0 && cut[len(cut)-1] == ',':
			out = out[:len(out)-1]
		}
	}
	for j := len(stack) - 1; j >= 0; j-- {
		if stack[j].obj {
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
