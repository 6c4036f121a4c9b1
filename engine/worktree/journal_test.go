package worktree_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/enginetest/gittest"
	"github.com/leashd/leashd/engine/worktree"
)

// TestHelperMergeProcess is not a test: killedMidMerge runs the test
// binary again with it, to merge in a process of its own that is killed.
func TestHelperMergeProcess(t *testing.T) {
	repo, state, chat := os.Getenv("LEASHD_MERGE_REPO"), os.Getenv("LEASHD_MERGE_STATE"), os.Getenv("LEASHD_MERGE_CHAT")
	if repo == "" {
		t.Skip("run by killedMidMerge")
	}
	m, err := worktree.New(context.Background(), repo, state)
	require.NoError(t, err)
	_, err = m.Merge(context.Background(), chat, "merged by a process that is killed")
	t.Fatalf("the merge ended: %v", err)
}

// killedMidMerge has chat's worktree of repo (state as leashd's state
// directory) merged by another process, killed with SIGKILL while git
// runs the repository's pre-merge-commit hook: the branch's files are in
// the main checkout by then, and not committed. The hook is removed
// again; with onlyLeashd git lives on, held until ReleaseMerges(marker).
func killedMidMerge(t *testing.T, repo, state, chat string, onlyLeashd bool) (marker string) {
	t.Helper()
	marker = gittest.HoldMerges(t, repo)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMergeProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LEASHD_MERGE_REPO="+repo, "LEASHD_MERGE_STATE="+state, "LEASHD_MERGE_CHAT="+chat)
	gittest.KillWhenHeld(t, cmd, marker, onlyLeashd)
	require.NoError(t, os.Remove(filepath.Join(repo, ".git", "hooks", "pre-merge-commit")))
	return marker
}

// TestAMergeKilledMidwayIsUndoneAtTheNextStart: leashd is killed while git
// merges (a slow hook); the main checkout is left with the branch's files
// staged and no merge in progress. The next run's Recover says so and
// puts the main checkout back as it was, and /merge then works.
func TestAMergeKilledMidwayIsUndoneAtTheNextStart(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, state := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:k")
	require.NoError(t, err)
	write(t, tr.Path, "f.txt", "one\ntwo\nthree\nfour\n")
	write(t, tr.Path, "new.txt", "from the agent\n")
	write(t, repo, "README", "the base moved on\n")
	git(t, repo, "commit", "-q", "-am", "base edit")
	head := git(t, repo, "rev-parse", "HEAD")
	write(t, repo, "mine.txt", "the person's untracked file\n")

	killedMidMerge(t, repo, state, "web:k", false)
	require.Equal(t, "M  f.txt\nA  new.txt", git(t, repo, "status", "--porcelain", "--untracked-files=no"),
		"the crash left the branch's files staged in the main checkout")
	require.NoFileExists(t, filepath.Join(repo, ".git", "MERGE_HEAD"), "and no merge in progress")

	m2, err := worktree.New(ctx, repo, state) // the next start
	require.NoError(t, err)
	in, err := m2.Recover(ctx)
	require.NoError(t, err)
	require.NotNil(t, in)
	assert.Equal(t, worktree.MergeUndone, in.Outcome)
	assert.Equal(t, "web:k", in.Chat)
	assert.Equal(t, tr.Branch, in.Branch)
	assert.Equal(t, "main", in.Base)
	assert.Equal(t, []string{"f.txt", "new.txt"}, in.Files)
	assert.Equal(t, head, in.Head)
	assert.Empty(t, git(t, repo, "status", "--porcelain", "--untracked-files=no"), "the main checkout is as before")
	assert.NoFileExists(t, filepath.Join(repo, "new.txt"))
	assert.Equal(t, "one\ntwo\nthree\n", read(t, repo, "f.txt"))
	assert.Equal(t, "the person's untracked file\n", read(t, repo, "mine.txt"))
	assert.Equal(t, head, git(t, repo, "rev-parse", "HEAD"))

	again, err := m2.Recover(ctx)
	require.NoError(t, err)
	assert.Nil(t, again, "told once")
	res, err := m2.Merge(ctx, "web:k", "again")
	require.NoError(t, err)
	assert.True(t, res.Merged)
	assert.Nil(t, res.Recovered)
	assert.Equal(t, "from the agent\n", read(t, repo, "new.txt"))
}

