package engine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest/gittest"
	"github.com/leashd/leashd/engine/worktree"
)

// TestHelperMergeProcess is not a test: TestAMergeKilledMidwayIsUndone...
// runs the test binary again with it, to merge in a process of its own
// that is then killed.
func TestHelperMergeProcess(t *testing.T) {
	repo, state, chat := os.Getenv("LEASHD_MERGE_REPO"), os.Getenv("LEASHD_MERGE_STATE"), os.Getenv("LEASHD_MERGE_CHAT")
	if repo == "" {
		t.Skip("run by TestAMergeKilledMidwayIsUndoneAndTheChatToldAtStart")
	}
	m, err := worktree.New(context.Background(), repo, state)
	require.NoError(t, err)
	_, err = m.Merge(context.Background(), chat, "merged by a process that is killed")
	t.Fatalf("the merge ended: %v", err)
}

// TestAMergeKilledMidwayIsUndoneAndTheChatToldAtStart: leashd is killed
// (SIGKILL) while git runs a slow pre-merge-commit hook of the /merge of
// chat web:a. At the next start the branch's staged files are taken out
// of the main checkout and the chat is told; /merge then merges, instead
// of calling the leftovers the person's uncommitted changes.
func TestAMergeKilledMidwayIsUndoneAndTheChatToldAtStart(t *testing.T) {
	ctx := context.Background()
	repo, state := gittest.Repo(t), t.TempDir()
	m, err := worktree.New(ctx, repo, state)
	require.NoError(t, err)
	tr, err := m.Ensure(ctx, "web:a")
	require.NoError(t, err)
	gittest.Write(t, tr.Path, "new.txt", "from the agent\n")
	gittest.Write(t, repo, "README", "the base moved on\n")
	gittest.Git(t, repo, "commit", "-q", "-am", "base edit")
	head := gittest.Git(t, repo, "rev-parse", "HEAD")
	marker := gittest.HoldMerges(t, repo)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMergeProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LEASHD_MERGE_REPO="+repo, "LEASHD_MERGE_STATE="+state, "LEASHD_MERGE_CHAT=web:a")
	gittest.KillWhenHeld(t, cmd, marker, false)
	require.NoError(t, os.Remove(filepath.Join(repo, ".git", "hooks", "pre-merge-commit")))
	require.Equal(t, "A  new.txt", gittest.Git(t, repo, "status", "--porcelain", "--untracked-files=no"), "what the crash left")

	m, err = worktree.New(ctx, repo, state) // the next start
	require.NoError(t, err)
	e, conn, _ := start(t, writerAgent(), nil, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = repo }, func(d *engine.Deps, _ *engine.Config) { d.Worktrees = m })
	conn.WaitSaid(t, "⚠️ The /merge of "+tr.Branch+" into main started ")
	conn.WaitSaid(t, " was cut short when leashd stopped, with new.txt written into "+m.Repo()+" but not committed. leashd took them out again: main is back at "+head[:12]+", as before the merge. Send /merge to merge again.")
	assert.Empty(t, gittest.Git(t, repo, "status", "--porcelain", "--untracked-files=no"))
	assert.NoFileExists(t, filepath.Join(repo, "new.txt"))

	send(t, e, "web:a", "/merge")
	conn.WaitSaid(t, "Merged "+tr.Branch+" into main")
	assert.Equal(t, "from the agent\n", gittest.Read(t, repo, "new.txt"))
}
