package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest/gittest"
	"github.com/leashd/leashd/engine/worktree"
	"github.com/leashd/leashd/interactions"
)

// writerAgent's turns write the file the prompt names ("write NAME
// CONTENT") in the session's working directory, as an agent editing
// files would.
func writerAgent() *enginetest.ScriptAgent {
	return &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if rest, ok := strings.CutPrefix(prompt, "write "); ok {
			name, content, _ := strings.Cut(rest, " ")
			if err := os.WriteFile(filepath.Join(s.WorkDir, name), []byte(content+"\n"), 0o644); err != nil {
				return agent.Result{}, err
			}
			h.Text("wrote " + name)
		}
		return agent.Result{Text: "done"}, nil
	}}
}

func startWithWorktrees(t *testing.T, ag *enginetest.ScriptAgent) (*engine.Engine, *enginetest.Conn, string, *worktree.Manager) {
	t.Helper()
	repo := gittest.Repo(t)
	m, err := worktree.New(context.Background(), repo, t.TempDir(), worktree.WithAuthor(worktree.Identity{Name: "Leash Bot", Email: "bot@example.com"}))
	require.NoError(t, err)
	e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = repo }, func(d *engine.Deps, _ *engine.Config) { d.Worktrees = m })
	return e, conn, repo, m
}

func TestEachChatsAgentWorksInItsOwnWorktreeAndMergeBringsOneIn(t *testing.T) {
	ag := writerAgent()
	e, conn, repo, m := startWithWorktrees(t, ag)

	send(t, e, "web:a", "write a.txt from chat a")
	conn.WaitDone(t, 1)
	send(t, e, "web:b", "write b.txt from chat b")
	conn.WaitDone(t, 2)

	opened := ag.Opened()
	require.Len(t, opened, 2)
	a, ok, err := m.Lookup(context.Background(), "web:a")
	require.NoError(t, err)
	require.True(t, ok)
	b, ok, err := m.Lookup(context.Background(), "web:b")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, a.Path, opened[0].WorkDir, "the agent's working directory is the chat's worktree")
	assert.Equal(t, b.Path, opened[1].WorkDir)
	assert.FileExists(t, filepath.Join(a.Path, "a.txt"))
	assert.NoFileExists(t, filepath.Join(a.Path, "b.txt"))
	assert.FileExists(t, filepath.Join(b.Path, "b.txt"))
	assert.NoFileExists(t, filepath.Join(repo, "a.txt"))
	assert.NoFileExists(t, filepath.Join(repo, "b.txt"))
	assert.Empty(t, gittest.Git(t, repo, "status", "--porcelain"), "the main checkout is untouched")

	send(t, e, "web:a", "/status")
	conn.WaitSaid(t, "Working directory: "+a.Path)
	send(t, e, "web:a", "/worktree")
	conn.WaitSaid(t, "Worktree: "+a.Path+"\nBranch: "+a.Branch+"\nBase: main\nChanges against main:\n a.txt | 1 +")

	send(t, e, "web:a", "/merge")
	conn.WaitSaid(t, "Merged "+a.Branch+" into main")
	assert.Equal(t, "from chat a\n", gittest.Read(t, repo, "a.txt"))
	assert.NoFileExists(t, filepath.Join(repo, "b.txt"))
	assert.Equal(t, "write a.txt from chat a", gittest.Git(t, repo, "log", "-1", "--format=%B", a.Branch), "the commit message is the chat's last prompt")
	assert.Equal(t, "Leash Bot", gittest.Git(t, repo, "log", "-1", "--format=%an", "main"))

	send(t, e, "web:a", "/merge")
	conn.WaitSaid(t, "Nothing to merge: main already has everything on "+a.Branch)
}

