package claude

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// leashdRun is one run of leashd over a database file: the engine with
// the Claude driver, whose CLI is p (on a runner, in memory).
type leashdRun struct {
	e     *engine.Engine
	coord *interactions.Coordinator
	conn  *enginetest.Conn
	stop  func()
}

func startLeashd(t *testing.T, p *heldProc, db string) *leashdRun {
	t.Helper()
	return startLeashdWaiting(t, p, db, time.Minute)
}

// startLeashdWaiting is startLeashd waiting adoptWithin for agents the
// last run let go of.
func startLeashdWaiting(t *testing.T, p *heldProc, db string, adoptWithin time.Duration) *leashdRun {
	t.Helper()
	store, err := sqlite.Open(context.Background(), db)
	require.NoError(t, err)
	coord := interactions.New(interactions.WithJournal(store), interactions.WithTimeout(time.Hour))
	a := New("claude", WithSandbox(heldSandbox{p}), WithCloseTimeout(time.Second))
	work := filepath.Dir(db)
	e := enginetest.New(a, coord, func(d *engine.Deps, c *engine.Config) {
		d.Store, c.WorkDir, c.AdoptWithin = store, work, adoptWithin
	})
	conn := enginetest.NewConn("web")
	e.AddConnector(conn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	conn.WaitRunning(t)
	r := &leashdRun{e: e, coord: coord, conn: conn}
	r.stop = func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("leashd did not stop")
		}
		store.Close()
	}
	return r
}

// pendingIn waits for n interactions pending in chat.
func pendingIn(t *testing.T, c *interactions.Coordinator, chat string, n int) []interactions.Interaction {
	t.Helper()
	var got []interactions.Interaction
	require.Eventually(t, func() bool {
		got = c.Pending(chat)
		return len(got) == n
	}, 30*time.Second, 5*time.Millisecond, "%d pending in %s", n, chat)
	return got
}

// leashd restarts while the agent, on a runner, waits for a Bash approval:
// the approval is answerable again after the restart, the tap reaches the
// same process as the answer to its own request (no prompt is sent), and
// the turn's end reaches the chat.
func TestRestartedLeashdCarriesTheTurnOn(t *testing.T) {
	p := newHeldProc()
	db := filepath.Join(t.TempDir(), "leashd.db")
	run1 := startLeashd(t, p, db)
	_, err := run1.e.HandleMessage(context.Background(), connectors.Incoming{ChatID: "chat1", UserID: "u1", Text: "list the files"})
	require.NoError(t, err)
	initReq := readStdin(t, p)
	require.Equal(t, "control_request", initReq["type"], "the handshake")
	p.write(t, map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": initReq["request_id"], "response": map[string]any{}}})
	assert.Equal(t, "user", readStdin(t, p)["type"])
	p.write(t, canUseTool("req-1", "ls -la"))
	asked := pendingIn(t, run1.coord, "chat1", 1)[0]
	assert.Equal(t, "req-1", asked.AgentRef)

	run1.stop()
	select {
	case b := <-p.stdin:
		t.Fatalf("the agent heard from the stopping leashd: %s", b)
	default:
	}
	assert.Empty(t, p.signals, "nothing signalled: it runs on")

	run2 := startLeashd(t, p, db)
	defer run2.stop()
	restored := pendingIn(t, run2.coord, "chat1", 1)[0]
	assert.Equal(t, asked.ID, restored.ID, "the same interaction, answerable again")
	run2.e.Adopt("chat1")
	run2.conn.WaitSaid(t, "carries on where it was")
	// The request, read again, joins it: the tap reaches the process as
	// the answer to that request, and nothing new is asked.
	_, err = run2.coord.Reply(asked.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	resp := readStdin(t, p)
	b, _ := json.Marshal(resp)
	assert.Contains(t, string(b), `"request_id":"req-1"`, "the answer to its own request")
	assert.Contains(t, string(b), `"behavior":"allow"`)
	assert.Empty(t, run2.coord.Pending("chat1"), "nothing else was asked")
	p.write(t, map[string]any{"type": "result", "subtype": "success", "result": "a.txt b.txt", "session_id": "sid-1"})
	sum := run2.conn.WaitDone(t, 1)
	assert.Equal(t, "a.txt b.txt", sum.Result)
	select {
	case b := <-p.stdin:
		assert.NotContains(t, string(b), `"type":"user"`, "no prompt: the answer went to the request")
	case <-time.After(200 * time.Millisecond):
	}
	assert.False(t, strings.Contains(run2.conn.SaidText(), "stopped unexpectedly"))
}

// A runner's word alone opens no conversation: an agent it holds for a
// chat this leashd never ran one for is not adopted.
func TestAgentForAnUnknownChatIsNotAdopted(t *testing.T) {
	p := newHeldProc()
	db := filepath.Join(t.TempDir(), "leashd.db")
	run := startLeashd(t, p, db)
	run.e.Adopt("chat1")
	run.stop() // waits for the adoption to have run its course
	p.mu.Lock()
	attached := p.cur != nil
	p.mu.Unlock()
	assert.False(t, attached, "the held process was not taken")
	assert.Empty(t, run.conn.SaidText(), "nothing said in a chat nobody started")
}

// An agent idle between turns outlives the restart too: it is adopted
// idle (nothing said), and the next prompt goes to that same process,
// without a new handshake.
func TestIdleAgentIsAdoptedForTheNextPrompt(t *testing.T) {
	p := newHeldProc()
	db := filepath.Join(t.TempDir(), "leashd.db")
	idleLetGo(t, p, db)

	run2 := startLeashd(t, p, db)
	defer run2.stop()
	run2.e.Adopt("chat1")
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.cur != nil && p.cur.base == p.acked
	}, 30*time.Second, 5*time.Millisecond, "adopted")
	_, err := run2.e.HandleMessage(context.Background(), connectors.Incoming{ChatID: "chat1", UserID: "u1", Text: "and again"})
	require.NoError(t, err)
	next := readStdin(t, p)
	assert.Equal(t, "user", next["type"], "the prompt, with no handshake first: the same process")
	p.write(t, map[string]any{"type": "result", "subtype": "success", "result": "hi again", "session_id": "sid-1"})
	assert.Equal(t, "hi again", run2.conn.WaitDone(t, 1).Result)
	assert.NotContains(t, run2.conn.SaidText(), "carries on", "nothing to carry on: it was idle")
}

