// Package worktree gives each chat its own git worktree of the repository
// leashd works in: a branch leashd/<chat-slug> checked out under leashd's
// state directory, created from the base branch's HEAD, merged back into the
// base branch in the main checkout on request, or discarded.
//
// It runs the real git binary (no shell) and keeps its own records in the
// repository's git config (branch.leashd/<slug>.leashdchat and
// .leashdbase), so worktrees survive restarts and vanish with their branch.
package worktree

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// BranchPrefix starts every branch leashd makes.
const BranchPrefix = "leashd/"

// ErrNotRepo is returned by New when the working directory is not inside a
// git repository.
var ErrNotRepo = errors.New("not inside a git repository")

// ErrNoWorktree is returned when a chat has no worktree (yet).
var ErrNoWorktree = errors.New("this chat has no worktree yet")

// Tree is one chat's worktree.
type Tree struct {
	Chat   string // the chat ID ("" when git's records lack it)
	Slug   string
	Path   string
	Branch string // leashd/<slug>
	Base   string // the branch it was created from and merges into
}

// Manager makes and tends the worktrees of one repository.
type Manager struct {
	git    string
	repo   string // the main checkout's top level
	root   string // where this repository's worktrees live
	author Identity
	// timeout bounds each git command.
	timeout time.Duration
	// mu serialises what changes the repository: git refuses concurrent
	// writers of its config and worktree records rather than wait.
	mu sync.Mutex
}

// Identity is who commits and merges.
type Identity struct{ Name, Email string }

// Option configures a Manager.
type Option func(*Manager)

// WithAuthor sets who the commits and merges are by (default leashd
// <leashd@localhost>).
func WithAuthor(id Identity) Option { return func(m *Manager) { m.author = id } }

// WithGit sets the git program (default "git" on PATH).
func WithGit(path string) Option { return func(m *Manager) { m.git = path } }

// DefaultAuthor is the identity used when none is configured.
var DefaultAuthor = Identity{Name: "leashd", Email: "leashd@localhost"}

// New returns the Manager for the repository containing workDir, keeping
// worktrees under stateDir/worktrees/<repo-id>. It fails with ErrNotRepo
// when workDir is not inside a git work tree.
func New(ctx context.Context, workDir, stateDir string, opts ...Option) (*Manager, error) {
	m := &Manager{git: "git", author: DefaultAuthor, timeout: 2 * time.Minute}
	for _, o := range opts {
		o(m)
	}
	if _, err := exec.LookPath(m.git); err != nil {
		return nil, fmt.Errorf("git is needed for worktrees: %w", err)
	}
	out, err := m.run(ctx, workDir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", workDir, ErrNotRepo)
	}
	top := strings.TrimSpace(out)
	// A linked worktree's top level is not the main checkout: find that.
	common, err := m.run(ctx, top, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return nil, err
	}
	if d := strings.TrimSpace(common); filepath.Base(d) == ".git" {
		top = filepath.Dir(d)
	}
	if top, err = filepath.EvalSymlinks(top); err != nil {
		return nil, fmt.Errorf("resolving %s: %w", top, err)
	}
	m.repo = top
	if _, err := m.run(ctx, top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return nil, fmt.Errorf("the git repository %s has no commit yet: worktrees start from the current branch's HEAD, so commit something first", top)
	}
	// git reports worktrees by their real path.
	dir, err := filepath.Abs(filepath.Join(stateDir, "worktrees"))
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(top, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("the state directory %s is inside the repository %s: the worktrees would sit in the main checkout; keep leashd's state (LEASHD_DB_PATH) outside the repository", stateDir, top)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making the worktree directory: %w", err)
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	sum := sha256.Sum256([]byte(top))
	m.root = filepath.Join(dir, Slug(filepath.Base(top))+"-"+hex.EncodeToString(sum[:4]))
	return m, nil
}

// Repo is the main checkout's directory.
func (m *Manager) Repo() string { return m.repo }

// Root is the directory holding this repository's worktrees.
func (m *Manager) Root() string { return m.root }

// gitError is a failed git command with what it printed.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return "git " + strings.Join(e.args, " ") + ": " + msg
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode is the exit code of a failed git command, or -1.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// run runs git in dir and returns its standard output.
func (m *Manager) run(ctx context.Context, dir string, args ...string) (string, error) {
	return m.runEnv(ctx, dir, nil, args...)
}

// runEnv is run with more environment variables.
func (m *Manager) runEnv(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return m.runStarted(ctx, dir, env, nil, args...)
}

// runStarted is runEnv that calls started with git's process ID once it
// runs.
func (m *Manager) runStarted(ctx context.Context, dir string, env []string, started func(pid int), args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.git, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...),
		"GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME="+m.author.Name, "GIT_AUTHOR_EMAIL="+m.author.Email,
		"GIT_COMMITTER_NAME="+m.author.Name, "GIT_COMMITTER_EMAIL="+m.author.Email,
		"LC_ALL=C",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Killed at the timeout, git may leave a hook behind holding its
	// output open: do not wait for that.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Start()
	if err == nil {
		if started != nil {
			started(cmd.Process.Pid)
		}
		err = cmd.Wait()
	}
	if err != nil {
		return stdout.String(), &gitError{args: args, stderr: stderr.String(), err: err}
	}
	return stdout.String(), nil
}

