package worktree_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/enginetest/gittest"
	"github.com/leashd/leashd/engine/worktree"
)

var (
	git     = gittest.Git
	newRepo = gittest.Repo
	write   = gittest.Write
	read    = gittest.Read
)

func newManager(t *testing.T, repo string) (*worktree.Manager, string) {
	t.Helper()
	state := t.TempDir()
	m, err := worktree.New(context.Background(), repo, state, worktree.WithAuthor(worktree.Identity{Name: "Leash Bot", Email: "bot@example.com"}))
	require.NoError(t, err)
	return m, state
}

func TestNewOutsideARepositoryIsErrNotRepo(t *testing.T) {
	_, err := worktree.New(context.Background(), t.TempDir(), t.TempDir())
	require.ErrorIs(t, err, worktree.ErrNotRepo)
}

func TestNewInARepositoryWithoutACommitSaysSo(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	_, err := worktree.New(context.Background(), dir, t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has no commit yet")
}

func TestNewRefusesAStateDirInsideTheRepository(t *testing.T) {
	repo := newRepo(t)
	_, err := worktree.New(context.Background(), repo, filepath.Join(repo, ".leashd"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is inside the repository "+repo)
	assert.Contains(t, err.Error(), "keep leashd's state (LEASHD_DB_PATH) outside the repository")
	assert.NoDirExists(t, filepath.Join(repo, ".leashd"), "nothing was made in the repository")
}

func TestWorktreesUnderASymlinkedStateDirAreListed(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	link := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.Symlink(t.TempDir(), link))
	m, err := worktree.New(ctx, repo, link)
	require.NoError(t, err)
	tr, err := m.Ensure(ctx, "web:1")
	require.NoError(t, err)
	all, err := m.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []worktree.Tree{tr}, all)
}

func TestEnsureCreatesABranchAndWorktreePerChatUnderTheStateDir(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, state := newManager(t, repo)
	headBefore := git(t, repo, "rev-parse", "HEAD")

	a, err := m.Ensure(ctx, "telegram:42")
	require.NoError(t, err)
	b, err := m.Ensure(ctx, "slack:C1:1700.1")
	require.NoError(t, err)

	assert.Equal(t, "telegram:42", a.Chat)
	assert.Equal(t, "main", a.Base)
	assert.Equal(t, "leashd/"+worktree.Slug("telegram:42"), a.Branch)
	assert.True(t, strings.HasPrefix(a.Path, filepath.Join(state, "worktrees")+string(filepath.Separator)), a.Path)
	assert.NotEqual(t, a.Path, b.Path)
	assert.Equal(t, "hello\n", read(t, a.Path, "README"), "the worktree starts from the base's HEAD")
	assert.Equal(t, headBefore, git(t, a.Path, "rev-parse", "HEAD"))
	assert.Equal(t, a.Branch, git(t, a.Path, "symbolic-ref", "--short", "HEAD"))

	// Each chat writes in its own worktree; the main checkout is untouched.
	write(t, a.Path, "a.txt", "from a\n")
	write(t, b.Path, "b.txt", "from b\n")
	assert.NoFileExists(t, filepath.Join(b.Path, "a.txt"))
	assert.NoFileExists(t, filepath.Join(a.Path, "b.txt"))
	assert.NoFileExists(t, filepath.Join(repo, "a.txt"))
	assert.Empty(t, git(t, repo, "status", "--porcelain"))
	assert.Equal(t, "main", git(t, repo, "symbolic-ref", "--short", "HEAD"))

	// Again (and after a restart: a new Manager) it is the same worktree.
	again, err := m.Ensure(ctx, "telegram:42")
	require.NoError(t, err)
	assert.Equal(t, a, again)
	m2, err := worktree.New(ctx, repo, state)
	require.NoError(t, err)
	got, ok, err := m2.Lookup(ctx, "telegram:42")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, a, got)
	assert.Equal(t, "from a\n", read(t, got.Path, "a.txt"))
}

func TestNewFromInsideAWorktreeOrSubdirectoryFindsTheMainCheckout(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	write(t, repo, "sub/x", "x")
	m, state := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:1")
	require.NoError(t, err)
	for _, dir := range []string{filepath.Join(repo, "sub"), tr.Path} {
		m2, err := worktree.New(ctx, dir, state)
		require.NoError(t, err)
		assert.Equal(t, m.Repo(), m2.Repo(), dir)
		assert.Equal(t, m.Root(), m2.Root(), dir)
	}
}

