package worktree

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// untrackedInTheWay are the paths in the main checkout that the merge
// making tree would write over although git does not track them there:
// a file (or directory) where the merge adds a file, or a file where it
// needs a directory. git refuses to overwrite the untracked ones itself,
// but by default replaces ignored ones (a person's .env) without a word,
// and a branch can stop ignoring a file by editing .gitignore.
func (m *Manager) untrackedInTheWay(ctx context.Context, tree string) ([]string, error) {
	out, err := m.run(ctx, m.repo, "diff-tree", "-r", "-z", "--no-renames", "--name-status", "HEAD", tree)
	if err != nil {
		return nil, err
	}
	fields := strings.Split(out, "\x00")
	var added []string
	deleted := map[string]bool{}
	for i := 0; i+1 < len(fields); i += 2 {
		switch fields[i] {
		case "A":
			added = append(added, fields[i+1])
		case "D":
			deleted[fields[i+1]] = true
		}
	}
	seen := map[string]bool{}
	var in []string
	for _, p := range added {
		if q, ok := m.inTheWay(p, deleted); ok && !seen[q] {
			seen[q] = true
			in = append(in, q)
		}
	}
	sort.Strings(in)
	return in, nil
}

// inTheWay reports what in the main checkout stands where the merge adds
// the file p: p itself, or a file where one of p's directories goes.
// deleted are the paths the merge removes (tracked, so git replaces them).
func (m *Manager) inTheWay(p string, deleted map[string]bool) (string, bool) {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		q := strings.Join(parts[:i], "/")
		fi, err := os.Lstat(filepath.Join(m.repo, filepath.FromSlash(q)))
		switch {
		case os.IsNotExist(err):
			return "", false // nothing there, nor below
		case err != nil:
			return q, true // cannot tell: refuse
		case !fi.IsDir():
			return q, !deleted[q]
		}
	}
	fi, err := os.Lstat(filepath.Join(m.repo, filepath.FromSlash(p)))
	switch {
	case os.IsNotExist(err):
		return "", false
	case err == nil && fi.IsDir():
		// A directory where the branch puts a file: git replaces it only
		// when the merge removes the tracked files in it, and refuses
		// when untracked ones remain.
		for d := range deleted {
			if strings.HasPrefix(d, p+"/") {
				return "", false
			}
		}
	}
	return p, true
}

// ignored are those of paths that git ignores in the main checkout.
func (m *Manager) ignored(ctx context.Context, paths []string) []string {
	var ign []string
	for _, p := range paths {
		if _, err := m.run(ctx, m.repo, "check-ignore", "-q", "--", p); err == nil {
			ign = append(ign, p)
		}
	}
	return ign
}