// TestAnInterruptedMergeIsLeftAloneWhenThePersonChangedThingsSince: after
// the crash someone edited a staged file; leashd cannot tell the merge's
// work from theirs, so it changes nothing and names the files.
func TestAnInterruptedMergeIsLeftAloneWhenThePersonChangedThingsSince(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, state := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:l")
	require.NoError(t, err)
	write(t, tr.Path, "new.txt", "from the agent\n")
	write(t, repo, "README", "the base moved on\n")
	git(t, repo, "commit", "-q", "-am", "base edit")
	killedMidMerge(t, repo, state, "web:l", false)
	write(t, repo, "f.txt", "edited after the crash\n")
	git(t, repo, "add", "f.txt")

	m2, err := worktree.New(ctx, repo, state)
	require.NoError(t, err)
	st, err := m2.Status(ctx, "web:l")
	require.NoError(t, err)
	require.NotNil(t, st.Recovered, "/worktree tells of it too")
	assert.Equal(t, worktree.MergeLeft, st.Recovered.Outcome)
	assert.Equal(t, []string{"f.txt", "new.txt"}, st.Recovered.Files)
	assert.Contains(t, st.Recovered.Why, "not exactly the merge's")
	assert.Equal(t, "edited after the crash\n", read(t, repo, "f.txt"))
	assert.Equal(t, "from the agent\n", read(t, repo, "new.txt"))
}

// TestAMergeWhoseGitOutlivedLeashdIsLeftToFinish: only leashd is killed
// (kill -9 of its PID); the git merge it started still runs its hook when
// leashd starts again. Recover leaves it alone (undoing its staged files
// under it would have it commit a merge the checkout no longer shows) and
// says so; once git has made the merge, Recover says it finished.
func TestAMergeWhoseGitOutlivedLeashdIsLeftToFinish(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, state := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:g")
	require.NoError(t, err)
	write(t, tr.Path, "new.txt", "from the agent\n")
	write(t, repo, "README", "the base moved on\n")
	git(t, repo, "commit", "-q", "-am", "base edit")
	head := git(t, repo, "rev-parse", "HEAD")
	marker := killedMidMerge(t, repo, state, "web:g", true)

	m2, err := worktree.New(ctx, repo, state)
	require.NoError(t, err)
	in, err := m2.Recover(ctx)
	require.NoError(t, err)
	require.NotNil(t, in)
	assert.Equal(t, worktree.MergeRunning, in.Outcome)
	assert.Equal(t, "A  new.txt", git(t, repo, "status", "--porcelain", "--untracked-files=no"), "left alone")

	gittest.ReleaseMerges(t, marker)
	require.Eventually(t, func() bool {
		in, err = m2.Recover(ctx)
		return err != nil || in == nil || in.Outcome != worktree.MergeRunning
	}, 30*time.Second, 50*time.Millisecond)
	require.NoError(t, err)
	require.NotNil(t, in)
	assert.Equal(t, worktree.MergeFinished, in.Outcome)
	assert.Equal(t, head, git(t, repo, "rev-parse", "HEAD^1"))
	assert.Equal(t, git(t, repo, "rev-parse", tr.Branch), git(t, repo, "rev-parse", "HEAD^2"))
	assert.Equal(t, in.Head, git(t, repo, "rev-parse", "HEAD"))
	assert.Empty(t, git(t, repo, "status", "--porcelain", "--untracked-files=no"))
	assert.Equal(t, "from the agent\n", read(t, repo, "new.txt"))
}