func TestStatusShowsUncommittedAndNewFilesAgainstTheBase(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	_, err := m.Status(ctx, "web:1")
	require.ErrorIs(t, err, worktree.ErrNoWorktree)

	tr, err := m.Ensure(ctx, "web:1")
	require.NoError(t, err)
	st, err := m.Status(ctx, "web:1")
	require.NoError(t, err)
	assert.Empty(t, st.DiffStat, "nothing changed yet")

	write(t, tr.Path, "f.txt", "one\nTWO\nthree\n") // changed, not committed
	write(t, tr.Path, "new.txt", "new\n")           // new, untracked
	write(t, tr.Path, "committed.txt", "c\n")
	git(t, tr.Path, "add", "committed.txt")
	git(t, tr.Path, "commit", "-q", "-m", "c")
	// The base moving on is not the worktree's change.
	write(t, repo, "base-only.txt", "b\n")
	git(t, repo, "add", "base-only.txt")
	git(t, repo, "commit", "-q", "-m", "base")

	st, err = m.Status(ctx, "web:1")
	require.NoError(t, err)
	assert.Equal(t, tr, st.Tree)
	for _, f := range []string{"f.txt", "new.txt", "committed.txt", "3 files changed"} {
		assert.Contains(t, st.DiffStat, f)
	}
	assert.NotContains(t, st.DiffStat, "base-only.txt")
	// The worktree's own index (what the agent sees in git status) is
	// left alone: nothing staged, the new file still untracked.
	assert.Empty(t, git(t, tr.Path, "diff", "--cached", "--name-only"))
	assert.Equal(t, "new.txt", git(t, tr.Path, "ls-files", "--others", "--exclude-standard"))
}

func TestMergeCommitsWithTheMessageAndAuthorAndMergesIntoTheBase(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	tr, err := m.Ensure(ctx, "telegram:7")
	require.NoError(t, err)
	write(t, tr.Path, "hello.go", "package hello\n")
	write(t, tr.Path, "f.txt", "one\ntwo\nthree\nfour\n")

	res, err := m.Merge(ctx, "telegram:7", "add hello.go\n")
	require.NoError(t, err)
	assert.True(t, res.Committed)
	assert.True(t, res.Merged)
	assert.Equal(t, "package hello\n", read(t, repo, "hello.go"))
	assert.Equal(t, "one\ntwo\nthree\nfour\n", read(t, repo, "f.txt"))
	assert.Empty(t, git(t, repo, "status", "--porcelain"))
	assert.Equal(t, res.Commit, git(t, repo, "rev-parse", "HEAD"))
	assert.Equal(t, "add hello.go|Leash Bot <bot@example.com>", git(t, repo, "log", "-1", "--format=%s|%an <%ae>", tr.Branch))
	assert.Equal(t, "main", git(t, repo, "symbolic-ref", "--short", "HEAD"))

	// Nothing new: nothing to do.
	res, err = m.Merge(ctx, "telegram:7", "again")
	require.NoError(t, err)
	assert.False(t, res.Committed)
	assert.False(t, res.Merged)
}

func TestMergeAfterTheBaseMovedOnMakesAMergeCommit(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:2")
	require.NoError(t, err)
	write(t, tr.Path, "mine.txt", "mine\n")
	write(t, repo, "theirs.txt", "theirs\n")
	git(t, repo, "add", "theirs.txt")
	git(t, repo, "commit", "-q", "-m", "theirs")

	res, err := m.Merge(ctx, "web:2", "mine")
	require.NoError(t, err)
	require.True(t, res.Merged)
	assert.Equal(t, "mine\n", read(t, repo, "mine.txt"))
	assert.Equal(t, "theirs\n", read(t, repo, "theirs.txt"))
	assert.Equal(t, "Leash Bot", git(t, repo, "log", "-1", "--format=%an"))
	assert.Len(t, strings.Fields(git(t, repo, "log", "-1", "--format=%p")), 2, "a merge commit")
}

func TestMergeConflictChangesNothingAndNamesTheFiles(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:3")
	require.NoError(t, err)
	write(t, tr.Path, "f.txt", "one\nworktree\nthree\n")
	write(t, tr.Path, "clean.txt", "no conflict here\n")
	write(t, repo, "f.txt", "one\nbase\nthree\n")
	git(t, repo, "commit", "-q", "-am", "base edit")
	head := git(t, repo, "rev-parse", "HEAD")

	_, err = m.Merge(ctx, "web:3", "conflicting")
	require.ErrorIs(t, err, worktree.ErrConflict)
	var me *worktree.MergeError
	require.True(t, errors.As(err, &me))
	assert.Equal(t, []string{"f.txt"}, me.Files)
	assert.Equal(t, head, git(t, repo, "rev-parse", "HEAD"))
	assert.Empty(t, git(t, repo, "status", "--porcelain"))
	assert.Equal(t, "one\nbase\nthree\n", read(t, repo, "f.txt"))
	assert.NoFileExists(t, filepath.Join(repo, "clean.txt"))
	assert.NoFileExists(t, filepath.Join(repo, ".git", "MERGE_HEAD"))
}

