package terminal

import "unicode/utf8"

// KeyKind is what a key press is.
type KeyKind int

// Keys the terminal connector understands. Everything else a terminal can
// send decodes as KeyUnknown and is ignored.
const (
	KeyUnknown   KeyKind = iota
	KeyRune              // a printable character (Key.Rune), space included
	KeyEnter             // CR, LF or CR LF
	KeyBackspace         // DEL or BS
	KeyUp
	KeyDown
	KeyLeft
	KeyRight
	KeyCtrlC
	KeyCtrlD
	KeyCtrlU // erase the line
	KeyEsc   // a lone escape
)

// Key is one decoded key press.
type Key struct {
	Kind KeyKind
	Rune rune // for KeyRune
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
func (d *keyDecoder) Feed(p []byte) []Key {
	d.buf = append(d.buf, p...)
	var keys []Key
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
	return keys
}

// Flush returns whatever is still buffered as keys: a lone ESC becomes
// KeyEsc, an incomplete sequence or character KeyUnknown.
func (d *keyDecoder) Flush() []Key {
	// Feed consumed every complete key, so what is left is one incomplete
	// sequence or character.
	var keys []Key
	switch {
	case len(d.buf) == 0:
	case len(d.buf) == 1 && d.buf[0] == 0x1b:
		keys = d.emit(keys, Key{Kind: KeyEsc})
	default:
		keys = d.emit(keys, Key{Kind: KeyUnknown})
	}
	d.buf = nil
	return keys
}

// emit appends k, folding the LF of a CR LF pair into one Enter.
func (d *keyDecoder) emit(keys []Key, k Key) []Key {
	if k.Kind == KeyEnter && k.Rune == '\n' && d.lastCR {
		d.lastCR = false
		return keys
	}
	d.lastCR = k.Kind == KeyEnter && k.Rune == '\r'
	if k.Kind == KeyEnter {
		k.Rune = 0
	}
	return append(keys, k)
}

// next decodes one key at the start of b and how many bytes it took; n is
// 0 when b starts with an incomplete sequence.
func (d *keyDecoder) next(b []byte) (Key, int) {
	c := b[0]
	switch {
	case c == '\r' || c == '\n':
		return Key{Kind: KeyEnter, Rune: rune(c)}, 1
	case c == 0x7f || c == 0x08:
		return Key{Kind: KeyBackspace}, 1
	case c == 0x03:
		return Key{Kind: KeyCtrlC}, 1
	case c == 0x04:
		return Key{Kind: KeyCtrlD}, 1
	case c == 0x15:
		return Key{Kind: KeyCtrlU}, 1
	case c == 0x1b:
		return escape(b)
	case c < 0x20:
		return Key{Kind: KeyUnknown}, 1
	case c < utf8.RuneSelf:
		return Key{Kind: KeyRune, Rune: rune(c)}, 1
	}
	if !utf8.FullRune(b) {
		return Key{}, 0
	}
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError || r < 0xa0 { // invalid bytes, C1 controls
		return Key{Kind: KeyUnknown}, n
	}
	return Key{Kind: KeyRune, Rune: r}, n
}

// escape decodes a sequence starting with ESC: CSI (ESC [ … final) and SS3
// (ESC O x) arrows; anything else after ESC is a lone Esc followed by that
// byte.
func escape(b []byte) (Key, int) {
	if len(b) < 2 {
		return Key{}, 0
	}
	switch b[1] {
	case 'O': // SS3: ESC O A (application cursor keys)
		if len(b) < 3 {
			return Key{}, 0
		}
		return Key{Kind: arrow(b[2])}, 3
	case '[':
		// CSI: parameter bytes 0x30–0x3F, intermediate 0x20–0x2F, one final
		// byte 0x40–0x7E.
		for i := 2; i < len(b); i++ {
			c := b[i]
			switch {
			case c >= 0x40 && c <= 0x7e:
				if i == 2 || onlyModifiers(b[2:i]) {
					return Key{Kind: arrow(c)}, i + 1
				}
				return Key{Kind: KeyUnknown}, i + 1
			case c >= 0x20 && c <= 0x3f:
				if i+1 >= maxSeq {
					return Key{Kind: KeyUnknown}, i + 1
				}
			default: // not part of a CSI sequence: drop what came so far
				return Key{Kind: KeyUnknown}, i
			}
		}
		return Key{}, 0
	default:
		return Key{Kind: KeyEsc}, 1
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

func arrow(c byte) KeyKind {
	switch c {
	case 'A':
		return KeyUp
	case 'B':
		return KeyDown
	case 'C':
		return KeyRight
	case 'D':
		return KeyLeft
	}
	return KeyUnknown
}