func TestMergeConflictOrDirtyMainCheckoutChangesNothingAndSaysWhy(t *testing.T) {
	e, conn, repo, _ := startWithWorktrees(t, writerAgent())
	send(t, e, "web:a", "write f.txt chat's version")
	conn.WaitDone(t, 1)
	gittest.Write(t, repo, "f.txt", "base's version\n")
	gittest.Git(t, repo, "commit", "-q", "-am", "base edit")
	head := gittest.Git(t, repo, "rev-parse", "HEAD")

	send(t, e, "web:a", "/merge")
	conn.WaitSaid(t, "Not merged: leashd/"+worktree.Slug("web:a")+" conflicts with main in f.txt. Nothing in the main checkout was changed.")
	assert.Equal(t, head, gittest.Git(t, repo, "rev-parse", "HEAD"))
	assert.Equal(t, "base's version\n", gittest.Read(t, repo, "f.txt"))
	assert.Empty(t, gittest.Git(t, repo, "status", "--porcelain"))

	gittest.Write(t, repo, "README", "uncommitted\n")
	send(t, e, "web:a", "/merge")
	conn.WaitSaid(t, "has uncommitted changes in README. Nothing there was changed.")
	assert.Equal(t, head, gittest.Git(t, repo, "rev-parse", "HEAD"))
	assert.Equal(t, "uncommitted\n", gittest.Read(t, repo, "README"))
}

// TestMergeKeepsThePersonsIgnoredFiles: the agent stops ignoring .env and
// writes one; /merge refuses, naming it, and the person's .env with the
// real key is still theirs.
func TestMergeKeepsThePersonsIgnoredFiles(t *testing.T) {
	ag := writerAgent()
	e, conn, repo, _ := startWithWorktrees(t, ag)
	gittest.Write(t, repo, ".gitignore", ".env\n")
	gittest.Git(t, repo, "add", ".gitignore")
	gittest.Git(t, repo, "commit", "-q", "-m", "ignore .env")
	gittest.Write(t, repo, ".env", "SECRET=the-real-production-key\n")
	send(t, e, "web:a", "write .gitignore ")
	conn.WaitDone(t, 1)
	send(t, e, "web:a", "write .env SECRET=the-agents")
	conn.WaitDone(t, 2)

	send(t, e, "web:a", "/merge")
	conn.WaitSaid(t, "Not merged: leashd/"+worktree.Slug("web:a")+" would write over .env (ignored by git) in the main checkout "+repo+", which git does not track there. Nothing was changed.")
	assert.Equal(t, "SECRET=the-real-production-key\n", gittest.Read(t, repo, ".env"))
	assert.Equal(t, ".env\n", gittest.Read(t, repo, ".gitignore"))
}

func TestDiscardAsksWithButtonsThenRemovesTheWorktreeAndBranch(t *testing.T) {
	ag := writerAgent()
	e, conn, repo, m := startWithWorktrees(t, ag)
	send(t, e, "web:a", "write junk.txt junk")
	conn.WaitDone(t, 1)
	tr, _, err := m.Lookup(context.Background(), "web:a")
	require.NoError(t, err)

	send(t, e, "web:a", "/discard")
	it := conn.WaitShown(t, 1)
	assert.Equal(t, interactions.AnswerApproval, it.AnswerMode(), "two buttons: discard or keep")
	assert.Equal(t, []string{engine.DiscardConfirm, engine.DiscardKeep}, []string{it.Options[0].Label, it.Options[1].Label})
	assert.Equal(t, interactions.StyleDestructive, it.Options[0].Style, "Discard cannot be undone: shown red")
	assert.Empty(t, it.Options[1].Style)
	assert.Contains(t, it.Question, tr.Path)
	assert.Contains(t, it.Question, "1 file changed")
	_, err = e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{engine.DiscardKeep}})
	require.NoError(t, err)
	conn.WaitSaid(t, "Kept the worktree "+tr.Path)
	assert.DirExists(t, tr.Path)

	send(t, e, "web:a", "/discard")
	it = conn.WaitShown(t, 2)
	_, err = e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{engine.DiscardConfirm}})
	require.NoError(t, err)
	conn.WaitSaid(t, "Discarded the worktree and the branch "+tr.Branch)
	assert.NoDirExists(t, tr.Path)
	assert.Empty(t, gittest.Git(t, repo, "branch", "--list", tr.Branch))

	// The next prompt: a fresh session in a new worktree from the base.
	send(t, e, "web:a", "write other.txt x")
	conn.WaitDone(t, 2)
	opened := ag.Opened()
	require.Len(t, opened, 2)
	assert.Empty(t, opened[1].ResumeID)
	assert.Equal(t, tr.Path, opened[1].WorkDir)
	assert.NoFileExists(t, filepath.Join(tr.Path, "junk.txt"))
	assert.FileExists(t, filepath.Join(tr.Path, "other.txt"))
}