func TestMergeRefusesAMainCheckoutWithUncommittedChanges(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:4")
	require.NoError(t, err)
	write(t, tr.Path, "new.txt", "new\n")
	write(t, repo, "README", "local edit\n") // uncommitted in the main checkout
	head := git(t, repo, "rev-parse", "HEAD")

	_, err = m.Merge(ctx, "web:4", "new")
	require.ErrorIs(t, err, worktree.ErrDirty)
	var me *worktree.MergeError
	require.True(t, errors.As(err, &me))
	assert.Equal(t, []string{"README"}, me.Files)
	assert.Contains(t, err.Error(), "README")
	assert.Equal(t, head, git(t, repo, "rev-parse", "HEAD"))
	assert.Equal(t, "local edit\n", read(t, repo, "README"))
	assert.NoFileExists(t, filepath.Join(repo, "new.txt"))
}

func TestMergeRefusesWhenTheMainCheckoutIsOnAnotherBranch(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:5")
	require.NoError(t, err)
	write(t, tr.Path, "new.txt", "new\n")
	git(t, repo, "checkout", "-q", "-b", "feature")

	_, err = m.Merge(ctx, "web:5", "new")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is on branch feature, not on main")
	assert.NoFileExists(t, filepath.Join(repo, "new.txt"))
	assert.Equal(t, "initial", git(t, repo, "log", "-1", "--format=%s", "main"))
}

func TestDiscardRemovesTheWorktreeAndItsBranch(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:6")
	require.NoError(t, err)
	write(t, tr.Path, "junk.txt", "junk\n")

	require.NoError(t, m.Discard(ctx, "web:6"))
	assert.NoDirExists(t, tr.Path)
	assert.Empty(t, git(t, repo, "branch", "--list", tr.Branch))
	out, _ := exec.Command("git", "-C", repo, "config", "--get-regexp", `^branch\.leashd/`).Output()
	assert.Empty(t, string(out), "the branch's records went with it")
	_, ok, err := m.Lookup(ctx, "web:6")
	require.NoError(t, err)
	assert.False(t, ok)
	// The next prompt starts afresh from the base.
	tr2, err := m.Ensure(ctx, "web:6")
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(tr2.Path, "junk.txt"))
}

func TestEnsureRecreatesAWorktreeWhoseDirectoryWasDeleted(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:7")
	require.NoError(t, err)
	write(t, tr.Path, "kept.txt", "kept\n")
	git(t, tr.Path, "add", "kept.txt")
	git(t, tr.Path, "commit", "-q", "-m", "kept")
	require.NoError(t, os.RemoveAll(tr.Path))

	again, err := m.Ensure(ctx, "web:7")
	require.NoError(t, err)
	assert.Equal(t, tr, again)
	assert.Equal(t, "kept\n", read(t, again.Path, "kept.txt"), "the branch's commits are kept")
}

func TestListOrphansAndPrune(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	a, err := m.Ensure(ctx, "telegram:1")
	require.NoError(t, err)
	b, err := m.Ensure(ctx, "telegram:2")
	require.NoError(t, err)
	git(t, repo, "worktree", "add", "-q", filepath.Join(t.TempDir(), "mine"), "-b", "not-leashd") // someone's own

	all, err := m.List(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []worktree.Tree{a, b}, all)

	known := func(tr worktree.Tree) bool { return tr.Chat == "telegram:1" }
	orphans, err := m.Orphans(ctx, known)
	require.NoError(t, err)
	assert.Equal(t, []worktree.Tree{b}, orphans)

	removed, err := m.Prune(ctx, known)
	require.NoError(t, err)
	assert.Equal(t, []worktree.Tree{b}, removed)
	all, err = m.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []worktree.Tree{a}, all)
	assert.NoDirExists(t, b.Path)
	assert.Contains(t, git(t, repo, "branch", "--list"), "not-leashd")
}

// TestChatsStartingAtOnceEachGetTheirWorktree: git refuses a second
// writer of its config instead of waiting, so the manager serialises.
func TestChatsStartingAtOnceEachGetTheirWorktree(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := m.Ensure(ctx, fmt.Sprintf("web:%d", i))
			errs <- err
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	all, err := m.List(ctx)
	require.NoError(t, err)
	require.Len(t, all, n)
	for _, tr := range all {
		assert.Equal(t, "main", tr.Base, tr.Chat)
		assert.NotEmpty(t, tr.Chat)
	}
}

// TestMergeRespectsTheRepositorysCommitHooks: a pre-commit hook that
// refuses stops /merge before anything reaches the base, and says why.
func TestMergeRespectsTheRepositorysCommitHooks(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:h")
	require.NoError(t, err)
	write(t, tr.Path, "bad.txt", "unformatted\n")
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\necho 'lint: bad.txt is not formatted' >&2\nexit 1\n"), 0o755))

	_, err = m.Merge(ctx, "web:h", "bad")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lint: bad.txt is not formatted")
	assert.NoFileExists(t, filepath.Join(repo, "bad.txt"))
	assert.Equal(t, "initial", git(t, repo, "log", "-1", "--format=%s", "main"))
}
