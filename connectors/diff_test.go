package connectors_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/connectors"
)

func TestParseDiffNumbersLines(t *testing.T) {
	d := "--- a/f.txt\n+++ b/f.txt\n@@ -7,3 +7,4 @@\n line g\n-line h\n+line H\n+line H2\n line i\n\\ No newline at end of file"
	got := connectors.ParseDiff(d)
	want := []connectors.DiffLine{
		{Kind: connectors.DiffFile, Text: "--- a/f.txt"},
		{Kind: connectors.DiffFile, Text: "+++ b/f.txt"},
		{Kind: connectors.DiffHunk, Text: "@@ -7,3 +7,4 @@"},
		{Kind: connectors.DiffContext, Old: 7, New: 7, Text: " line g"},
		{Kind: connectors.DiffDel, Old: 8, Text: "-line h"},
		{Kind: connectors.DiffAdd, New: 8, Text: "+line H"},
		{Kind: connectors.DiffAdd, New: 9, Text: "+line H2"},
		{Kind: connectors.DiffContext, Old: 9, New: 10, Text: " line i"},
		{Kind: connectors.DiffNote, Text: `\ No newline at end of file`},
	}
	assert.Equal(t, want, got)
}

func TestDiffExcerpt(t *testing.T) {
	d := strings.TrimSuffix(strings.Repeat("+x\n", 100), "\n")
	assert.Equal(t, "+x\n+x\n… 98 more lines", connectors.DiffExcerpt(d, 2, 1000))
	assert.Equal(t, d, connectors.DiffExcerpt(d, 100, 1000))
	assert.Equal(t, "+x\n+x\n+x\n… 97 more lines", connectors.DiffExcerpt(d, 50, 10))
}

// FuzzParseDiff reads any text as a diff: it never panics, keeps every
// line, and numbers no line below zero.
func FuzzParseDiff(f *testing.F) {
	f.Add("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c")
	f.Add("@@ -x,y +,- @@\n+")
	f.Add("@@ \n@@ -99999999999999999999 +1 @@\n-a")
	f.Fuzz(func(t *testing.T, d string) {
		lines := connectors.ParseDiff(d)
		if len(lines) != len(strings.Split(strings.TrimRight(d, "\n"), "\n")) {
			t.Fatalf("%d lines from %q", len(lines), d)
		}
		for _, l := range lines {
			if l.Old < 0 || l.New < 0 {
				t.Fatalf("negative line number in %+v", l)
			}
		}
		if ex := connectors.DiffExcerpt(d, 5, 100); utf8.ValidString(d) && !utf8.ValidString(ex) {
			t.Fatalf("excerpt of valid text is not UTF-8: %q", ex)
		}
	})
}