func (m *Manager) branchConfig(branch, key string) string {
	return "branch." + branch + "." + key
}

// config reads one git config value of the main repository ("" if unset).
func (m *Manager) config(ctx context.Context, key string) string {
	out, err := m.run(ctx, m.repo, "config", "--get", key)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

func (m *Manager) branchExists(ctx context.Context, branch string) bool {
	_, err := m.run(ctx, m.repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// currentBranch is the branch checked out in the main checkout.
func (m *Manager) currentBranch(ctx context.Context) (string, error) {
	out, err := m.run(ctx, m.repo, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return "", fmt.Errorf("the main checkout %s is not on a branch (detached HEAD): check out the branch worktrees should start from", m.repo)
	}
	return strings.TrimSpace(out), nil
}

// tree builds the Tree of a slug from git's records.
func (m *Manager) tree(ctx context.Context, slug string) Tree {
	b := BranchPrefix + slug
	return Tree{
		Chat:   m.config(ctx, m.branchConfig(b, "leashdchat")),
		Slug:   slug,
		Path:   filepath.Join(m.root, slug),
		Branch: b,
		Base:   m.config(ctx, m.branchConfig(b, "leashdbase")),
	}
}

// Lookup returns the chat's worktree; false when it has none.
func (m *Manager) Lookup(ctx context.Context, chatID string) (Tree, bool, error) {
	slug := Slug(chatID)
	t := m.tree(ctx, slug)
	if !m.branchExists(ctx, t.Branch) {
		return Tree{}, false, nil
	}
	if _, err := os.Stat(filepath.Join(t.Path, ".git")); err != nil {
		return Tree{}, false, nil
	}
	if t.Chat == "" {
		t.Chat = chatID
	}
	return t, true, nil
}

// Ensure returns the chat's worktree, creating it (and its branch, from the
// main checkout's current branch) when it does not exist yet.
func (m *Manager) Ensure(ctx context.Context, chatID string) (Tree, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok, err := m.Lookup(ctx, chatID); err != nil || ok {
		return t, err
	}
	slug := Slug(chatID)
	t := m.tree(ctx, slug)
	t.Chat = chatID
	// A worktree directory removed by hand leaves records behind.
	if _, err := m.run(ctx, m.repo, "worktree", "prune"); err != nil {
		return Tree{}, err
	}
	if err := os.MkdirAll(m.root, 0o755); err != nil {
		return Tree{}, fmt.Errorf("making the worktree directory: %w", err)
	}
	if m.branchExists(ctx, t.Branch) { // the branch outlived its worktree
		if t.Base == "" {
			base, err := m.currentBranch(ctx)
			if err != nil {
				return Tree{}, err
			}
			t.Base = base
		}
		if _, err := m.run(ctx, m.repo, "worktree", "add", t.Path, t.Branch); err != nil {
			return Tree{}, fmt.Errorf("creating the worktree of chat %s: %w", chatID, err)
		}
	} else {
		base, err := m.currentBranch(ctx)
		if err != nil {
			return Tree{}, err
		}
		t.Base = base
		if _, err := m.run(ctx, m.repo, "worktree", "add", "-b", t.Branch, t.Path, "refs/heads/"+base); err != nil {
			return Tree{}, fmt.Errorf("creating the worktree of chat %s: %w", chatID, err)
		}
	}
	for key, v := range map[string]string{"leashdchat": chatID, "leashdbase": t.Base} {
		if _, err := m.run(ctx, m.repo, "config", m.branchConfig(t.Branch, key), v); err != nil {
			return Tree{}, err
		}
	}
	return t, nil
}

// Status is a worktree's state against its base.
type Status struct {
	Tree
	// DiffStat is `git diff --stat` from where the branch left the base to
	// the worktree's files, uncommitted changes and new files included
	// ("" when nothing changed).
	DiffStat string
	// Recovered is a merge of this repository that leashd did not see to
	// its end, found (and undone when half done) on the way.
	Recovered *Interrupted
}

// Status reports the chat's worktree and what changed in it.
func (m *Manager) Status(ctx context.Context, chatID string) (Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok, err := m.Lookup(ctx, chatID)
	if err != nil {
		return Status{}, err
	}
	rec, err := m.recoverLocked(ctx)
	if err != nil {
		return Status{}, err
	}
	if !ok {
		return Status{Recovered: rec}, ErrNoWorktree
	}
	from, err := m.mergeBase(ctx, t)
	if err != nil {
		return Status{}, err
	}
	// New files count as changes: stage everything in a scratch copy of
	// the worktree's index and compare that, leaving the real index (what
	// the agent sees in git status) alone.
	idx, err := m.run(ctx, t.Path, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return Status{}, err
	}
	scratch, err := os.CreateTemp("", "leashd-index-")
	if err != nil {
		return Status{}, fmt.Errorf("a scratch index: %w", err)
	}
	defer os.Remove(scratch.Name())
	if b, err := os.ReadFile(strings.TrimSpace(idx)); err == nil {
		_, err = scratch.Write(b)
		if err != nil {
			scratch.Close()
			return Status{}, fmt.Errorf("a scratch index: %w", err)
		}
	}
	if err := scratch.Close(); err != nil {
		return Status{}, fmt.Errorf("a scratch index: %w", err)
	}
	env := []string{"GIT_INDEX_FILE=" + scratch.Name()}
	if _, err := m.runEnv(ctx, t.Path, env, "add", "--all"); err != nil {
		return Status{}, err
	}
	out, err := m.runEnv(ctx, t.Path, env, "diff", "--cached", "--stat", from)
	if err != nil {
		return Status{}, err
	}
	return Status{Tree: t, DiffStat: strings.TrimRight(out, "\n"), Recovered: rec}, nil
}

func (m *Manager) mergeBase(ctx context.Context, t Tree) (string, error) {
	out, err := m.run(ctx, t.Path, "merge-base", "refs/heads/"+t.Base, "HEAD")
	if err != nil {
		return "", fmt.Errorf("the base branch %s of %s: %w", t.Base, t.Branch, err)
	}
	return strings.TrimSpace(out), nil
}

// Discard removes the chat's worktree and its branch, changes and all.
func (m *Manager) Discard(ctx context.Context, chatID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.remove(ctx, Slug(chatID))
}

func (m *Manager) remove(ctx context.Context, slug string) error {
	t := m.tree(ctx, slug)
	if _, err := os.Stat(t.Path); err == nil {
		if _, err := m.run(ctx, m.repo, "worktree", "remove", "--force", "--force", t.Path); err != nil {
			return fmt.Errorf("removing the worktree %s: %w", t.Path, err)
		}
	}
	if _, err := m.run(ctx, m.repo, "worktree", "prune"); err != nil {
		return err
	}
	if m.branchExists(ctx, t.Branch) {
		if _, err := m.run(ctx, m.repo, "branch", "-D", t.Branch); err != nil {
			return fmt.Errorf("deleting the branch %s: %w", t.Branch, err)
		}
	}
	return nil
}

// List returns every worktree leashd made in this repository, by path.
func (m *Manager) List(ctx context.Context) ([]Tree, error) {
	out, err := m.run(ctx, m.repo, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	root := m.root + string(filepath.Separator)
	var trees []Tree
	for block := range strings.SplitSeq(out, "\n\n") {
		var path, branch string
		for line := range strings.SplitSeq(block, "\n") {
			if p, ok := strings.CutPrefix(line, "worktree "); ok {
				path = p
			}
			if b, ok := strings.CutPrefix(line, "branch refs/heads/"); ok {
				branch = b
			}
		}
		slug, ok := strings.CutPrefix(branch, BranchPrefix)
		if !ok || !strings.HasPrefix(path, root) || filepath.Base(path) != slug {
			continue
		}
		trees = append(trees, m.tree(ctx, slug))
	}
	sort.Slice(trees, func(i, j int) bool { return trees[i].Path < trees[j].Path })
	return trees, nil
}

// Orphans are the worktrees whose chat is not known: known reports whether
// a chat still has this worktree.
func (m *Manager) Orphans(ctx context.Context, known func(Tree) bool) ([]Tree, error) {
	all, err := m.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Tree
	for _, t := range all {
		if !known(t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Prune removes the orphaned worktrees and their branches and returns them.
func (m *Manager) Prune(ctx context.Context, known func(Tree) bool) ([]Tree, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	orphans, err := m.Orphans(ctx, known)
	if err != nil {
		return nil, err
	}
	var removed []Tree
	for _, t := range orphans {
		if err := m.remove(ctx, t.Slug); err != nil {
			return removed, err
		}
		removed = append(removed, t)
	}
	return removed, nil
}
