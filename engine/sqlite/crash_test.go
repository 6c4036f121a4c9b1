package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
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

// The crash test runs leashd's engine, coordinator and store in a child
// process (this test binary, re-executed), kills it with SIGKILL while a
// question is pending, and restarts on the same file in this process.
const (
	crashChildEnv = "LEASHD_STORE_TEST_CRASH_CHILD" // the database path
	crashWhenEnv  = "LEASHD_STORE_TEST_CRASH_WHEN"  // "sending", "sent" or "first-turn"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path, os.Getenv(crashWhenEnv))
		os.Exit(3) // not reached: the parent kills it
	}
	os.Exit(m.Run())
}

// say writes a line for the parent to read.
func say(format string, args ...any) { fmt.Fprintf(os.Stdout, format+"\n", args...) }

// stallingConn shows interactions by telling the parent, then (when
// "sending") never returns: the message is on its way when the process
// dies.
type stallingConn struct {
	*enginetest.Conn
	stall bool
}

func (c stallingConn) Present(ctx context.Context, it *interactions.Interaction) (string, error) {
	if c.stall {
		say("sending %s", it.ID)
		hang()
	}
	return "msg-" + it.ID, nil
}

// tellingJournal is the real store, telling the parent what it recorded.
type tellingJournal struct{ *sqlite.Store }

func (j tellingJournal) Presented(ctx context.Context, id, ref string) error {
	err := j.Store.Presented(ctx, id, ref)
	if err == nil {
		say("sent %s", id)
	}
	return err
}

func crashChild(path, when string) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		say("error %v", err)
		return
	}
	coord := interactions.New(interactions.WithJournal(tellingJournal{st}))
	a := newAgent("sess")
	e := enginetest.New(a, coord, func(d *engine.Deps, _ *engine.Config) { d.Store = st })
	c := stallingConn{Conn: enginetest.NewConn("web"), stall: when == "sending"}
	e.AddConnector(c)
	go func() { _ = e.Run(ctx) }()
	in := func(text string) {
		if _, err := e.HandleMessage(ctx, connectors.Incoming{ChatID: "web:phone", UserID: "u1", Text: text}); err != nil {
			say("error %v", err)
		}
	}
	if when == "first-turn" {
		// The chat's very first prompt asks: no turn has ended yet, so
		// only what is saved while it runs can tell the restart which
		// session the question belongs to.
		in("ask")
		hang()
	}
	in("/edit")
	in("hello")
	for len(a.Prompts()) < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	// Wait until the first turn's session is saved, as a person would
	// take a moment before the next message.
	for {
		rec, found, _ := st.LoadSession(ctx, "web:phone")
		if found && rec.AgentSessionID != "" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	in("ask")
	hang()
}

// hang waits for the SIGKILL (sleeping, so the runtime never reports a
// deadlock instead).
func hang() {
	for {
		time.Sleep(time.Hour)
	}
}

