package terminal_test

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// vt is a small terminal emulator for tests: it keeps a grid of cells with
// their colours, as an xterm would, for the escape sequences a line-based
// program uses (cursor up/down/left/right, erase in display/line, SGR
// colours, CR, LF, BS, tab, autowrap with a pending-wrap column). Lines that
// scroll off the top are kept, so a test sees the whole transcript.
type vt struct {
	rows, cols int
	grid       []*line
	hist       []*line
	r, c       int
	wrapNext   bool
	attr       attr
	pending    []byte // an incomplete escape sequence or character
	// Unknown lists escape sequences the emulator did not understand: a
	// test can assert the program sent only what it meant to.
	Unknown []string
}

type attr struct {
	fg   int // 30–37, 0 default
	bold bool
	dim  bool
}

// line is one terminal row; wrapped means its text goes on in the next
// row (autowrap), so Lines joins them as the program wrote them.
type line struct {
	cells   []cell
	wrapped bool
}

type cell struct {
	ch rune
	a  attr
}

func newVT(rows, cols int) *vt {
	v := &vt{rows: rows, cols: cols}
	for range rows {
		v.grid = append(v.grid, v.blank())
	}
	return v
}

func (v *vt) blank() *line {
	row := make([]cell, v.cols)
	for i := range row {
		row[i] = cell{ch: ' '}
	}
	return &line{cells: row}
}

func (v *vt) Write(p []byte) (int, error) {
	b := append(v.pending, p...)
	v.pending = nil
	for len(b) > 0 {
		n := v.step(b)
		if n == 0 {
			v.pending = append([]byte(nil), b...)
			break
		}
		b = b[n:]
	}
	return len(p), nil
}

// step interprets the start of b and returns how many bytes it used (0:
// incomplete).
func (v *vt) step(b []byte) int {
	switch c := b[0]; {
	case c == 0x1b:
		if len(b) < 2 {
			return 0
		}
		if b[1] != '[' {
			v.Unknown = append(v.Unknown, string(b[:2]))
			return 2
		}
		for i := 2; i < len(b); i++ {
			if b[i] >= 0x40 && b[i] <= 0x7e {
				v.csi(string(b[2:i]), b[i])
				return i + 1
			}
		}
		return 0
	case c == '\r':
		v.c, v.wrapNext = 0, false
	case c == '\n':
		v.lineFeed()
		v.wrapNext = false
	case c == '\b':
		if v.c > 0 {
			v.c--
		}
		v.wrapNext = false
	case c == '\t':
		v.c = min((v.c/8+1)*8, v.cols-1)
	case c < 0x20 || c == 0x7f:
	default:
		if !utf8.FullRune(b) {
			return 0
		}
		r, n := utf8.DecodeRune(b)
		v.put(r)
		return n
	}
	return 1
}

func (v *vt) put(r rune) {
	if v.wrapNext {
		v.grid[v.r].wrapped = true
		v.c = 0
		v.lineFeed()
		v.wrapNext = false
	}
	v.grid[v.r].cells[v.c] = cell{ch: r, a: v.attr}
	if v.c == v.cols-1 {
		v.wrapNext = true
	} else {
		v.c++
	}
}

func (v *vt) lineFeed() {
	if v.r < v.rows-1 {
		v.r++
		return
	}
	v.hist = append(v.hist, v.grid[0])
	v.grid = append(v.grid[1:], v.blank())
}

func (v *vt) csi(params string, final byte) {
	if strings.HasPrefix(params, "?") { // private modes (bracketed paste, cursor)
		return
	}
	var ps []int
	for _, f := range strings.Split(params, ";") {
		n, _ := strconv.Atoi(f)
		ps = append(ps, n)
	}
	arg := func(def int) int {
		if len(ps) == 0 || ps[0] == 0 {
			return def
		}
		return ps[0]
	}
	v.wrapNext = v.wrapNext && final == 'm'
	switch final {
	case 'A':
		v.r = max(0, v.r-arg(1))
	case 'B':
		v.r = min(v.rows-1, v.r+arg(1))
	case 'C':
		v.c = min(v.cols-1, v.c+arg(1))
	case 'D':
		v.c = max(0, v.c-arg(1))
	case 'G':
		v.c = min(v.cols-1, arg(1)-1)
	case 'H', 'f':
		v.r, v.c = 0, 0
		if len(ps) > 0 && ps[0] > 0 {
			v.r = min(v.rows-1, ps[0]-1)
		}
		if len(ps) > 1 && ps[1] > 0 {
			v.c = min(v.cols-1, ps[1]-1)
		}
	case 'J':
		switch arg(0) {
		case 0:
			v.eraseLine(v.r, v.c, v.cols)
			for r := v.r + 1; r < v.rows; r++ {
				v.grid[r] = v.blank()
			}
		case 2:
			for r := range v.grid {
				v.grid[r] = v.blank()
			}
		}
	case 'K':
		switch arg(0) {
		case 0:
			v.eraseLine(v.r, v.c, v.cols)
		case 1:
			v.eraseLine(v.r, 0, v.c+1)
		case 2:
			v.grid[v.r] = v.blank()
		}
	case 'm':
		if len(ps) == 0 {
			ps = []int{0}
		}
		for _, p := range ps {
			switch {
			case p == 0:
				v.attr = attr{}
			case p == 1:
				v.attr.bold = true
			case p == 2:
				v.attr.dim = true
			case p == 22:
				v.attr.bold, v.attr.dim = false, false
			case p >= 30 && p <= 37:
				v.attr.fg = p
			case p == 39:
				v.attr.fg = 0
			}
		}
	default:
		v.Unknown = append(v.Unknown, "CSI "+params+string(final))
	}
}

func (v *vt) eraseLine(r, from, to int) {
	for c := from; c < to && c < v.cols; c++ {
		v.grid[r].cells[c] = cell{ch: ' '}
	}
	if to >= v.cols {
		v.grid[r].wrapped = false
	}
}

func rowText(row *line) string {
	var b strings.Builder
	for _, c := range row.cells {
		b.WriteRune(c.ch)
	}
	if row.wrapped {
		return b.String()
	}
	return strings.TrimRight(b.String(), " ")
}

// Lines is the transcript: what scrolled off, then the screen, without
// trailing blank lines; rows the terminal wrapped are joined.
func (v *vt) Lines() []string {
	var out []string
	cont := false
	for _, row := range append(append([]*line(nil), v.hist...), v.grid...) {
		if cont {
			out[len(out)-1] += rowText(row)
		} else {
			out = append(out, rowText(row))
		}
		cont = row.wrapped
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// Text is Lines joined.
func (v *vt) Text() string { return strings.Join(v.Lines(), "\n") }

// CursorLine is the text of the line the cursor is on.
func (v *vt) CursorLine() string { return rowText(v.grid[v.r]) }

// AttrOf returns the attributes of the first character of the last
// occurrence of sub on the screen (or in the history).
func (v *vt) AttrOf(sub string) (attr, bool) {
	rows := append(append([]*line(nil), v.hist...), v.grid...)
	for i := len(rows) - 1; i >= 0; i-- {
		text := rowText(rows[i])
		if j := strings.LastIndex(text, sub); j >= 0 {
			col := utf8.RuneCountInString(text[:j])
			return rows[i].cells[col].a, true
		}
	}
	return attr{}, false
}
