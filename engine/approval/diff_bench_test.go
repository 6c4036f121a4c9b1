package approval_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leashd/leashd/engine/approval"
)

// BenchmarkToolDiff is the cost of an Edit approval's diff in a large
// file (about 500 KiB, the most read): read, apply, diff.
func BenchmarkToolDiff(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	for i := 0; sb.Len() < 500<<10; i++ {
		fmt.Fprintf(&sb, "line %d of a long generated file\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"file_path": "big.txt", "old_string": "line 7000 of", "new_string": "LINE 7000 OF"})
	b.ReportAllocs()
	for b.Loop() {
		if approval.ToolDiff(dir, "Edit", in) == "" {
			b.Fatal("no diff")
		}
	}
}

// BenchmarkToolDiffRewrite is the worst case: a Write that replaces a
// large file with entirely different lines.
func BenchmarkToolDiffRewrite(b *testing.B) {
	dir := b.TempDir()
	var old, nw strings.Builder
	for i := 0; old.Len() < 500<<10; i++ {
		fmt.Fprintf(&old, "old line %d of a long generated file\n", i)
		fmt.Fprintf(&nw, "new line %d, nothing alike\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(old.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"file_path": "big.txt", "content": nw.String()})
	b.ReportAllocs()
	for b.Loop() {
		if approval.ToolDiff(dir, "Write", in) == "" {
			b.Fatal("no diff")
		}
	}
}
