package engine

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSafeName: whatever name a chat app hands over, the saved name is one
// path element inside the inbox folder — no separator, not . or .., not
// hidden, valid UTF-8, bounded — and never empty.
func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"report.pdf", "../../etc/passwd", `..\..\win.ini`, ".bashrc", "", "...", "a/b/c.txt",
		"\x00evil", "名前.png", strings.Repeat("x", 300) + ".tar.gz", " spaced name .txt", "\xff\xfe.jpg", "CON"} {
		f.Add(s, "image/png")
	}
	f.Fuzz(func(t *testing.T, name, mediaType string) {
		got := safeName(name, 3, mediaType)
		switch {
		case got == "" || got == "." || got == "..":
			t.Fatalf("safeName(%q) = %q", name, got)
		case strings.ContainsAny(got, "/\\\x00"):
			t.Fatalf("safeName(%q) = %q holds a separator", name, got)
		case strings.HasPrefix(got, "."):
			t.Fatalf("safeName(%q) = %q is hidden", name, got)
		case !utf8.ValidString(got):
			t.Fatalf("safeName(%q) = %q is not UTF-8", name, got)
		case len(got) > maxNameBytes+16:
			t.Fatalf("safeName(%q) = %q is %d bytes", name, got, len(got))
		case path.Clean(path.Join("inbox", got)) != path.Join("inbox", got) || path.Dir(path.Join("inbox", got)) != "inbox":
			t.Fatalf("safeName(%q) = %q leaves the folder", name, got)
		}
	})
}

// TestSafeName keeps the names people recognise.
func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"Q3 report.pdf":    "Q3 report.pdf",
		"../../etc/passwd": "passwd",
		`C:\temp\log.txt`:  "log.txt",
		".env":             "env.png",
		"":                 "file-3.png",
		"a;rm -rf.sh":      "a_rm -rf.sh",
		"....":             "file-3.png",
	} {
		assert := safeName(in, 3, "image/png")
		if in == "../../etc/passwd" {
			want = "passwd.png" // no extension of its own: the media type's
		}
		if assert != want {
			t.Errorf("safeName(%q) = %q, want %q", in, assert, want)
		}
	}
}
