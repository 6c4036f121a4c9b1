package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest/gittest"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/engine/worktree"
)

func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), args, strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// TestWorktreesListsAndPrunesThoseWhoseChatIsGone: chat web:a works in its
// worktree; web:b's worktree is left over (its chat's record says it works
// elsewhere), web:c's chat is not in the database at all.
func TestWorktreesListsAndPrunesThoseWhoseChatIsGone(t *testing.T) {
	cleanEnv(t)
	ctx := context.Background()
	repo := gittest.Repo(t)
	dbPath := filepath.Join(testenv.PrivateDir(t), "state", "leashd.db")
	t.Setenv("LEASHD_WORKDIR", repo)
	t.Setenv("LEASHD_DB_PATH", dbPath)

	m, err := worktree.New(ctx, repo, filepath.Dir(dbPath))
	require.NoError(t, err)
	trees := map[string]worktree.Tree{}
	for _, chat := range []string{"web:a", "web:b", "web:c"} {
		trees[chat], err = m.Ensure(ctx, chat)
		require.NoError(t, err)
	}
	db, err := sqlite.Open(ctx, dbPath) // leashd runs meanwhile
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.SaveSession(ctx, engine.SessionRecord{ChatID: "web:a", WorkDir: trees["web:a"].Path}))
	require.NoError(t, db.SaveSession(ctx, engine.SessionRecord{ChatID: "web:b", WorkDir: repo}))

	out, _, err := runCmd(t, "worktrees")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5, out)
	assert.Equal(t, []string{"CHAT", "BRANCH", "BASE", "STATE", "PATH"}, strings.Fields(lines[0]))
	byChat := map[string]string{}
	for _, l := range lines[1:4] {
		byChat[strings.Fields(l)[0]] = l
	}
	assert.Equal(t, []string{"web:a", trees["web:a"].Branch, "main", "in", "use", trees["web:a"].Path}, strings.Fields(byChat["web:a"]))
	assert.Equal(t, []string{"web:b", trees["web:b"].Branch, "main", "chat", "gone", trees["web:b"].Path}, strings.Fields(byChat["web:b"]))
	assert.Contains(t, byChat["web:c"], "chat gone")
	assert.Equal(t, "2 worktree(s) whose chat is gone: `leashd worktrees prune` removes them and their branches", lines[4])

	out, _, err = runCmd(t, "worktrees", "prune")
	require.NoError(t, err)
	assert.Contains(t, out, "removed "+trees["web:b"].Path+" (branch "+trees["web:b"].Branch+", chat web:b)")
	assert.Contains(t, out, "removed "+trees["web:c"].Path)
	assert.NotContains(t, out, trees["web:a"].Path)
	left, err := m.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []worktree.Tree{trees["web:a"]}, left)
	assert.Empty(t, gittest.Git(t, repo, "branch", "--list", trees["web:b"].Branch))

	out, _, err = runCmd(t, "worktrees", "prune")
	require.NoError(t, err)
	assert.Equal(t, "nothing to prune: every worktree's chat still works there\n", out)
}

func TestWorktreesWithoutADatabasePrunesNothing(t *testing.T) {
	cleanEnv(t)
	ctx := context.Background()
	repo := gittest.Repo(t)
	dbPath := filepath.Join(testenv.PrivateDir(t), "leashd.db")
	t.Setenv("LEASHD_WORKDIR", repo)
	m, err := worktree.New(ctx, repo, filepath.Dir(dbPath))
	require.NoError(t, err)
	tr, err := m.Ensure(ctx, "web:a")
	require.NoError(t, err)

	_, _, err = runCmd(t, "worktrees", "prune", "--db", dbPath)
	require.ErrorContains(t, err, "no database at "+dbPath+": leashd cannot tell which chats are gone, so it prunes nothing")
	assert.DirExists(t, tr.Path)
	out, stderr, err := runCmd(t, "worktrees", "--db", dbPath)
	require.NoError(t, err)
	assert.Contains(t, out, tr.Path)
	assert.Contains(t, stderr, "no database at "+dbPath)
}

