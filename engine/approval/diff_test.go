package approval_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/approval"
)

func js(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// An Edit's diff is taken against the file as it is: the hunk carries the
// file's own line numbers and its neighbouring lines.
func TestToolDiffEditUsesTheFilesLines(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		b.WriteString("line " + string(rune('a'+i-1)) + "\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte(b.String()), 0o644))
	d := approval.ToolDiff(dir, "Edit", js(t, map[string]any{"file_path": filepath.Join(dir, "f.txt"), "old_string": "line j\n", "new_string": "line J\nline J2\n"}))
	assert.Equal(t, `--- a/f.txt
+++ b/f.txt
@@ -7,7 +7,8 @@
 line g
 line h
 line i
-line j
+line J
+line J2
 line k
 line l
 line m`, d)
}

func TestToolDiffMultiEditAndWrite(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nvar x = 1\nvar y = 2\n"), 0o644))
	d := approval.ToolDiff(dir, "MultiEdit", js(t, map[string]any{"file_path": "a.go", "edits": []map[string]any{
		{"old_string": "x = 1", "new_string": "x = 10"}, {"old_string": "y = 2", "new_string": "y = 20"}}}))
	assert.Contains(t, d, "@@ -1,4 +1,4 @@\n package a\n \n-var x = 1\n-var y = 2\n+var x = 10\n+var y = 20")

	d = approval.ToolDiff(dir, "Write", js(t, map[string]any{"file_path": filepath.Join(dir, "a.go"), "content": "package a\n"}))
	assert.Equal(t, "--- a/a.go\n+++ b/a.go\n@@ -1,4 +1 @@\n package a\n-\n-var x = 1\n-var y = 2", d)

	assert.Empty(t, approval.ToolDiff(dir, "Write", js(t, map[string]any{"file_path": filepath.Join(dir, "new.go"), "content": "package a\n"})),
		"a new file has no diff: its content is the summary")
	assert.Empty(t, approval.ToolDiff(dir, "Bash", js(t, map[string]any{"command": "ls"})))
}

// Nothing outside the working directory or behind a symbolic link is
// read: the diff is the edit's own text, and a Write shows none.
func TestToolDiffReadsOnlyInsideTheWorkDir(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("TOP SECRET\nold\n"), 0o644))
	dir := t.TempDir()
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "link.txt")))

	for _, path := range []string{secret, filepath.Join(dir, "link.txt"), filepath.Join(dir, "..", filepath.Base(outside), "secret.txt")} {
		d := approval.ToolDiff(dir, "Edit", js(t, map[string]any{"file_path": path, "old_string": "old", "new_string": "new"}))
		assert.NotContains(t, d, "SECRET", path)
		assert.Contains(t, d, "-old\n+new", path)
		assert.Empty(t, approval.ToolDiff(dir, "Write", js(t, map[string]any{"file_path": path, "content": "x"})), path)
	}
}

func TestToolDiffNotebookAndBounds(t *testing.T) {
	dir := t.TempDir()
	nb := `{"cells":[{"id":"c1","cell_type":"code","source":["print(1)\n","print(2)\n"]}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "n.ipynb"), []byte(nb), 0o644))
	d := approval.ToolDiff(dir, "NotebookEdit", js(t, map[string]any{"notebook_path": "n.ipynb", "cell_id": "c1", "new_source": "print(1)\nprint(3)\n"}))
	assert.Contains(t, d, "--- a/n.ipynb (cell c1)")
	assert.Contains(t, d, " print(1)\n-print(2)\n+print(3)")

	long := strings.Repeat("x\n", 1000)
	d = approval.ToolDiff(dir, "Edit", js(t, map[string]any{"file_path": "none.txt", "old_string": "", "new_string": long}))
	assert.True(t, strings.HasSuffix(d, "… 603 more lines"), d[len(d)-40:])
	assert.Len(t, strings.Split(d, "\n"), 401)
}

// FuzzToolDiff diffs any tool input against a small working directory:
// it never panics, gives valid UTF-8 for valid input, and never more
// than its bound of lines.
func FuzzToolDiff(f *testing.F) {
	f.Add("Edit", []byte(`{"file_path":"f.txt","old_string":"b\n","new_string":"B\n"}`))
	f.Add("MultiEdit", []byte(`{"file_path":"f.txt","edits":[{"old_string":"a","new_string":"A","replace_all":true},{"old_string":"","new_string":"x"}]}`))
	f.Add("Write", []byte(`{"file_path":"f.txt","content":"a\nb"}`))
	f.Add("NotebookEdit", []byte(`{"notebook_path":"n.ipynb","cell_id":"cell-0","new_source":"x","edit_mode":"delete"}`))
	f.Add("Edit", []byte(`{"file_path":"../../etc/passwd","old_string":"root","new_string":"x"}`))
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("a\nb\nc\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "n.ipynb"), []byte(`{"cells":[{"id":"c","source":"p\n"}]}`), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, tool string, input []byte) {
		d := approval.ToolDiff(dir, tool, input)
		if n := strings.Count(d, "\n"); n > 401 {
			t.Fatalf("%d lines", n)
		}
		if utf8.Valid(input) && !utf8.ValidString(d) {
			t.Fatalf("diff of valid input is not UTF-8: %q", d)
		}
	})
}
