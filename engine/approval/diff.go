package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Bounds of a tool call's diff: a file larger than maxDiffFile is not read
// (the change is shown against the edit's own text), and the diff shown
// keeps at most maxDiffLines lines, saying how many more there are.
const (
	maxDiffFile  = 512 << 10
	maxDiffLines = 400
	diffContext  = 3
)

// ToolDiff is the unified diff of the change a file tool call would make
// (Edit, MultiEdit, Write over an existing file, NotebookEdit), computed
// against the file's current content in workDir so that its line numbers
// are the file's own; "" for other tools, for a Write that creates a file
// and for a change that changes nothing. A file outside workDir, behind a
// symbolic link, not regular or over maxDiffFile is never read: the diff
// is then that of the edit's own old and new text.
func ToolDiff(workDir, tool string, input json.RawMessage) string {
	var in struct {
		FilePath     string     `json:"file_path"`
		NotebookPath string     `json:"notebook_path"`
		Content      *string    `json:"content"`
		OldString    string     `json:"old_string"`
		NewString    string     `json:"new_string"`
		ReplaceAll   bool       `json:"replace_all"`
		Edits        []editJSON `json:"edits"`
		CellID       string     `json:"cell_id"`
		NewSource    string     `json:"new_source"`
		EditMode     string     `json:"edit_mode"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	switch tool {
	case "Edit":
		return editsDiff(workDir, in.FilePath, []editJSON{{in.OldString, in.NewString, in.ReplaceAll}})
	case "MultiEdit":
		return editsDiff(workDir, in.FilePath, in.Edits)
	case "Write":
		if in.Content == nil {
			return ""
		}
		old, name, err := readInWorkDir(workDir, in.FilePath)
		if err != nil {
			return "" // a new file (or one leashd may not read): the summary shows its content
		}
		return unified(name, old, *in.Content)
	case "NotebookEdit":
		return notebookDiff(workDir, in.NotebookPath, in.CellID, in.NewSource, in.EditMode)
	}
	return ""
}

type editJSON struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// editsDiff applies edits to the file's content in order, as the tool
// would, and diffs the result; when the file cannot be read or an edit's
// old text is not in it, each edit's own old and new text is diffed.
func editsDiff(workDir, path string, edits []editJSON) string {
	if len(edits) == 0 {
		return ""
	}
	old, name, err := readInWorkDir(workDir, path)
	if err == nil {
		cur, ok := old, true
		for _, e := range edits {
			if e.OldString == "" || !strings.Contains(cur, e.OldString) {
				ok = false
				break
			}
			if e.ReplaceAll {
				cur = strings.ReplaceAll(cur, e.OldString, e.NewString)
			} else {
				cur = strings.Replace(cur, e.OldString, e.NewString, 1)
			}
		}
		if ok {
			return unified(name, old, cur)
		}
	}
	var parts []string
	for _, e := range edits {
		if d := rawDiff(displayName(workDir, path), fragment(e.OldString), fragment(e.NewString)); d != "" {
			if len(parts) > 0 { // one header is enough
				d = strings.Join(strings.SplitN(d, "\n", 3)[2:], "")
			}
			parts = append(parts, d)
		}
	}
	return clip(strings.Join(parts, "\n"))
}

// notebookDiff diffs a notebook cell's source: the cell as it is (found
// by its ID, or "cell-N" for the N-th) against the new source.
func notebookDiff(workDir, path, cellID, source, mode string) string {
	old := ""
	if raw, name, err := readInWorkDir(workDir, path); err == nil && mode != "insert" {
		var nb struct {
			Cells []struct {
				ID     string          `json:"id"`
				Source json.RawMessage `json:"source"`
			} `json:"cells"`
		}
		if json.Unmarshal([]byte(raw), &nb) == nil {
			for i, c := range nb.Cells {
				if c.ID == cellID || fmt.Sprintf("cell-%d", i) == cellID {
					old = cellSource(c.Source)
					break
				}
			}
		}
		path = name
	} else {
		path = displayName(workDir, path)
	}
	if mode == "delete" {
		source = ""
	}
	return unified(path+" (cell "+cellID+")", fragment(old), fragment(source))
}

// cellSource is a notebook cell's source, given as a string or a list of
// lines.
func cellSource(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var lines []string
	_ = json.Unmarshal(raw, &lines)
	return strings.Join(lines, "")
}

// unified is the unified diff of a into b, named name, clipped; "" when
// they do not differ.
func unified(name, a, b string) string { return clip(rawDiff(name, a, b)) }

// rawDiff is the unified diff of a into b, named name (a relative name as
// a/name and b/name, as git shows it); "" when they do not differ.
func rawDiff(name, a, b string) string {
	if a == b {
		return ""
	}
	from, to := name, name
	if !filepath.IsAbs(name) {
		from, to = "a/"+name, "b/"+name
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: splitLines(a), B: splitLines(b), FromFile: from, ToFile: to, Context: diffContext,
	})
	if err != nil {
		return ""
	}
	return strings.TrimRight(d, "\n")
}

// fragment is an edit's text as whole lines: an edit's old and new text
// are parts of a file, so a missing final newline means nothing.
func fragment(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// splitLines splits s into lines that each end with a newline, the last
// marked when the text has none, as diff(1) does.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += "\n\\ No newline at end of file\n"
	return lines
}

// clip keeps at most maxDiffLines lines of a diff, saying how many more
// there are.
func clip(d string) string {
	lines := strings.Split(d, "\n")
	if len(lines) <= maxDiffLines {
		return d
	}
	return strings.Join(lines[:maxDiffLines], "\n") + fmt.Sprintf("\n… %d more lines", len(lines)-maxDiffLines)
}

// displayName is path as the diff names it: relative to workDir when
// inside it.
func displayName(workDir, path string) string {
	if rel, ok := relInside(workDir, path); ok {
		return rel
	}
	return filepath.Clean(path)
}

// relInside is path relative to workDir (a relative path is taken from
// workDir), and whether it lies inside it.
func relInside(workDir, path string) (string, bool) {
	if workDir == "" || path == "" {
		return "", false
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(workDir, path)
	}
	rel, err := filepath.Rel(filepath.Clean(workDir), filepath.Clean(path))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

var errNotReadable = errors.New("not a regular file inside the working directory")

// readInWorkDir reads a regular file inside workDir that is no symbolic
// link and at most maxDiffFile bytes, returning its content and its path
// relative to workDir. The read stays inside workDir (os.Root) even when
// a directory on the way is swapped for a link meanwhile.
func readInWorkDir(workDir, path string) (content, rel string, err error) {
	rel, ok := relInside(workDir, path)
	if !ok {
		return "", "", errNotReadable
	}
	root, err := os.OpenRoot(workDir)
	if err != nil {
		return "", "", err
	}
	defer root.Close()
	st, err := root.Lstat(rel)
	if err != nil {
		return "", "", err
	}
	if !st.Mode().IsRegular() || st.Size() > maxDiffFile {
		return "", "", errNotReadable
	}
	f, err := root.OpenFile(rel, os.O_RDONLY, 0)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		return "", "", errNotReadable // swapped since it was looked at
	}
	b, err := io.ReadAll(io.LimitReader(f, maxDiffFile+1))
	if err != nil || len(b) > maxDiffFile {
		return "", "", errors.Join(err, fs.ErrInvalid)
	}
	return string(b), rel, nil
}