func TestRestartAfterSIGKILL(t *testing.T) {
	for _, when := range []string{"sending", "sent"} {
		t.Run("killed while the message is "+when, func(t *testing.T) {
			path := dbPath(t)
			id := crashAfter(t, path, when, when)

			// What the dead process left: the question, pending, recorded
			// before its message was sent; the message's reference once sent.
			ro := open(t, path, sqlite.ReadOnly())
			r := record(t, ro, id)
			assert.Equal(t, "pending", r.Status())
			assert.Equal(t, "Which database?", r.Interaction.Question)
			wantRef := ""
			if when == "sent" {
				wantRef = "msg-" + id
			}
			assert.Equal(t, wantRef, r.Ref)
			require.NoError(t, ro.Close())

			a := newAgent("new")
			l := startLeashd(t, path, a)
			// Start-up recovery marks it interrupted and edits its message.
			ev := l.conn.WaitResolved(t, id)
			assert.Equal(t, interactions.StatusInterrupted, ev.Resolution.Status)
			assert.Equal(t, interactions.InterruptedNotice, ev.Resolution.Text)
			assert.Equal(t, wantRef, ev.Ref)
			assert.Equal(t, "interrupted", record(t, l.st, id).Status())

			// The old button still works.
			out2, err := l.e.Reply(context.Background(), id, interactions.Reply{By: "u1", Answers: []string{"Postgres"}})
			require.NoError(t, err)
			assert.Equal(t, interactions.Resolved, out2)
			a.WaitPrompts(t, 1)
			p := a.Prompts()[0]
			assert.True(t, strings.HasPrefix(p, agent.RecoveredPromptPrefix), p)
			assert.Contains(t, p, `The user answered: "Postgres"`)
			opened := a.Opened()
			require.Len(t, opened, 1)
			assert.Equal(t, "sess-1", opened[0].ResumeID, "the killed run's session is resumed")
			assert.Equal(t, agent.ModeAcceptEdits, opened[0].Mode)
			_, err = l.e.Reply(context.Background(), id, interactions.Reply{By: "u2", Answers: []string{"SQLite"}})
			require.ErrorIs(t, err, interactions.ErrNotPending)

			r = record(t, l.st, id)
			assert.Equal(t, "answered", r.Status())
			assert.Equal(t, "Postgres", r.Resolution.Answer)
			assert.Equal(t, "u1", r.Resolution.By)
			wantEvents := []string{"requested", "interrupted", "recovered"}
			if when == "sent" {
				wantEvents = []string{"requested", "presented", "interrupted", "recovered"}
			}
			assert.Equal(t, wantEvents, events(t, path, id))
		})
	}
}

// crashAfter runs the crash child on path, waits for its line "<line> ID"
// (the question's ID), kills it with SIGKILL and returns the ID.
func crashAfter(t *testing.T, path, when, line string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path, crashWhenEnv+"="+when)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var id string
	for id == "" {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the child ended before asking")
			require.False(t, strings.HasPrefix(l, "error"), l)
			if rest, ok := strings.CutPrefix(l, line+" "); ok {
				id = rest
			}
		case <-time.After(2 * wait):
			_ = cmd.Process.Kill()
			t.Fatal("the child never asked")
		}
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no shutdown at all
	_ = cmd.Wait()
	for range lines { // drain
	}
	return id
}

// TestSIGKILLDuringTheFirstTurnsQuestion: the chat's first prompt asks a
// question and leashd is killed before anyone answers — no turn ever
// ended. The answer given after the restart still reaches the session that
// asked (--resume of its ID), not a new session with no context.
func TestSIGKILLDuringTheFirstTurnsQuestion(t *testing.T) {
	path := dbPath(t)
	id := crashAfter(t, path, "first-turn", "sent")

	ro := open(t, path, sqlite.ReadOnly())
	assert.Equal(t, "pending", record(t, ro, id).Status())
	rec, found, err := ro.LoadSession(context.Background(), "web:phone")
	require.NoError(t, err)
	require.True(t, found, "the chat's session was saved before the question was shown")
	assert.Equal(t, "sess-1", rec.AgentSessionID)
	require.NoError(t, ro.Close())

	a := newAgent("new")
	l := startLeashd(t, path, a)
	ev := l.conn.WaitResolved(t, id)
	assert.Equal(t, interactions.StatusInterrupted, ev.Resolution.Status)
	out, err := l.e.Reply(context.Background(), id, interactions.Reply{By: "u1", Answers: []string{"SQLite"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
	a.WaitPrompts(t, 1)
	assert.Contains(t, a.Prompts()[0], `The user answered: "SQLite"`)
	opened := a.Opened()
	require.Len(t, opened, 1)
	assert.Equal(t, "sess-1", opened[0].ResumeID, "the answer resumes the session that asked")
	assert.Equal(t, agent.ModeDefault, opened[0].Mode)
}