func TestClearKeepsTheWorktree(t *testing.T) {
	ag := writerAgent()
	e, conn, _, m := startWithWorktrees(t, ag)
	send(t, e, "web:a", "write kept.txt kept")
	conn.WaitDone(t, 1)
	send(t, e, "web:a", "/clear")
	conn.WaitSaid(t, "This chat's worktree and its changes are kept")
	send(t, e, "web:a", "hello")
	conn.WaitDone(t, 2)
	tr, _, err := m.Lookup(context.Background(), "web:a")
	require.NoError(t, err)
	opened := ag.Opened()
	require.Len(t, opened, 2)
	assert.Empty(t, opened[1].ResumeID, "a fresh agent session")
	assert.Equal(t, tr.Path, opened[1].WorkDir, "on the same files")
	assert.FileExists(t, filepath.Join(tr.Path, "kept.txt"))
}

func TestWorktreeCommandsSayHowToTurnThemOnWhenOff(t *testing.T) {
	dir := t.TempDir()
	e, conn, coord := start(t, writerAgent(), nil, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir })
	for _, cmd := range []string{"/worktree", "/merge", "/discard"} {
		send(t, e, "web:a", cmd)
	}
	conn.WaitFor(t, "three answers", func() bool { return len(conn.Said) == 3 })
	for _, s := range strings.Split(conn.SaidText(), "\n") {
		assert.Equal(t, "web:a|Worktrees are off: every chat's agent works in "+dir+". Set LEASHD_WORKTREES=on (with LEASHD_WORKDIR inside a git repository) to give each chat its own worktree and branch, with /worktree, /merge and /discard.", s)
	}
	assert.Empty(t, coord.Pending("web:a"))
}

func TestADiscardConfirmationInterruptedByARestartIsNotSentToTheAgent(t *testing.T) {
	rec := &fakeRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{}, left: []engine.Interrupted{
		{Ref: "msg-old1", Interaction: interactions.Interaction{ID: "old1", ChatID: "web:a", Kind: interactions.KindQuestion,
			Header: engine.DiscardHeader, Question: "Discard this chat's worktree …?", Approval: true, Index: 1, Total: 1,
			Options: []interactions.Choice{{Label: engine.DiscardConfirm}, {Label: engine.DiscardKeep}}}},
	}}
	ag := writerAgent()
	e, conn, _ := start(t, ag, nil, func(d *engine.Deps, _ *engine.Config) { d.Store = rec })
	waitRestored(t, e, "old1")
	_, err := e.Reply(context.Background(), "old1", interactions.Reply{By: "u1", Answers: []string{engine.DiscardConfirm}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(conn.SaidText(), "send /discard again") }, 10*time.Second, 5*time.Millisecond,
		"the chat is told to ask again: %s", conn.SaidText())
	assert.Contains(t, conn.SaidText(), "nothing was removed")
	assert.Empty(t, ag.Prompts(), "the agent never sees leashd's own confirmation")
}

// TestTurningWorktreesOffBringsChatsBackToTheWorkdir: a chat whose record
// says it worked in its worktree works in LEASHD_WORKDIR once worktrees
// are off.
func TestTurningWorktreesOffBringsChatsBackToTheWorkdir(t *testing.T) {
	store := &recordStore{Store: engine.NewMemStore(), recs: map[string]engine.SessionRecord{
		"web:a": {ChatID: "web:a", AgentSessionID: "s1", Mode: agent.ModeDefault, WorkDir: "/state/worktrees/repo-1/web-a-12345678"},
	}}
	dir := t.TempDir()
	ag := writerAgent()
	e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir }, func(d *engine.Deps, _ *engine.Config) { d.Store = store })
	send(t, e, "web:a", "hello")
	conn.WaitDone(t, 1)
	opened := ag.Opened()
	require.Len(t, opened, 1)
	assert.Equal(t, dir, opened[0].WorkDir)
	assert.Equal(t, "s1", opened[0].ResumeID)
}

// recordStore is an engine.SessionStore holding given records.
type recordStore struct {
	engine.Store // recovery: nothing
	mu           sync.Mutex
	recs         map[string]engine.SessionRecord
}

func (s *recordStore) LoadSession(_ context.Context, chatID string) (engine.SessionRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[chatID]
	return r, ok, nil
}

func (s *recordStore) SaveSession(_ context.Context, rec engine.SessionRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[rec.ChatID] = rec
	return nil
}
