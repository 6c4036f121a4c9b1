package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/worktree"
	"github.com/leashd/leashd/interactions"
)

// warmAgent is a script agent whose sessions are worth prewarming; while
// hold is set, spares (opened without a chat) do not finish starting
// until their context ends.
type warmAgent struct {
	*enginetest.ScriptAgent
	mu   sync.Mutex
	hold bool
	// cancelled counts spare starts that were cancelled.
	cancelled int
}

func (a *warmAgent) Prewarm() bool { return true }

func (a *warmAgent) Open(ctx context.Context, o agent.SessionOptions) (agent.Session, error) {
	a.mu.Lock()
	hold := a.hold && o.ChatID == ""
	a.mu.Unlock()
	if hold {
		<-ctx.Done()
		a.mu.Lock()
		a.cancelled++
		a.mu.Unlock()
		return nil, ctx.Err()
	}
	return a.ScriptAgent.Open(ctx, o)
}

func (a *warmAgent) cancelledCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cancelled
}

// ranIn records which agent session each chat's turn ran in.
type ranIn struct {
	mu sync.Mutex
	m  map[string]string // prompt → session ID
}

func newWarmAgent() (*warmAgent, *ranIn) {
	r := &ranIn{m: map[string]string{}}
	a := &enginetest.ScriptAgent{Turn: func(_ context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		r.mu.Lock()
		r.m[prompt] = s.ID()
		r.mu.Unlock()
		h.Text("ok")
		return agent.Result{Text: "ok", Subtype: "success"}, nil
	}}
	return &warmAgent{ScriptAgent: a}, r
}

func (r *ranIn) get(prompt string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[prompt]
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, what)
}

// A spare session is started at once; a new chat's first prompt runs in
// it (no start of its own), and another spare is started in its place.
// Spares hold slots: the chat's session and the new spare are two.
func TestPrewarmedSessionServesANewChat(t *testing.T) {
	a, ran := newWarmAgent()
	e, conn, _ := start(t, a, nil, func(_ *engine.Deps, c *engine.Config) { c.Prewarm = 1 }, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = 3 }, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = "/srv" }, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModeAcceptEdits })
	eventually(t, "a spare is started", func() bool { return len(a.Opened()) == 1 })
	spare := a.Opened()[0]
	assert.Equal(t, agent.SessionOptions{Mode: agent.ModeAcceptEdits, WorkDir: "/srv"}, withoutNotice(spare), "a spare starts in the default mode and the working directory, with no chat yet")
	assert.Equal(t, 1, e.SessionsActive(), "the spare holds a slot")

	send(t, e, "web:a", "first prompt")
	conn.WaitFor(t, "the turn's summary", func() bool { return len(conn.Summaries) == 1 })
	assert.Equal(t, "sess-1", ran.get("first prompt"), "the chat's first turn ran in the spare")
	eventually(t, "a new spare replaces the used one", func() bool { return len(a.Opened()) == 2 })
	assert.Empty(t, a.Opened()[1].ChatID, "the second session opened is a spare too: the chat opened none of its own")
	eventually(t, "the chat's session and the new spare hold two slots", func() bool { return e.SessionsActive() == 2 })
}

func withoutNotice(o agent.SessionOptions) agent.SessionOptions {
	o.Notice = nil
	return o
}

// A chat that resumes its agent session, or works in another mode, cannot
// use a spare (it needs its own session ID or mode): it starts its own,
// and the spare waits for the next new chat.
func TestPrewarmedSessionNotForResumedOrOtherModeChats(t *testing.T) {
	a, ran := newWarmAgent()
	st := &recordStore{Store: engine.NewMemStore(), recs: map[string]engine.SessionRecord{
		"web:old":  {ChatID: "web:old", AgentSessionID: "resume-me", Mode: agent.ModeDefault},
		"web:plan": {ChatID: "web:plan", Mode: agent.ModePlan},
	}}
	e, conn, _ := start(t, a, nil, func(_ *engine.Deps, c *engine.Config) { c.Prewarm = 1 }, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = 4 }, func(d *engine.Deps, _ *engine.Config) { d.Store = st })
	eventually(t, "a spare is started", func() bool { return len(a.Opened()) == 1 })

	send(t, e, "web:old", "resumed")
	conn.WaitFor(t, "the resumed turn's summary", func() bool { return len(conn.Summaries) == 1 })
	assert.Equal(t, "resume-me", ran.get("resumed"))
	send(t, e, "web:plan", "planning")
	conn.WaitFor(t, "the plan turn's summary", func() bool { return len(conn.Summaries) == 2 })
	assert.NotEqual(t, "sess-1", ran.get("planning"))
	opened := a.Opened()
	require.Len(t, opened, 3, "the spare and one session of each chat's own")
	assert.Equal(t, "resume-me", opened[1].ResumeID)
	assert.Equal(t, agent.ModePlan, opened[2].Mode)

	send(t, e, "web:new", "fresh")
	conn.WaitFor(t, "the new chat's summary", func() bool { return len(conn.Summaries) == 3 })
	assert.Equal(t, "sess-1", ran.get("fresh"), "the spare served the next new chat")
}