// TestAMergeWhoseHookOutlastsTheTimeoutLeavesNothingHalfDone: git is
// killed by leashd's own timeout while a slow hook runs, with the
// branch's files staged and no merge in progress; Merge undoes that
// before it says the merge failed, so the next /merge does not find them
// as "uncommitted changes".
func TestAMergeWhoseHookOutlastsTheTimeoutLeavesNothingHalfDone(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:t")
	require.NoError(t, err)
	write(t, tr.Path, "new.txt", "from the agent\n")
	write(t, repo, "README", "the base moved on\n")
	git(t, repo, "commit", "-q", "-am", "base edit")
	head := git(t, repo, "rev-parse", "HEAD")
	marker := gittest.HoldMerges(t, repo)
	defer gittest.ReleaseMerges(t, marker) // the orphaned hook ends

	worktree.SetTimeout(m, 3*time.Second)
	_, err = m.Merge(ctx, "web:t", "slow hook")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "merging "+tr.Branch+" into main")
	assert.FileExists(t, marker, "the hook ran")
	assert.Empty(t, git(t, repo, "status", "--porcelain", "--untracked-files=no"), "nothing left staged")
	assert.Equal(t, head, git(t, repo, "rev-parse", "HEAD"))
	assert.NoFileExists(t, filepath.Join(repo, "new.txt"))
	in, err := m.Recover(ctx)
	require.NoError(t, err)
	assert.Nil(t, in, "nothing left to recover")
}

// TestHelperIdleProcess is not a test: it stands for another leashd
// process for TestAMergeAnotherLeashdIsMakingIsLeftAlone.
func TestHelperIdleProcess(t *testing.T) {
	if os.Getenv("LEASHD_IDLE") == "" {
		t.Skip("run by TestAMergeAnotherLeashdIsMakingIsLeftAlone")
	}
	time.Sleep(time.Minute)
}

// TestAMergeAnotherLeashdIsMakingIsLeftAlone: leashd chat beside leashd
// serve: a merge journaled by another live leashd process, before its git
// starts, is not taken for a crash's leftover; once that process is gone
// it is.
func TestAMergeAnotherLeashdIsMakingIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	other := exec.Command(os.Args[0], "-test.run=^TestHelperIdleProcess$", "-test.count=1")
	other.Env = append(os.Environ(), "LEASHD_IDLE=1")
	require.NoError(t, other.Start())
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	require.NoError(t, worktree.Journal(ctx, m, "web:o", other.Process.Pid))

	in, err := m.Recover(ctx)
	require.NoError(t, err)
	require.NotNil(t, in)
	assert.Equal(t, worktree.MergeRunning, in.Outcome)
	in, err = m.Recover(ctx)
	require.NoError(t, err)
	require.NotNil(t, in, "the journal stays while it runs")
	assert.Equal(t, worktree.MergeRunning, in.Outcome)

	require.NoError(t, other.Process.Kill())
	_ = other.Wait()
	in, err = m.Recover(ctx)
	require.NoError(t, err)
	require.NotNil(t, in)
	assert.Equal(t, worktree.MergeNotStarted, in.Outcome)
	in, err = m.Recover(ctx)
	require.NoError(t, err)
	assert.Nil(t, in)
}

// TestAnInterruptedMergeWhoseFilesWereEditedSinceIsLeftAlone: the staged
// files are exactly the merge's, but one was edited (not staged) after
// the crash: undoing would lose that edit, so nothing is touched and the
// person is told which files are uncommitted.
func TestAnInterruptedMergeWhoseFilesWereEditedSinceIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, state := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:e")
	require.NoError(t, err)
	write(t, tr.Path, "f.txt", "one\ntwo\nthree\nfour\n")
	write(t, repo, "README", "the base moved on\n")
	git(t, repo, "commit", "-q", "-am", "base edit")
	killedMidMerge(t, repo, state, "web:e", false)
	write(t, repo, "f.txt", "edited by the person after the crash\n")

	m2, err := worktree.New(ctx, repo, state)
	require.NoError(t, err)
	in, err := m2.Recover(ctx)
	require.NoError(t, err)
	require.NotNil(t, in)
	assert.Equal(t, worktree.MergeLeft, in.Outcome)
	assert.Equal(t, []string{"f.txt"}, in.Files)
	assert.Contains(t, in.Why, "would lose a change made since")
	assert.Equal(t, "edited by the person after the crash\n", read(t, repo, "f.txt"))
	in, err = m2.Recover(ctx)
	require.NoError(t, err)
	assert.Nil(t, in, "told once")
}
