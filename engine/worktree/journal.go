package worktree

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// mergeJournal is what Merge writes beside the worktrees before it changes
// the main checkout, and removes when git is done: a crash in between
// (SIGKILL, the OOM killer, docker stop during a slow hook) leaves it
// behind, and the next Recover, Merge or Status finds what the merge left.
type mergeJournal struct {
	Chat   string `json:"chat"`
	Branch string `json:"branch"`
	Base   string `json:"base"`
	// Head is the base branch's commit before the merge, Tip the branch's
	// commit being merged, Tree the tree the merge makes.
	Head, Tip, Tree string
	// Clean: the main checkout had no uncommitted changes to tracked files
	// (Merge refuses otherwise, so anything staged later is the merge's).
	Clean   bool      `json:"clean"`
	Started time.Time `json:"started"`
	// PID is the merging leashd's process, GitPID its git merge's once
	// started.
	PID    int `json:"pid"`
	GitPID int `json:"git_pid,omitempty"`
}

// journalPath is where the journal of this repository's merge lives.
func (m *Manager) journalPath() string { return m.root + ".merge.json" }

func (m *Manager) writeJournal(j mergeJournal) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(m.root), 0o755); err != nil {
		return fmt.Errorf("the merge journal: %w", err)
	}
	tmp := m.journalPath() + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("the merge journal: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, m.journalPath())
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("the merge journal: %w", err)
	}
	return nil
}

func (m *Manager) clearJournal() error {
	if err := os.Remove(m.journalPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the merge journal: %w", err)
	}
	return nil
}

// Outcome is what Recover found an interrupted merge had left, and did.
type Outcome string

// Outcomes of Recover.
const (
	// MergeNotStarted: the merge had changed nothing yet.
	MergeNotStarted Outcome = "not started"
	// MergeUndone: the merge had written the branch's files into the main
	// checkout (staged) without committing; they were taken out again.
	MergeUndone Outcome = "undone"
	// MergeFinished: the merge commit had been made.
	MergeFinished Outcome = "finished"
	// MergeRunning: the git merge leashd started still runs (only leashd
	// was killed), or another leashd process is merging: it is left to
	// finish; asked again, Recover says how it ended.
	MergeRunning Outcome = "still running"
	// MergeLeft: the main checkout is not as the merge would have left it
	// (changed since, or on another branch): nothing was touched; Files
	// lists what is uncommitted there.
	MergeLeft Outcome = "left as found"
)

// Interrupted is a merge that leashd did not see to its end, and what
// Recover did about it.
type Interrupted struct {
	Chat, Branch, Base string
	Started            time.Time
	Outcome            Outcome
	// Head is the main checkout's commit now (after Recover).
	Head string
	// Files: with MergeUndone, those the merge had changed; with MergeLeft,
	// those uncommitted in the main checkout.
	Files []string
	// Why says, with MergeLeft, what did not match.
	Why string
}

// Recover looks for a merge that an earlier run started and did not see
// to its end (it was killed while git merged), undoes what that merge had
// left half done in the main checkout when that is exactly the merge's
// work, and says what it found; nil when there is none. It is reported
// once: the journal is removed.
func (m *Manager) Recover(ctx context.Context) (*Interrupted, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.recoverLocked(ctx)
}

func (m *Manager) recoverLocked(ctx context.Context) (*Interrupted, error) {
	b, err := os.ReadFile(m.journalPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the merge journal: %w", err)
	}
	var j mergeJournal
	if err := json.Unmarshal(b, &j); err != nil || j.Head == "" {
		// Unreadable: say so once rather than every time.
		_ = m.clearJournal()
		return nil, fmt.Errorf("the merge journal %s is unreadable, so an interrupted /merge may have left changes in the main checkout %s: check git status there", m.journalPath(), m.repo)
	}
	in := &Interrupted{Chat: j.Chat, Branch: j.Branch, Base: j.Base, Started: j.Started}
	if j.GitPID > 0 && runs(j.GitPID, "git") || j.PID != os.Getpid() && runs(j.PID, ownName()) {
		// Its git still runs (only leashd was killed), or another leashd
		// (leashd chat beside leashd serve) is merging.
		in.Outcome, in.Head = MergeRunning, m.revParse(ctx, "HEAD")
		return in, nil // the journal stays until it ends
	}
	if err := m.settle(ctx, j, in); err != nil {
		return nil, err
	}
	if err := m.clearJournal(); err != nil {
		return nil, err
	}
	return in, nil
}

// settle finds what the merge of j left and undoes it when it is exactly
// the merge's, filling in.
func (m *Manager) settle(ctx context.Context, j mergeJournal, in *Interrupted) error {
	head := m.revParse(ctx, "HEAD")
	in.Head = head
	cur, _ := m.currentBranch(ctx)
	status, err := m.run(ctx, m.repo, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return err
	}
	dirty := porcelainFiles(status)
	switch {
	case cur != j.Base:
		in.Outcome, in.Files = MergeLeft, dirty
		in.Why = fmt.Sprintf("the main checkout is on %s now, not on %s", orDetached(cur), j.Base)
		return nil
	case head != j.Head:
		if head == j.Tip || m.revParse(ctx, "HEAD^1") == j.Head && m.revParse(ctx, "HEAD^2") == j.Tip {
			in.Outcome = MergeFinished
			return nil
		}
		in.Outcome, in.Files = MergeLeft, dirty
		in.Why = fmt.Sprintf("%s has moved on since (to %s)", j.Base, short(head))
		return nil
	case len(dirty) == 0:
		in.Outcome = MergeNotStarted
		return nil
	}
	// The base has not moved and things are staged: are they exactly the
	// merge's? Then the main checkout was clean before and nothing else
	// changed it since.
	index, err := m.run(ctx, m.repo, "write-tree")
	if err != nil || strings.TrimSpace(index) != j.Tree || !j.Clean {
		in.Outcome, in.Files = MergeLeft, dirty
		in.Why = "its uncommitted changes are not exactly the merge's"
		return nil
	}
	// reset --merge puts the index and the files it changed back, and
	// refuses rather than lose a change made to a file since.
	if _, err := m.run(ctx, m.repo, "reset", "--merge", j.Head); err != nil {
		in.Outcome, in.Files = MergeLeft, dirty
		in.Why = "undoing it would lose a change made since (" + err.Error() + ")"
		return nil
	}
	in.Outcome, in.Files = MergeUndone, dirty
	return nil
}

// revParse is the commit rev names, or "".
func (m *Manager) revParse(ctx context.Context, rev string) string {
	out, err := m.run(ctx, m.repo, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

func orDetached(branch string) string {
	if branch == "" {
		return "a detached HEAD"
	}
	return branch
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// runs reports whether the process pid runs the program name (and is not
// a zombie waiting to be reaped).
func runs(pid int, name string) bool {
	if pid <= 0 || name == "" {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err == nil {
		// pid (comm) state …
		stat := string(b)
		open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
		if open < 0 || end < open || end+2 >= len(stat) {
			return false
		}
		state := stat[end+2]
		return stat[open+1:end] == name && state != 'Z' && state != 'X'
	}
	if _, err := os.Stat("/proc/self"); err == nil {
		return false // procfs, and no such process
	}
	return syscall.Kill(pid, 0) == nil
}

// ownName is this program's name as the kernel has it ("" when unknown).
func ownName() string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
