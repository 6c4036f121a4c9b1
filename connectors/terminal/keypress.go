package terminal

import "unicode/utf8"

// keyKind is what a key press is.
type keyKind int

// Keys the terminal connector understands. Everything else a terminal can
// send decodes as keyUnknown and is ignored.
const (
	keyUnknown   keyKind = iota
	keyRune              // a printable character (keyPress.Rune), space included
	keyEnter             // CR, LF or CR LF
	keyBackspace         // DEL or BS
	keyUp
	keyDown
	keyLeft
	keyRight
	keyCtrlC
	keyCtrlD
	keyCtrlU // erase the line
	keyEsc   // a lone escape
)

// keyPress is one decoded key press.
type keyPress struct {
	Kind keyKind
	Rune rune // for keyRune
}

// keyDecoder turns the bytes a terminal in raw mode sends into keys. It
// keeps an incomplete escape sequence or UTF-8 character across Feed calls,
// so however the input is split the keys are the same.
type keyDecoder struct {
	buf    []byte
	lastCR bool // the previous key was CR: a following LF is the same Enter
}

// maxSeq bounds a buffered escape sequence; a longer one is dropped as
// unknown rather than held forever.
const maxSeq = 32

// Feed decodes p (appended to what was left over) and returns the complete
// keys in it.
func (d *keyDecoder) Feed(p []byte) []keyPress {
	d.buf = append(d.buf, p...)
	keys := make([]keyPress, 0, len(d.buf))
	for len(d.buf) > 0 {
		k, n := d.next(d.buf)
		if n == 0 { // incomplete: wait for more input
			break
		}
		d.buf = d.buf[n:]
		keys = d.emit(keys, k)
	}
	if len(d.buf) == 0 {
		d.buf = nil
	}
	if len(keys) == 0 {
		return nil
	}
	return keys
}

// Flush returns whatever is still buffered as keys: a lone ESC becomes
// keyEsc, an incomplete sequence or character keyUnknown.
func (d *keyDecoder) Flush() []keyPress {
	// Feed consumed every complete key, so what is left is one incomplete
	// sequence or character.
	var keys []keyPress
	switch {
	case len(d.buf) == 0:
	case len(d.buf) == 1 && d.buf[0] == 0x1b:
		keys = d.emit(keys, keyPress{Kind: keyEsc})
	default:
		keys = d.emit(keys, keyPress{Kind: keyUnknown})
	}
	d.buf = nil
	return keys
}

// emit appends k, folding the LF of a CR LF pair into one Enter.
func (d *keyDecoder) emit(keys []keyPress, k keyPress) []keyPress {
	if k.Kind == keyEnter && k.Rune == '\n' && d.lastCR {
		d.lastCR = false
		return keys
	}
	d.lastCR = k.Kind == keyEnter && k.Rune == '\r'
	if k.Kind == keyEnter {
		k.Rune = 0
	}
	return append(keys, k)
}

// next decodes one key at the start of b and how many bytes it took; n is
// 0 when b starts with an incomplete sequence.
func (d *keyDecoder) next(b []byte) (keyPress, int) {
	c := b[0]
	switch {
	case c == '\r' || c == '\n':
		return keyPress{Kind: keyEnter, Rune: rune(c)}, 1
	case c == 0x7f || c == 0x08:
		return keyPress{Kind: keyBackspace}, 1
	case c == 0x03:
		return keyPress{Kind: keyCtrlC}, 1
	case c == 0x04:
		return keyPress{Kind: keyCtrlD}, 1
	case c == 0x15:
		return keyPress{Kind: keyCtrlU}, 1
	case c == 0x1b:
		return escape(b)
	case c < 0x20:
		return keyPress{Kind: keyUnknown}, 1
	case c < utf8.RuneSelf:
		return keyPress{Kind: keyRune, Rune: rune(c)}, 1
	}
	if !utf8.FullRune(b) {
		return keyPress{}, 0
	}
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError || r < 0xa0 { // invalid bytes, C1 controls
		return keyPress{Kind: keyUnknown}, n
	}
	return keyPress{Kind: keyRune, Rune: r}, n
}

// escape decodes a sequence starting with ESC: CSI (ESC [ … final) and SS3
// (ESC O x) arrows; anything else after ESC is a lone Esc followed by that
// byte.
func escape(b []byte) (keyPress, int) {
	if len(b) < 2 {
		return keyPress{}, 0
	}
	switch b[1] {
	case 'O': // SS3: ESC O A (application cursor keys)
		if len(b) < 3 {
			return keyPress{}, 0
		}
		return keyPress{Kind: arrow(b[2])}, 3
	case '[':
		// CSI: parameter bytes 0x30–0x3F, intermediate 0x20–0x2F, one final
		// byte 0x40–0x7E.
		for i := 2; i < len(b); i++ {
			c := b[i]
			switch {
			case c >= 0x40 && c <= 0x7e:
				if i == 2 || onlyModifiers(b[2:i]) {
					return keyPress{Kind: arrow(c)}, i + 1
				}
				return keyPress{Kind: keyUnknown}, i + 1
			case c >= 0x20 && c <= 0x3f:
				if i+1 >= maxSeq {
					return keyPress{Kind: keyUnknown}, i + 1
				}
			default: // not part of a CSI sequence: drop what came so far
				return keyPress{Kind: keyUnknown}, i
			}
		}
		return keyPress{}, 0
	default:
		return keyPress{Kind: keyEsc}, 1
	}
}

// onlyModifiers reports whether CSI parameters are "1;<mod>" as in
// ESC [ 1 ; 5 A (Ctrl+Up): still an arrow.
func onlyModifiers(p []byte) bool {
	return len(p) >= 3 && p[0] == '1' && p[1] == ';' && allDigits(p[2:])
}

func allDigits(p []byte) bool {
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(p) > 0
}

func arrow(c byte) keyKind {
	switch c {
	case 'A':
		return keyUp
	case 'B':
		return keyDown
	case 'C':
		return keyRight
	case 'D':
		return keyLeft
	}
	return keyUnknown
}
