package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// The restart tests run the real engine and coordinator on a real SQLite
// file, with a scripted agent, stop them (gracefully here, by SIGKILL in
// crash_test.go), start new ones on the same file and tap the old button.

// askDB is the AskUserQuestion input the scripted agent sends for "ask".
var askDB = json.RawMessage(`{"questions":[{"header":"DB","question":"Which database?","multiSelect":false,` +
	`"options":[{"label":"Postgres","description":"big"},{"label":"SQLite","description":"small"}]}]}`)

// planInput is the ExitPlanMode input the scripted agent sends for "plan";
// bashInput the Bash call it asks to run for "tool".
var (
	planInput = json.RawMessage(`{"plan":"# Plan\n- add the cache"}`)
	bashInput = json.RawMessage(`{"command":"npm test | tee out.txt"}`)
)

// newAgent returns a scripted agent whose sessions are named
// <prefix>-1, …: "ask" asks which database (and reports the answer as its
// result), "plan" asks for a plan review, "tool" to run a Bash command;
// anything else is answered at once.
func newAgent(prefix string) *enginetest.ScriptAgent {
	return &enginetest.ScriptAgent{IDPrefix: prefix, Turn: restartTurn}
}

// restartTurn is the scripted agent's turn.
func restartTurn(ctx context.Context, _ *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
	req := agent.PermissionRequest{ToolName: agent.ToolAskUserQuestion, Input: askDB, ToolUseID: "toolu_1"}
	switch prompt {
	case "ask":
	case "plan":
		req = agent.PermissionRequest{ToolName: agent.ToolExitPlanMode, Input: planInput, ToolUseID: "toolu_1"}
	case "tool":
		req = agent.PermissionRequest{ToolName: "Bash", Input: bashInput, ToolUseID: "toolu_1"}
	default:
		h.Text("ok: " + prompt)
		return agent.Result{Text: "ok", Subtype: "success"}, nil
	}
	resp := h.Permission(ctx, req)
	if !resp.Allow {
		return agent.Result{Text: resp.Message, Subtype: "error_during_execution", IsError: true}, nil
	}
	return agent.Result{Text: "using " + string(resp.UpdatedInput), Subtype: "success"}, nil
}

// leashd is one run of leashd in this process: a store, a coordinator
// journaling to it, and the engine using it for sessions and recovery.
type leashd struct {
	st    *sqlite.Store
	coord *interactions.Coordinator
	e     *engine.Engine
	conn  *enginetest.Conn
	agent *enginetest.ScriptAgent
	stop  func()
}

// startLeashd starts a run on path; wrap, when given, stands between the
// engine and the store's recovery (to delay it).
func startLeashd(t testing.TB, path string, a *enginetest.ScriptAgent, wrap ...func(engine.Store) engine.Store) *leashd {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	require.NoError(t, err)
	coord := interactions.New(interactions.WithJournal(st))
	var rec engine.Store = st
	for _, w := range wrap {
		rec = w(rec)
	}
	e := enginetest.New(a, coord, func(d *engine.Deps, _ *engine.Config) { d.Store = st }, func(d *engine.Deps, _ *engine.Config) { d.Store = rec }, func(_ *engine.Deps, c *engine.Config) { c.CloseTimeout = 5 * time.Second })
	c := enginetest.NewConn("web")
	e.AddConnector(c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	l := &leashd{st: st, coord: coord, e: e, conn: c, agent: a}
	var once sync.Once
	l.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				assert.NoError(t, err)
			case <-time.After(2 * wait):
				t.Error("engine did not stop")
			}
			assert.NoError(t, st.Close())
		})
	}
	t.Cleanup(l.stop)
	return l
}

// waitPending waits until the start-up has registered id again.
func (l *leashd) waitPending(t testing.TB, id string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, ok := l.e.Interaction(id)
		return ok
	}, wait, time.Millisecond, "%s is not pending again after the restart", id)
}

func (l *leashd) send(t testing.TB, chatID, text string) {
	t.Helper()
	_, err := l.e.HandleMessage(context.Background(), connectors.Incoming{ChatID: chatID, UserID: "u1", Text: text})
	require.NoError(t, err)
}

