package connectors

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DiffLine is one line of a unified diff as people see it: what kind of
// line it is, and its line numbers in the old and the new file (0 where
// it has none).
type DiffLine struct {
	Kind     DiffKind
	Old, New int
	Text     string // the line as the diff has it, marker included
}

// DiffKind says what a diff line is, and so how it is coloured.
type DiffKind byte

// Kinds of diff lines.
const (
	DiffFile    DiffKind = 'f' // "--- a/x" or "+++ b/x"
	DiffHunk    DiffKind = '@' // "@@ -1,3 +1,4 @@"
	DiffAdd     DiffKind = '+'
	DiffDel     DiffKind = '-'
	DiffContext DiffKind = ' '
	DiffNote    DiffKind = '\\' // "\ No newline at end of file", "… N more lines"
)

// ParseDiff reads a unified diff into lines with their line numbers,
// counted from each hunk's header. Anything it does not recognise is a
// note; it never fails.
func ParseDiff(d string) []DiffLine {
	var out []DiffLine
	oldN, newN := 0, 0
	for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
		line := DiffLine{Kind: DiffNote, Text: l}
		switch {
		case strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ "):
			line.Kind = DiffFile
		case strings.HasPrefix(l, "@@ "):
			line.Kind = DiffHunk
			oldN, newN = hunkStart(l)
		case strings.HasPrefix(l, "+"):
			line.Kind, line.New = DiffAdd, newN
			newN++
		case strings.HasPrefix(l, "-"):
			line.Kind, line.Old = DiffDel, oldN
			oldN++
		case strings.HasPrefix(l, " "):
			line.Kind, line.Old, line.New = DiffContext, oldN, newN
			oldN++
			newN++
		}
		out = append(out, line)
	}
	return out
}

// hunkStart is the first old and new line number of a hunk header
// "@@ -a,b +c,d @@" (1 where it cannot be read).
func hunkStart(h string) (oldN, newN int) {
	oldN, newN = 1, 1
	for _, f := range strings.Fields(h)[1:] {
		n, _, _ := strings.Cut(f[min(1, len(f)):], ",")
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 || v > 1<<30 { // no file has more lines, and counting on must not overflow
			continue
		}
		switch f[0] {
		case '-':
			oldN = max(v, 1)
		case '+':
			newN = max(v, 1)
		}
	}
	return oldN, newN
}

// DiffExcerpt keeps the first lines of a diff, at most maxLines and
// maxChars characters, and says how many lines more the whole diff has:
// for chat apps where a long diff would fill the chat.
func DiffExcerpt(d string, maxLines, maxChars int) string {
	lines := strings.Split(strings.TrimRight(d, "\n"), "\n")
	n, size := 0, 0
	for n < len(lines) && n < maxLines {
		size += utf8.RuneCountInString(lines[n]) + 1
		if size > maxChars && n > 0 {
			break
		}
		n++
	}
	if n == len(lines) {
		return strings.Join(lines, "\n")
	}
	return Truncate(strings.Join(lines[:n], "\n"), maxChars) + fmt.Sprintf("\n… %d more lines", len(lines)-n)
}
