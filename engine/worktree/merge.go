package worktree

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrDirty is returned by Merge when the main checkout has uncommitted
// changes; nothing was changed.
var ErrDirty = errors.New("the main checkout has uncommitted changes")

// ErrConflict is returned by Merge when the branch does not merge cleanly
// into the base; nothing was changed.
var ErrConflict = errors.New("the branch conflicts with the base branch")

// MergeError says which files stopped a merge.
type MergeError struct {
	Err   error    // ErrDirty or ErrConflict
	Files []string // the uncommitted or conflicting files
	Repo  string
}

func (e *MergeError) Error() string {
	return fmt.Sprintf("%v (%s): %s", e.Err, e.Repo, strings.Join(e.Files, ", "))
}

func (e *MergeError) Unwrap() error { return e.Err }

// MergeResult says what Merge did.
type MergeResult struct {
	Tree
	Committed bool   // the worktree's changes were committed first
	Merged    bool   // false: the base already had everything
	Commit    string // the base branch's new HEAD
}

// Merge commits the worktree's changes (with message) and merges its branch
// into the base branch in the main checkout. It changes nothing in the main
// checkout when that has uncommitted changes or is not on the base branch
// (a *MergeError wrapping ErrDirty, or an error), or when the branch
// conflicts with the base (a *MergeError wrapping ErrConflict naming the
// files). The commit in the worktree is kept either way.
func (m *Manager) Merge(ctx context.Context, chatID, message string) (MergeResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok, err := m.Lookup(ctx, chatID)
	if err != nil {
		return MergeResult{}, err
	}
	if !ok {
		return MergeResult{}, ErrNoWorktree
	}
	res := MergeResult{Tree: t}
	if res.Committed, err = m.commit(ctx, t, message); err != nil {
		return res, err
	}
	cur, err := m.currentBranch(ctx)
	if err != nil {
		return res, err
	}
	if cur != t.Base {
		return res, fmt.Errorf("the main checkout %s is on branch %s, not on %s, the branch this worktree merges into: check out %s there first", m.repo, cur, t.Base, t.Base)
	}
	out, err := m.run(ctx, m.repo, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return res, err
	}
	if dirty := porcelainFiles(out); len(dirty) > 0 {
		return res, &MergeError{Err: ErrDirty, Files: dirty, Repo: m.repo}
	}
	// Is there anything to merge?
	if _, err := m.run(ctx, m.repo, "merge-base", "--is-ancestor", "refs/heads/"+t.Branch, "refs/heads/"+t.Base); err == nil {
		return res, nil
	}
	// Would it merge cleanly? merge-tree works on commits only and leaves
	// the checkout alone.
	out, err = m.run(ctx, m.repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", "refs/heads/"+t.Base, "refs/heads/"+t.Branch)
	if err != nil {
		if exitCode(err) == 1 {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			files := lines[1:]
			sort.Strings(files)
			return res, &MergeError{Err: ErrConflict, Files: files, Repo: m.repo}
		}
		return res, err
	}
	msg := fmt.Sprintf("Merge %s (leashd chat %s)", t.Branch, t.Chat)
	if _, err := m.run(ctx, m.repo, "merge", "--no-edit", "-m", msg, "refs/heads/"+t.Branch); err != nil {
		// Should a file have changed since the checks, leave no half merge.
		_, _ = m.run(ctx, m.repo, "merge", "--abort")
		return res, fmt.Errorf("merging %s into %s: %w", t.Branch, t.Base, err)
	}
	res.Merged = true
	head, err := m.run(ctx, m.repo, "rev-parse", "HEAD")
	if err != nil {
		return res, err
	}
	res.Commit = strings.TrimSpace(head)
	return res, nil
}

// commit commits everything in the worktree; false when nothing changed.
func (m *Manager) commit(ctx context.Context, t Tree, message string) (bool, error) {
	if _, err := m.run(ctx, t.Path, "add", "--all"); err != nil {
		return false, err
	}
	if _, err := m.run(ctx, t.Path, "diff", "--cached", "--quiet"); err == nil {
		return false, nil
	} else if exitCode(err) != 1 {
		return false, err
	}
	message = strings.TrimSpace(message)
	if message == "" {
		message = "Changes from leashd chat " + t.Chat
	}
	if _, err := m.run(ctx, t.Path, "commit", "--quiet", "-m", message); err != nil {
		return false, fmt.Errorf("committing in %s: %w", t.Path, err)
	}
	return true, nil
}

// porcelainFiles are the paths of `git status --porcelain` output.
func porcelainFiles(out string) []string {
	var files []string
	for line := range strings.SplitSeq(out, "\n") {
		if len(line) > 3 {
			files = append(files, line[3:])
		}
	}
	return files
}