// TestRestartRecoversAPendingQuestion: a question is pending when leashd
// shuts down; after the restart, a tap on its old button reaches the agent
// in the resumed session, once, however often it is tapped.
func TestRestartRecoversAPendingQuestion(t *testing.T) {
	path := dbPath(t)
	const chat = "web:phone"

	// Run 1: switch to plan mode, one finished turn (the session gets its
	// ID), then a question left pending.
	a1 := newAgent("sess")
	l1 := startLeashd(t, path, a1)
	l1.send(t, chat, "/plan")
	l1.conn.WaitFor(t, "the mode reply", func() bool { return len(l1.conn.Said) > 0 })
	l1.send(t, chat, "hello")
	a1.WaitPrompts(t, 1)
	l1.send(t, chat, "ask")
	q := l1.conn.WaitShown(t, 1)
	assert.Equal(t, "Which database?", q.Question)
	assert.Equal(t, "pending", record(t, l1.st, q.ID).Status(), "recorded while it waits")

	l1.stop() // graceful shutdown with the question pending
	rs := a1.WaitResponses(t, 1)
	assert.False(t, rs[0].Allow, "the interrupted question is not answered")
	opened1 := a1.Opened()
	require.NotEmpty(t, opened1)
	assert.Equal(t, agent.ModePlan, opened1[0].Mode)

	// Between the runs, the file says what happened.
	ro := open(t, path, sqlite.ReadOnly())
	r := record(t, ro, q.ID)
	assert.Equal(t, "interrupted", r.Status())
	assert.Equal(t, "msg-"+q.ID, r.Ref)
	sess, found, err := ro.LoadSession(context.Background(), chat)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "sess-1", sess.AgentSessionID)
	assert.Equal(t, agent.ModePlan, sess.Mode)

	// Run 2 on the same file: a person taps the old button, several times
	// at once (a double tap, a second person, a retried webhook).
	a2 := newAgent("new")
	l2 := startLeashd(t, path, a2)
	l2.waitPending(t, q.ID) // registered again at start-up
	winner := tapAtOnce(t, l2, q.ID, 8)

	a2.WaitPrompts(t, 1)
	prompts := a2.Prompts()
	require.Len(t, prompts, 1, "the agent gets the answer once")
	assert.True(t, strings.HasPrefix(prompts[0], agent.RecoveredPromptPrefix), prompts[0])
	assert.Contains(t, prompts[0], `"Which database?"`)
	assert.Contains(t, prompts[0], `The user answered: "SQLite"`)
	opened2 := a2.Opened()
	require.Len(t, opened2, 1)
	assert.Equal(t, "sess-1", opened2[0].ResumeID, "the chat's session is resumed")
	assert.Equal(t, agent.ModePlan, opened2[0].Mode, "in the mode it had")

	ev := l2.conn.WaitResolved(t, q.ID)
	assert.Equal(t, "msg-"+q.ID, ev.Ref, "the old message is edited")
	assert.Equal(t, "SQLite", ev.Resolution.Answer)

	r = record(t, l2.st, q.ID)
	assert.Equal(t, "answered", r.Status())
	assert.Equal(t, "SQLite", r.Resolution.Answer)
	assert.Equal(t, winner, r.Resolution.By)
	assert.False(t, r.InterruptedAt.IsZero())
	assert.False(t, r.RecoveredAt.IsZero())

	// A tap after that, sequentially, is still refused and sends nothing.
	_, err = l2.e.Reply(context.Background(), q.ID, interactions.Reply{By: "late", Answers: []string{"Postgres"}})
	require.ErrorIs(t, err, interactions.ErrNotPending)
	_, err = l2.e.Reply(context.Background(), "neverwas", interactions.Reply{By: "late", Answers: []string{"Postgres"}})
	require.ErrorIs(t, err, interactions.ErrNotFound)
	a2.WaitPrompts(t, 1)
	l2.stop()
	assert.Len(t, a2.Prompts(), 1)
}

// tapAtOnce answers question id with taps concurrent replies and returns
// who the one that counted was; every other tap must be refused.
func tapAtOnce(t *testing.T, l *leashd, id string, taps int) string {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, taps)
	for i := range taps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := l.e.Reply(context.Background(), id, interactions.Reply{By: fmt.Sprintf("tapper-%d", i), Answers: []string{"SQLite"}})
			if err == nil {
				assert.Equal(t, interactions.Resolved, out)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	ok, winner := 0, ""
	for i, err := range errs {
		if err == nil {
			ok++
			winner = fmt.Sprintf("tapper-%d", i)
			continue
		}
		assert.ErrorIs(t, err, interactions.ErrNotPending, "a duplicate tap is told it was answered")
	}
	require.Equal(t, 1, ok, "exactly one tap counts: %v", errs)
	return winner
}

