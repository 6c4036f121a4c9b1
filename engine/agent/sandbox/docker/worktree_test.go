package docker_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/sandbox/docker"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
	"github.com/leashd/leashd/engine/enginetest/gittest"
)

// TestAChatsWorktreeInsideTheHiddenStateDir: a chat's worktree lives in
// leashd's state directory, which the container must not see. The agent
// works and commits in its worktree (the commit lands in the main
// repository's git directory, mounted too) and sees nothing else of the
// state directory.
func TestAChatsWorktreeInsideTheHiddenStateDir(t *testing.T) {
	repo := gittest.Repo(t)
	home := t.TempDir()
	state := filepath.Join(home, ".local", "state", "leashd")
	require.NoError(t, os.MkdirAll(state, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(state, "leashd.db"), []byte("secret"), 0o600))
	wt := filepath.Join(state, "worktrees", "chat-1")
	gittest.Git(t, repo, "worktree", "add", "-q", "-b", "leashd/chat-1", wt)
	sb, _ := newSandbox(t, func(o *docker.Options) { o.Home = home; o.Hide = []string{state} })
	out, errs, err := run(t, sb, wt, `
		echo changed > f.txt
		git -c user.name=agent -c user.email=agent@example.com commit -qam "from the container" && echo committed
		echo "state: [$(ls -A "$HOME/.local/state/leashd")]"
		cat "$HOME/.local/state/leashd/leashd.db" 2>/dev/null || echo "no database"`)
	require.NoError(t, err, "%s%s", out, errs)
	assert.Contains(t, out, "committed\n")
	assert.Contains(t, out, "state: [worktrees]\n", "only the way to the chat's own worktree")
	assert.Contains(t, out, "no database\n")
	assert.Equal(t, "from the container", gittest.Git(t, repo, "log", "-1", "--format=%s", "leashd/chat-1"))
}

// TestResumeInANewContainer: a session ended (idle shutdown, a restart)
// resumes in a new container: the transcript lives in the mounted home.
func TestResumeInANewContainer(t *testing.T) {
	api := fakeapi.New(t)
	home, dir := t.TempDir(), t.TempDir()
	a, _ := containerCLI(t, api, home)
	api.Reply(fakeapi.Text("first answer"), fakeapi.Text("second answer"))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s, err := a.Open(ctx, agent.SessionOptions{ChatID: "t1", WorkDir: dir, Mode: agent.ModeDefault})
	require.NoError(t, err)
	res, err := s.Turn(ctx, agent.Text("remember the word kumquat"), &allowAll{})
	require.NoError(t, err)
	require.NoError(t, s.Close(ctx))
	require.NotEmpty(t, res.SessionID)

	s, err = a.Open(ctx, agent.SessionOptions{ChatID: "t1", WorkDir: dir, Mode: agent.ModeDefault, ResumeID: res.SessionID})
	require.NoError(t, err)
	defer s.Close(ctx)
	res2, err := s.Turn(ctx, agent.Text("which word?"), &allowAll{})
	require.NoError(t, err)
	assert.Equal(t, "second answer", res2.Text)
	calls := api.Calls()
	require.NotEmpty(t, calls)
	assert.True(t, calls[len(calls)-1].HasUserText("remember the word kumquat"), "the resumed conversation carries the first turn")
}

// TestTheStateDirAsTheWorkingDirectory: when leashd's state directory is
// the agent's working directory, it is writable, and leashd's files in it
// are empty.
func TestTheStateDirAsTheWorkingDirectory(t *testing.T) {
	state := t.TempDir()
	db := filepath.Join(state, "leashd.db")
	require.NoError(t, os.WriteFile(db, []byte("secret"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(state, "web-token"), []byte("token"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(state, "worktrees", "other-chat"), 0o700))
	hide := []string{state, db, db + "-wal", filepath.Join(state, "web-token"), filepath.Join(state, "worktrees")}
	sb, _ := newSandbox(t, func(o *docker.Options) { o.Hide = hide })
	out, errs, err := run(t, sb, state, `
		echo "db: [$(cat leashd.db)]"
		echo "token: [$(cat web-token)]"
		echo "worktrees: [$(ls -A worktrees)]"
		echo x > mine && echo "writable"`)
	require.NoError(t, err, "%s%s", out, errs)
	assert.Contains(t, out, "db: []\n")
	assert.Contains(t, out, "token: []\n")
	assert.Contains(t, out, "worktrees: []\n")
	assert.Contains(t, out, "writable\n")
	b, err := os.ReadFile(db)
	require.NoError(t, err)
	assert.Equal(t, "secret", string(b))
}