// idleLetGo runs leashd once: chat1's agent answers a prompt, and the run
// stops, letting go of it idle.
func idleLetGo(t *testing.T, p *heldProc, db string) {
	t.Helper()
	run1 := startLeashd(t, p, db)
	_, err := run1.e.HandleMessage(context.Background(), connectors.Incoming{ChatID: "chat1", UserID: "u1", Text: "hello"})
	require.NoError(t, err)
	initReq := readStdin(t, p)
	p.write(t, map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": initReq["request_id"], "response": map[string]any{}}})
	assert.Equal(t, "user", readStdin(t, p)["type"])
	p.write(t, map[string]any{"type": "result", "subtype": "success", "result": "hi", "session_id": "sid-1"})
	run1.conn.WaitDone(t, 1)
	run1.stop()
}

// A message sent after a restart but before the runner is back waits for
// the agent the last run let go of (starting another would end it and
// the turn it may be in): the chat is told why, and once the agent is
// adopted the message goes to that same process.
func TestPromptBeforeTheRunnerIsBackWaitsForTheAgent(t *testing.T) {
	p := newHeldProc()
	db := filepath.Join(t.TempDir(), "leashd.db")
	idleLetGo(t, p, db)

	run2 := startLeashd(t, p, db)
	defer run2.stop()
	_, err := run2.e.HandleMessage(context.Background(), connectors.Incoming{ChatID: "chat1", UserID: "u1", Text: "are you there?"})
	require.NoError(t, err)
	run2.conn.WaitSaid(t, "chat1|leashd restarted; your agent kept running on its runner, which has not reconnected yet.")
	select {
	case b := <-p.stdin:
		t.Fatalf("another agent was started meanwhile: %s", b)
	case <-time.After(100 * time.Millisecond):
	}
	run2.e.Adopt("chat1")
	next := readStdin(t, p)
	assert.Equal(t, "user", next["type"], "the message, with no handshake first: the same process")
	b, _ := json.Marshal(next)
	assert.Contains(t, string(b), "are you there?")
	p.write(t, map[string]any{"type": "result", "subtype": "success", "result": "yes", "session_id": "sid-1"})
	assert.Equal(t, "yes", run2.conn.WaitDone(t, 1).Result)
}

// An agent not back in time is not waited for longer: the message starts
// a new agent (resuming the session) once the wait is over.
func TestPromptStartsANewAgentWhenTheOldOneIsNotBack(t *testing.T) {
	p := newHeldProc()
	db := filepath.Join(t.TempDir(), "leashd.db")
	idleLetGo(t, p, db)

	run2 := startLeashdWaiting(t, p, db, 5*time.Second)
	defer run2.stop()
	_, err := run2.e.HandleMessage(context.Background(), connectors.Incoming{ChatID: "chat1", UserID: "u1", Text: "are you there?"})
	require.NoError(t, err)
	first := readStdin(t, p)
	assert.Equal(t, "control_request", first["type"], "a new agent's handshake, once the wait is over")
	assert.Contains(t, run2.conn.SaidText(), "has not reconnected yet", "the chat was told why it waited")
}