func TestWorktreesBadArgumentsSayWhatIsAccepted(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LEASHD_WORKDIR", gittest.Repo(t))
	_, _, err := runCmd(t, "worktrees", "remove")
	require.ErrorContains(t, err, `unknown action "remove" (accepted: prune, or nothing to list)`)
	_, _, err = runCmd(t, "worktrees", "prune", "extra")
	require.ErrorContains(t, err, `unexpected argument "extra"`)
	_, stderr, err := runCmd(t, "worktrees", "--frob")
	require.ErrorContains(t, err, "flag provided but not defined: -frob")
	assert.Contains(t, stderr, "Usage: leashd worktrees")
}

func TestWorktreesOnOutsideAGitRepositoryStopsTheStartWithAClearMessage(t *testing.T) {
	dir := testenv.PrivateDir(t)
	for _, args := range [][]string{nil, {"chat"}, {"worktrees"}} {
		cleanEnv(t)
		t.Setenv("LEASHD_AGENT", "demo")
		t.Setenv("LEASHD_WORKTREES", "on")
		t.Setenv("LEASHD_WORKDIR", dir)
		_, _, err := runCmd(t, args...)
		require.Error(t, err, "%v", args)
		want := "LEASHD_WORKTREES=on, but LEASHD_WORKDIR=" + dir + " is not inside a git repository: run `git init` there and commit, or point LEASHD_WORKDIR at a repository; or set LEASHD_WORKTREES=off"
		if len(args) > 0 && args[0] == "worktrees" {
			want = "LEASHD_WORKDIR=" + dir + " is not inside a git repository: run `git init` there and commit, or point LEASHD_WORKDIR at a repository"
		}
		assert.Equal(t, want, err.Error(), "%v", args)
	}
}

// leashd worktrees needs no LEASHD_WORKTREES: outside a repository it
// says what is wrong without claiming a setting that is not set.
func TestWorktreesCommandOutsideARepositoryNamesOnlyWhatIsSet(t *testing.T) {
	cleanEnv(t)
	dir := testenv.PrivateDir(t)
	t.Setenv("LEASHD_AGENT", "demo")
	t.Setenv("LEASHD_WORKDIR", dir)
	_, _, err := runCmd(t, "worktrees")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "LEASHD_WORKTREES")
	assert.Equal(t, "LEASHD_WORKDIR="+dir+" is not inside a git repository: run `git init` there and commit, or point LEASHD_WORKDIR at a repository", err.Error())
}

// TestServeWithWorktreesRunsEachChatInItsOwn: leashd serve wires
// LEASHD_WORKTREES=on: a chat's first message makes its worktree, and
// leashd worktrees then shows it in use.
func TestServeWithWorktreesRunsEachChatInItsOwn(t *testing.T) {
	repo := gittest.Repo(t)
	state := testenv.PrivateDir(t)
	url, logs, stop := startServe(t, repo, "LEASHD_WORKTREES=on", "LEASHD_DB_PATH="+filepath.Join(state, "leashd.db"))
	m, err := worktree.New(t.Context(), repo, state)
	require.NoError(t, err)
	assert.Contains(t, logs.String(), "each chat works in its own git worktree")

	code, body := postJSON(t, url+"/api/chats/w1/messages", `{"text":"hello"}`)
	require.Less(t, code, 300, body)
	require.Eventually(t, func() bool {
		_, ok, err := m.Lookup(t.Context(), "w1")
		return err == nil && ok
	}, 20*time.Second, 20*time.Millisecond, "no worktree for w1; log:\n%s", logs)
	require.NoError(t, stop())

	out, _, err := runCmd(t, "worktrees")
	require.NoError(t, err)
	assert.Contains(t, out, "w1 ")
	assert.Contains(t, out, "in use")
	assert.Empty(t, gittest.Git(t, repo, "status", "--porcelain"), "the main checkout is untouched")
}
