package claude_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
	"github.com/leashd/leashd/engine/enginetest/gittest"
	"github.com/leashd/leashd/engine/worktree"
)

// TestE2EWorktreePerChat: with worktrees on, two chats' real CLIs each
// write a file in their own worktree (the main checkout untouched), then
// /merge brings one chat's work into the base branch.
func TestE2EWorktreePerChat(t *testing.T) {
	ctx := context.Background()
	repo := gittest.Repo(t)
	m, err := worktree.New(ctx, repo, t.TempDir(), worktree.WithAuthor(worktree.Identity{Name: "Leash Bot", Email: "bot@example.com"}))
	require.NoError(t, err)
	s := newStack(t, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = repo }, func(d *engine.Deps, _ *engine.Config) { d.Worktrees = m }, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModeAcceptEdits })
	send := func(chat, text string) {
		t.Helper()
		_, err := s.e.HandleMessage(ctx, connectors.Incoming{ChatID: chat, UserID: "u1", Text: text})
		require.NoError(t, err)
	}
	// Where each chat's worktree will be: the model writes there.
	dirOf := func(chat string) string { return filepath.Join(m.Root(), worktree.Slug(chat)) }
	alice, bob := dirOf("web:alice"), dirOf("web:bob")

	s.api.Reply(fakeapi.Tool("Write", map[string]string{"file_path": filepath.Join(alice, "alice.txt"), "content": "from alice\n"}), fakeapi.Text("Wrote alice.txt."))
	send("web:alice", "add alice.txt")
	assert.Equal(t, "Wrote alice.txt.", s.conn.WaitDone(t, 1).Result)
	s.api.Reply(fakeapi.Tool("Write", map[string]string{"file_path": filepath.Join(bob, "bob.txt"), "content": "from bob\n"}), fakeapi.Text("Wrote bob.txt."))
	send("web:bob", "add bob.txt")
	assert.Equal(t, "Wrote bob.txt.", s.conn.WaitDone(t, 2).Result)

	// Each CLI ran in its chat's worktree: it tells its model so.
	calls := s.api.Calls()
	require.Len(t, calls, 4)
	for i, want := range map[int]string{0: alice, 2: bob} {
		raw := string(calls[i].Raw)
		assert.Contains(t, raw, want, "the CLI's environment names its working directory")
		assert.Contains(t, raw, "Current branch: leashd/"+filepath.Base(want), "and its git branch")
		assert.NotContains(t, raw, "Current branch: main")
	}
	assert.Empty(t, s.asked(), "acceptEdits: the CLI wrote without asking")
	for i, c := range []int{1, 3} {
		res, ok := calls[c].ToolResult(calls[c-1].Reply.Tools[0].ID)
		require.True(t, ok, "write %d", i)
		assert.False(t, res.IsError, res.ResultText())
	}
	assertFile(t, filepath.Join(alice, "alice.txt"), "from alice\n")
	assertFile(t, filepath.Join(bob, "bob.txt"), "from bob\n")
	assert.NoFileExists(t, filepath.Join(alice, "bob.txt"))
	assert.NoFileExists(t, filepath.Join(bob, "alice.txt"))
	assert.NoFileExists(t, filepath.Join(repo, "alice.txt"))
	assert.NoFileExists(t, filepath.Join(repo, "bob.txt"))
	assert.Empty(t, gittest.Git(t, repo, "status", "--porcelain"), "the main checkout is untouched")

	send("web:alice", "/worktree")
	s.conn.WaitSaid(t, "Worktree: "+alice+"\nBranch: leashd/"+worktree.Slug("web:alice")+"\nBase: main")
	send("web:alice", "/merge")
	s.conn.WaitSaid(t, "Merged leashd/"+worktree.Slug("web:alice")+" into main")
	assertFile(t, filepath.Join(repo, "alice.txt"), "from alice\n")
	assert.NoFileExists(t, filepath.Join(repo, "bob.txt"))
	assert.Equal(t, "add alice.txt", gittest.Git(t, repo, "log", "-1", "--format=%s", "main"))
	assert.Empty(t, gittest.Git(t, repo, "status", "--porcelain"))
	assert.True(t, strings.HasPrefix(gittest.Git(t, repo, "log", "-1", "--format=%an <%ae>", "main"), "Leash Bot <bot@example.com>"))
}
