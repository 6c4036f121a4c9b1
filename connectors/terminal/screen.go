package terminal

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// screen writes the transcript and, below it, a live region (the input
// prompt, an interaction's options, the spinner) that is erased and redrawn
// as it changes. Without a terminal it only appends: no cursor movement.
type screen struct {
	w     io.Writer
	tty   bool
	color bool
	width func() int // terminal columns; nil or ≤0 means 80

	liveRows int      // terminal rows the drawn live region occupies
	last     []string // live lines last drawn (non-tty: printed)
	err      error    // first write error
	buf      bytes.Buffer
	mid      bool // non-tty: streamed text left the cursor mid-line
}

// SGR colour codes.
const (
	sgrBold    = "1"
	sgrDim     = "2"
	sgrRed     = "31"
	sgrGreen   = "32"
	sgrYellow  = "33"
	sgrMagenta = "35"
	sgrCyan    = "36"
)

// paint wraps s in an SGR colour when colours are on.
func (s *screen) paint(code, text string) string {
	if !s.color || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// write queues text; flush sends it, so the terminal gets each change of
// the screen in one write and never shows half a redraw.
func (s *screen) write(text string) {
	if s.tty {
		// The terminal is in raw mode: a newline does not return the
		// carriage by itself.
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	s.buf.WriteString(text)
}

// flush writes what was queued; the first error sticks.
func (s *screen) flush() error {
	if s.buf.Len() > 0 && s.err == nil {
		_, s.err = s.w.Write(s.buf.Bytes())
	}
	s.buf.Reset()
	return s.err
}

func (s *screen) cols() int {
	if s.width != nil {
		if w := s.width(); w > 0 {
			return w
		}
	}
	return 80
}

// erase removes the live region, leaving the cursor where it started.
func (s *screen) erase() {
	if !s.tty || s.liveRows == 0 {
		s.liveRows = 0
		return
	}
	seq := "\r"
	if s.liveRows > 1 {
		seq += fmt.Sprintf("\x1b[%dA", s.liveRows-1)
	}
	s.write(seq + "\x1b[J")
	s.liveRows = 0
}

// commit adds text to the transcript above the live region; the caller
// redraws the live region afterwards.
func (s *screen) commit(text string) {
	s.erase()
	s.endLine()
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	s.write(text)
	s.last = nil
}

// endLine ends a line streamed without a terminal.
func (s *screen) endLine() {
	if s.mid {
		s.write("\n")
		s.mid = false
	}
}

// stream appends text as it comes (without a terminal; with one, streamed
// text goes through the live region).
func (s *screen) stream(text string) {
	if text == "" {
		return
	}
	s.write(text)
	s.mid = !strings.HasSuffix(text, "\n")
	s.last = nil
}

// draw replaces the live region with lines. Without a terminal, lines are
// printed only when they changed, and never the bare input prompt.
func (s *screen) draw(lines []string) {
	if !s.tty {
		if equal(lines, s.last) {
			return
		}
		s.last = append([]string(nil), lines...)
		var out []string
		for _, l := range lines {
			if strings.TrimSpace(stripANSI(l)) != "" && stripANSI(l) != idleGlyph {
				out = append(out, l)
			}
		}
		if len(out) > 0 {
			s.endLine()
			s.write(strings.Join(out, "\n") + "\n")
		}
		return
	}
	s.erase()
	cols := s.cols()
	rows := 0
	for i, l := range lines {
		if i > 0 {
			s.write("\n")
		}
		s.write(l)
		n := utf8.RuneCountInString(stripANSI(l))
		rows += max(1, (n+cols-1)/cols)
	}
	s.liveRows = rows
	s.last = lines
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// stripANSI removes CSI escape sequences (colours), for measuring.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sanitize removes control characters from text that is shown to people
// (agent output, labels), so it cannot move the cursor or recolour the
// screen. Newlines and tabs stay.
func sanitize(s string) string {
	clean := true
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}