// TestRestartKeepsSessionsAndQuestionsAskedAfterIt: sessions survive a
// restart; a question asked in the new run is not mistaken for a leftover
// (the start-up recovery runs while connectors already take messages).
func TestRestartKeepsSessionsAndQuestionsAskedAfterIt(t *testing.T) {
	path := dbPath(t)
	a1 := newAgent("sess")
	l1 := startLeashd(t, path, a1)
	l1.send(t, "web:a", "/edit")
	l1.send(t, "web:a", "hello")
	l1.send(t, "web:b", "hello")
	a1.WaitPrompts(t, 2)
	l1.stop()

	a2 := newAgent("new")
	l2 := startLeashd(t, path, a2)
	l2.send(t, "web:a", "ask")
	q := l2.conn.WaitShown(t, 1)
	_, err := l2.e.Reply(context.Background(), q.ID, interactions.Reply{By: "u1", Answers: []string{"Postgres"}})
	require.NoError(t, err)
	rs := a2.WaitResponses(t, 1)
	assert.True(t, rs[0].Allow)
	assert.Contains(t, string(rs[0].UpdatedInput), `"Which database?":"Postgres"`)

	opened := a2.Opened()
	require.Len(t, opened, 1)
	assert.Equal(t, agent.ModeAcceptEdits, opened[0].Mode)
	assert.Regexp(t, `^sess-[12]$`, opened[0].ResumeID)
	l2.stop()

	ro := open(t, path, sqlite.ReadOnly())
	r := record(t, ro, q.ID)
	assert.Equal(t, "answered", r.Status())
	assert.True(t, r.InterruptedAt.IsZero(), "never interrupted")
	b, found, err := ro.LoadSession(context.Background(), "web:b")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, agent.ModeDefault, b.Mode)
	assert.NotEqual(t, opened[0].ResumeID, b.AgentSessionID, "each chat has its own session")
}

// slowRecovery holds the start-up Interrupt until released.
type slowRecovery struct {
	engine.Store
	release <-chan struct{}
	called  chan<- struct{}
}

func (r slowRecovery) Interrupt(ctx context.Context) ([]engine.Interrupted, error) {
	r.called <- struct{}{}
	<-r.release
	return r.Store.Interrupt(ctx)
}

// TestTapArrivingBeforeStartupRecovery: after a crash, the tap a person
// made while leashd was down arrives as soon as the connector polls. The
// connectors start only once the start-up has registered the leftovers
// again, so that tap finds its interaction pending: it reaches the agent,
// and the message is not marked "restarted" afterwards.
func TestTapArrivingBeforeStartupRecovery(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s1 := open(t, path)
	q := question("crashq1", "web:phone", t0)
	require.NoError(t, s1.Requested(ctx, q))
	require.NoError(t, s1.Presented(ctx, q.ID, "msg-crashq1"))
	require.NoError(t, s1.SaveSession(ctx, engine.SessionRecord{ChatID: "web:phone", AgentSessionID: "sess-old", Mode: agent.ModePlan}))
	require.NoError(t, s1.Close()) // the crash: nothing settled it

	release, called := make(chan struct{}), make(chan struct{}, 1)
	a := newAgent("new")
	l := startLeashd(t, path, a, func(r engine.Store) engine.Store {
		return slowRecovery{Store: r, release: release, called: called}
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the engine stops, even when the test fails
	<-called           // the engine is starting; recovery has not marked anything yet
	assert.False(t, l.conn.Running(), "no connector takes updates before the leftovers are registered again")
	unblock()
	l.conn.WaitRunning(t)
	_, pending := l.e.Interaction(q.ID)
	require.True(t, pending, "registered again before the connector started")
	out, err := l.e.Reply(ctx, q.ID, interactions.Reply{By: "1001", Answers: []string{"SQLite"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
	a.WaitPrompts(t, 1)
	assert.Contains(t, a.Prompts()[0], `The user answered: "SQLite"`)
	assert.Equal(t, "sess-old", a.Opened()[0].ResumeID)

	l.conn.WaitFor(t, "the answer shown", func() bool {
		for _, u := range l.conn.Updates {
			if u.Interaction.ID == q.ID && u.Resolution.Status == interactions.StatusAnswered {
				return u.Ref == "msg-crashq1"
			}
		}
		return false
	})
	l.stop()
	l.conn.Lock()
	defer l.conn.Unlock()
	last := l.conn.Updates[len(l.conn.Updates)-1]
	assert.Equal(t, interactions.StatusAnswered, last.Resolution.Status, "the answered message is not marked restarted afterwards")
	ro, err := sqlite.Open(ctx, path, sqlite.ReadOnly())
	require.NoError(t, err)
	defer ro.Close()
	assert.Equal(t, "answered", record(t, ro, q.ID).Status())
}
