package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// ErrDirty is returned by Merge when the main checkout has uncommitted
// changes; nothing was changed.
var ErrDirty = errors.New("the main checkout has uncommitted changes")

// ErrConflict is returned by Merge when the branch does not merge cleanly
// into the base; nothing was changed.
var ErrConflict = errors.New("the branch conflicts with the base branch")

// ErrUntracked is returned by Merge when the merge would write over files
// in the main checkout that git does not track there, ignored ones (.env)
// included; nothing was changed. git itself refuses to overwrite untracked
// files but, by default, silently replaces ignored ones.
var ErrUntracked = errors.New("the merge would write over files git does not track in the main checkout")

// MergeError says which files stopped a merge.
type MergeError struct {
	Err   error    // ErrDirty, ErrConflict or ErrUntracked
	Files []string // the uncommitted, conflicting or untracked files
	// Ignored are those of Files that git ignores (with ErrUntracked).
	Ignored []string
	Repo    string
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
	// Recovered is an earlier merge of this repository that leashd did not
	// see to its end, found (and undone when half done) before this one.
	Recovered *Interrupted
}

// Merge commits the worktree's changes (with message) and merges its branch
// into the base branch in the main checkout. It changes nothing in the main
// checkout when that has uncommitted changes or is not on the base branch
// (a *MergeError wrapping ErrDirty, or an error), when the branch
// conflicts with the base (a *MergeError wrapping ErrConflict naming the
// files), or when the merge would write over files git does not track
// there, ignored ones included (a *MergeError wrapping ErrUntracked). The
// commit in the worktree is kept either way.
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
	if res.Recovered, err = m.recoverLocked(ctx); err != nil {
		return res, err
	}
	if r := res.Recovered; r != nil && r.Outcome == MergeRunning {
		return res, fmt.Errorf("the merge of %s that leashd started before it restarted still runs in %s: wait for it to end", r.Branch, m.repo)
	}
	if res.Committed, err = m.commit(ctx, t, message); err != nil {
		return res, err
	}
	tip := m.revParse(ctx, "refs/heads/"+t.Branch)
	tree, err := m.mergeable(ctx, t, tip)
	if err != nil || tree == "" {
		return res, err
	}
	// Journaled first: killed while git merges (a slow hook, the OOM
	// killer), the next start finds the half merge (Recover).
	j := mergeJournal{Chat: t.Chat, Branch: t.Branch, Base: t.Base, Head: m.revParse(ctx, "HEAD"),
		Tip: tip, Tree: tree, Clean: true, Started: time.Now().UTC(), PID: os.Getpid()}
	if err := m.writeJournal(j); err != nil {
		return res, err
	}
	// The journal names git's process: a restart while it still runs
	// (only leashd was killed) leaves it to finish.
	started := func(pid int) {
		j.GitPID = pid
		_ = m.writeJournal(j)
	}
	msg := fmt.Sprintf("Merge %s (leashd chat %s)", t.Branch, t.Chat)
	// The commit journaled, checked by merge-tree, is what is merged.
	// --no-overwrite-ignore: should an ignored file have appeared since
	// the check, git refuses instead of replacing it.
	_, err = m.runStarted(ctx, m.repo, nil, started, "merge", "--no-overwrite-ignore", "--no-edit", "-m", msg, j.Tip)
	if err != nil {
		err = m.afterFailedMerge(context.WithoutCancel(ctx), j, err)
	}
	if cerr := m.clearJournal(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	res.Merged = true
	head, err := m.run(ctx, m.repo, "rev-parse", "HEAD")
	if err != nil {
		return res, err
	}
	res.Commit = strings.TrimSpace(head)
	return res, nil
}

// mergeable checks that t's branch, at commit tip, can be merged into the
// main checkout without losing anything there, and returns the tree the
// merge makes ("": the base has everything already).
func (m *Manager) mergeable(ctx context.Context, t Tree, tip string) (string, error) {
	if tip == "" {
		return "", fmt.Errorf("the branch %s has no commit", t.Branch)
	}
	cur, err := m.currentBranch(ctx)
	if err != nil {
		return "", err
	}
	if cur != t.Base {
		return "", fmt.Errorf("the main checkout %s is on branch %s, not on %s, the branch this worktree merges into: check out %s there first", m.repo, cur, t.Base, t.Base)
	}
	out, err := m.run(ctx, m.repo, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return "", err
	}
	if dirty := porcelainFiles(out); len(dirty) > 0 {
		return "", &MergeError{Err: ErrDirty, Files: dirty, Repo: m.repo}
	}
	// Is there anything to merge?
	if _, err := m.run(ctx, m.repo, "merge-base", "--is-ancestor", tip, "refs/heads/"+t.Base); err == nil {
		return "", nil
	}
	// Would it merge cleanly? merge-tree works on commits only and leaves
	// the checkout alone.
	out, err = m.run(ctx, m.repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", "refs/heads/"+t.Base, tip)
	if err != nil {
		if exitCode(err) == 1 {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			files := lines[1:]
			sort.Strings(files)
			return "", &MergeError{Err: ErrConflict, Files: files, Repo: m.repo}
		}
		return "", err
	}
	tree := strings.TrimSpace(out)
	inTheWay, err := m.untrackedInTheWay(ctx, tree)
	if err != nil {
		return "", err
	}
	if len(inTheWay) > 0 {
		return "", &MergeError{Err: ErrUntracked, Files: inTheWay, Ignored: m.ignored(ctx, inTheWay), Repo: m.repo}
	}
	return tree, nil
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

// afterFailedMerge leaves no half merge behind a git merge that failed: a
// merge in progress is aborted, and what git left when it was killed (by
// the timeout, during a slow hook) is undone as after a crash. nil when
// the merge was made after all.
func (m *Manager) afterFailedMerge(ctx context.Context, j mergeJournal, err error) error {
	_, _ = m.run(ctx, m.repo, "merge", "--abort")
	err = fmt.Errorf("merging %s into %s: %w", j.Branch, j.Base, err)
	var in Interrupted
	if serr := m.settle(ctx, j, &in); serr != nil {
		return fmt.Errorf("%w; then %w", err, serr)
	}
	switch in.Outcome {
	case MergeFinished:
		return nil
	case MergeLeft:
		return fmt.Errorf("%w; the main checkout %s is left as it is (%s), with uncommitted changes in %s", err, m.repo, in.Why, strings.Join(in.Files, ", "))
	}
	return err
}
