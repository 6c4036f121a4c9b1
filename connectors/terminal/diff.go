package terminal

import (
	"strings"

	"github.com/leashd/leashd/connectors"
)

// diffText is a file change as a unified diff, indented, each line
// coloured by its kind as git colours it: added green, removed red, hunk
// headers cyan, file names bold.
func (u *ui) diffText(diff string) string {
	var b strings.Builder
	for _, l := range connectors.ParseDiff(diff) {
		text := sanitize(l.Text)
		switch l.Kind {
		case connectors.DiffAdd:
			text = u.s.paint(sgrGreen, text)
		case connectors.DiffDel:
			text = u.s.paint(sgrRed, text)
		case connectors.DiffHunk:
			text = u.s.paint(sgrCyan, text)
		case connectors.DiffFile:
			text = u.s.paint(sgrBold, text)
		case connectors.DiffNote:
			text = u.s.paint(sgrDim, text)
		}
		b.WriteString("  " + text + "\n")
	}
	return b.String()
}