// At the concurrency limit a spare never makes a real chat wait: a chat
// it cannot serve takes its slot at once (the spare is closed), and is not
// told that every slot is busy.
func TestPrewarmedSessionGivesItsSlotUpAtTheLimit(t *testing.T) {
	a, ran := newWarmAgent()
	st := &recordStore{Store: engine.NewMemStore(), recs: map[string]engine.SessionRecord{"web:plan": {ChatID: "web:plan", Mode: agent.ModePlan}}}
	e, conn, _ := start(t, a, nil, func(_ *engine.Deps, c *engine.Config) { c.Prewarm = 1 }, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = 1 }, func(d *engine.Deps, _ *engine.Config) { d.Store = st })
	eventually(t, "a spare is started", func() bool { return len(a.Opened()) == 1 })
	spare := a.Sessions()[0]

	send(t, e, "web:plan", "planning")
	conn.WaitFor(t, "the turn's summary", func() bool { return len(conn.Summaries) == 1 })
	assert.True(t, spare.Closed(), "the spare was closed for the chat's slot")
	assert.Equal(t, "sess-2", ran.get("planning"))
	assert.NotContains(t, conn.SaidText(), "agent slots are busy")
	assert.Equal(t, 1, e.SessionsActive(), "never more than the limit")
}

// A spare still starting gives its slot up too: its start is cancelled.
func TestPrewarmStartingSpareGivesItsSlotUp(t *testing.T) {
	a, ran := newWarmAgent()
	a.hold = true
	st := &recordStore{Store: engine.NewMemStore(), recs: map[string]engine.SessionRecord{"web:plan": {ChatID: "web:plan", Mode: agent.ModePlan}}}
	e, conn, _ := start(t, a, nil, func(_ *engine.Deps, c *engine.Config) { c.Prewarm = 1 }, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = 1 }, func(d *engine.Deps, _ *engine.Config) { d.Store = st })
	eventually(t, "the spare holds the only slot", func() bool { return e.SessionsActive() == 1 })

	send(t, e, "web:plan", "planning")
	conn.WaitFor(t, "the turn's summary", func() bool { return len(conn.Summaries) == 1 })
	assert.Equal(t, 1, a.cancelledCount(), "the spare's start was cancelled")
	assert.Equal(t, "sess-1", ran.get("planning"), "the chat's own session")
	assert.NotContains(t, conn.SaidText(), "agent slots are busy")
}

// With worktrees every chat works in a directory of its own: no spares.
// Without LEASHD_PREWARM, or with an agent that does not prewarm, none.
func TestPrewarmOffWhenSparesCannotServe(t *testing.T) {
	for name, opts := range map[string][]enginetest.Setup{
		"prewarm 0": {func(_ *engine.Deps, c *engine.Config) { c.Prewarm = 0 }},
		"worktrees": {func(_ *engine.Deps, c *engine.Config) { c.Prewarm = 2 }, func(d *engine.Deps, _ *engine.Config) { d.Worktrees = nopTrees{} }},
	} {
		t.Run(name, func(t *testing.T) {
			a, _ := newWarmAgent()
			e, conn, _ := start(t, a, nil, opts...)
			send(t, e, "web:a", "hi")
			conn.WaitFor(t, "the turn's summary", func() bool { return len(conn.Summaries) == 1 })
			opened := a.Opened()
			require.Len(t, opened, 1)
			assert.Equal(t, "web:a", opened[0].ChatID)
		})
	}
	t.Run("agent without prewarm", func(t *testing.T) {
		a, _ := newWarmAgent()
		e, conn, _ := start(t, a.ScriptAgent, nil, func(_ *engine.Deps, c *engine.Config) { c.Prewarm = 2 })
		send(t, e, "web:a", "hi")
		conn.WaitFor(t, "the turn's summary", func() bool { return len(conn.Summaries) == 1 })
		require.Len(t, a.Opened(), 1)
	})
}

// Stopping the engine closes its spares.
func TestPrewarmedSessionsClosedAtShutdown(t *testing.T) {
	a, _ := newWarmAgent()
	e := enginetest.New(a, interactions.New(), func(_ *engine.Deps, c *engine.Config) { c.Prewarm = 2 }, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = 4 })
	e.AddConnector(enginetest.NewConn("web"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	eventually(t, "two spares are started", func() bool { return len(a.Opened()) == 2 })
	cancel()
	require.NoError(t, <-done)
	for _, s := range a.Sessions() {
		assert.True(t, s.Closed(), "spare %s closed", s.ID())
	}
}

// nopTrees gives every chat a worktree path of its own, without git.
type nopTrees struct{}

func (nopTrees) Ensure(_ context.Context, chatID string) (worktree.Tree, error) {
	return worktree.Tree{Chat: chatID, Path: "/trees/" + chatID}, nil
}
func (nopTrees) Status(context.Context, string) (worktree.Status, error) {
	return worktree.Status{}, nil
}
func (nopTrees) Merge(context.Context, string, string) (worktree.MergeResult, error) {
	return worktree.MergeResult{}, nil
}
func (nopTrees) Discard(context.Context, string) error { return nil }
