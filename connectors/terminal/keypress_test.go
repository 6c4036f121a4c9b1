package terminal

import (
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func decodeAll(b []byte) []keyPress {
	var d keyDecoder
	return append(d.Feed(b), d.Flush()...)
}

func decodeBytewise(b []byte) []keyPress {
	var d keyDecoder
	var keys []keyPress
	for i := range b {
		keys = append(keys, d.Feed(b[i:i+1])...)
	}
	return append(keys, d.Flush()...)
}

func runes(s string) []keyPress {
	var k []keyPress
	for _, r := range s {
		k = append(k, keyPress{Kind: keyRune, Rune: r})
	}
	return k
}

func TestKeyDecoder(t *testing.T) {
	enter := keyPress{Kind: keyEnter}
	cases := []struct {
		name string
		in   string
		want []keyPress
	}{
		{"text and CR", "ab 1\r", append(runes("ab 1"), enter)},
		{"LF alone is Enter", "x\n", append(runes("x"), enter)},
		{"CR LF is one Enter", "x\r\ny\r\n", append(append(append(runes("x"), enter), runes("y")...), enter)},
		{"two CRs are two Enters", "\r\r", []keyPress{enter, enter}},
		{"LF CR is two Enters", "\n\r", []keyPress{enter, enter}},
		{"arrows CSI", "\x1b[A\x1b[B\x1b[C\x1b[D", []keyPress{{Kind: keyUp}, {Kind: keyDown}, {Kind: keyRight}, {Kind: keyLeft}}},
		{"arrows SS3", "\x1bOA\x1bOB", []keyPress{{Kind: keyUp}, {Kind: keyDown}}},
		{"Ctrl+Up is still up", "\x1b[1;5A", []keyPress{{Kind: keyUp}}},
		{"Ctrl keys", "\x03\x04\x15", []keyPress{{Kind: keyCtrlC}, {Kind: keyCtrlD}, {Kind: keyCtrlU}}},
		{"backspace DEL and BS", "a\x7f\x08", []keyPress{{Kind: keyRune, Rune: 'a'}, {Kind: keyBackspace}, {Kind: keyBackspace}}},
		{"delete key is unknown", "\x1b[3~", []keyPress{{Kind: keyUnknown}}},
		{"bracketed paste markers are unknown", "\x1b[200~hi\x1b[201~", append(append([]keyPress{{Kind: keyUnknown}}, runes("hi")...), keyPress{Kind: keyUnknown})},
		{"lone ESC at the end", "\x1b", []keyPress{{Kind: keyEsc}}},
		{"ESC then a letter", "\x1bx", []keyPress{{Kind: keyEsc}, {Kind: keyRune, Rune: 'x'}}},
		{"unicode", "é→日", runes("é→日")},
		{"invalid UTF-8", "\xff", []keyPress{{Kind: keyUnknown}}},
		{"tab and other controls", "\t\x01", []keyPress{{Kind: keyUnknown}, {Kind: keyUnknown}}},
		{"C1 control", "\u0085", []keyPress{{Kind: keyUnknown}}},
		{"CSI broken by a control byte", "\x1b[1\x03", []keyPress{{Kind: keyUnknown}, {Kind: keyCtrlC}}},
		{"incomplete CSI at the end", "\x1b[1;", []keyPress{{Kind: keyUnknown}}},
		{"incomplete UTF-8 at the end", "a\xe2\x86", []keyPress{{Kind: keyRune, Rune: 'a'}, {Kind: keyUnknown}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, decodeAll([]byte(c.in)), "all at once")
			assert.Equal(t, c.want, decodeBytewise([]byte(c.in)), "byte by byte")
		})
	}
}

func TestKeyDecoderHoldsIncompleteInput(t *testing.T) {
	var d keyDecoder
	assert.Empty(t, d.Feed([]byte("\x1b")), "a lone ESC may start an arrow")
	assert.Empty(t, d.Feed([]byte("[")))
	assert.Equal(t, []keyPress{{Kind: keyDown}}, d.Feed([]byte("B")))
	assert.Empty(t, d.Feed([]byte("\xe6\x97")), "half a character")
	assert.Equal(t, runes("日"), d.Feed([]byte("\xa5")))
	assert.Empty(t, d.Flush())
}

func TestKeyDecoderBoundsEscapeSequences(t *testing.T) {
	long := "\x1b["
	for range 100 {
		long += "1"
	}
	keys := decodeAll([]byte(long + "A"))
	require.NotEmpty(t, keys)
	assert.Equal(t, keyUnknown, keys[0].Kind, "an over-long sequence is dropped, not held forever")
	var d keyDecoder
	d.Feed([]byte(long))
	assert.Less(t, len(d.buf), maxSeq, "the decoder never buffers more than one bounded sequence")
}

func FuzzKeyDecoder(f *testing.F) {
	for _, s := range []string{"", "hello\r", "\x1b[A\x1b[B\r", "\x1bOA", "\x03", "é→\r\n", "\x1b[1;5A", "\x1b[200~x\x1b[201~", "\x1b", "\xff\xfe", "\x1b[" + strconv.Itoa(1<<20)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		all := decodeAll(b)
		// However the bytes are split, the keys are the same.
		require.Equal(t, all, decodeBytewise(b))
		half := len(b) / 2
		var d keyDecoder
		split := append(d.Feed(b[:half]), d.Feed(b[half:])...)
		split = append(split, d.Flush()...)
		require.Equal(t, all, split)
		// Every key is well-formed, and never more keys than bytes.
		require.LessOrEqual(t, len(all), len(b))
		for _, k := range all {
			if k.Kind == keyRune {
				require.True(t, utf8.ValidRune(k.Rune) && k.Rune >= 0x20 && k.Rune != 0x7f && (k.Rune < 0x80 || k.Rune >= 0xa0), "rune %q", k.Rune)
			} else {
				require.Zero(t, k.Rune)
			}
		}
		// Printable ASCII comes back as itself.
		plain := true
		for _, c := range b {
			if c < 0x20 || c >= 0x7f {
				plain = false
			}
		}
		if plain {
			require.Equal(t, len(b), len(all))
			for i, k := range all {
				require.Equal(t, rune(b[i]), k.Rune)
			}
		}
	})
}
