package claude_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// A tool call allowed after a restart is not asked about again: leashd
// stops with a Bash approval pending, a new leashd starts on the same
// database, the person taps Allow on the old message, the agent reads "Run
// it again" and re-issues the identical call — which the engine allows
// without showing anything, once, recording it linked to the tap. The same
// call a third time is asked about as usual.
func TestE2EAllowedAfterRestartIsNotAskedAgain(t *testing.T) {
	t.Run("SIGKILL", func(t *testing.T) { allowedAfterRestart(t, true) })
	t.Run("graceful stop", func(t *testing.T) { allowedAfterRestart(t, false) })
}

// deadJournal is the store as a killed leashd leaves it: after die, the
// dying process records nothing more.
type deadJournal struct {
	*sqlite.Store
	dead atomic.Bool
}

func (j *deadJournal) Requested(ctx context.Context, it interactions.Interaction) error {
	if j.dead.Load() {
		return nil
	}
	return j.Store.Requested(ctx, it)
}

func (j *deadJournal) Presented(ctx context.Context, id, ref string) error {
	if j.dead.Load() {
		return nil
	}
	return j.Store.Presented(ctx, id, ref)
}

func (j *deadJournal) Resolved(ctx context.Context, it interactions.Interaction, res interactions.Resolution) error {
	if j.dead.Load() {
		return nil
	}
	return j.Store.Resolved(ctx, it, res)
}

func (j *deadJournal) SaveSession(ctx context.Context, rec engine.SessionRecord) error {
	if j.dead.Load() {
		return nil
	}
	return j.Store.SaveSession(ctx, rec)
}

func allowedAfterRestart(t *testing.T, kill bool) {
	const touch = "touch made-after-restart.txt"
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "leashd.db")
	open := func() *sqlite.Store {
		st, err := sqlite.Open(ctx, path)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	first := &deadJournal{Store: open()}
	s1, stop1 := newAgentStack(t, nil, []interactions.Opt{interactions.WithJournal(first)},
		func(d *engine.Deps, _ *engine.Config) { d.Store = first }, func(d *engine.Deps, _ *engine.Config) { d.Store = first.Store })
	bash := func() fakeapi.Reply { return fakeapi.Tool("Bash", map[string]string{"command": touch}) }
	s1.api.Reply(bash())
	s1.send(t, "touch the file")
	it := s1.conn.WaitShown(t, 1)
	require.Equal(t, "Bash", it.ToolName)
	s1.waitTranscript(t, "touch the file")
	if kill {
		// Killed, leashd records nothing more and its CLI dies too.
		first.dead.Store(true)
		s1.killLast(t)
	}
	require.NoError(t, stop1())
	pending, err := first.Audit(ctx, sqlite.AuditFilter{Status: "pending"})
	require.NoError(t, err)
	assert.Equal(t, kill, len(pending) == 1, "a killed leashd leaves the approval pending in the database")

	// The next leashd opens the database anew, as a new process does.
	st := open()
	s2, stop2 := restartStack(t, s1, nil, []interactions.Opt{interactions.WithJournal(st)},
		func(d *engine.Deps, _ *engine.Config) { d.Store = st })
	t.Cleanup(func() { require.NoError(t, stop2()) })
	s2.api.Then(func(r *fakeapi.Request) fakeapi.Reply {
		if !r.HasUserText(agent.RecoveredPromptPrefix) || !r.HasUserText("Run it again to continue") {
			return fakeapi.Text("unexpected: no recovered answer")
		}
		return bash() // the agent runs it again, as told
	})
	s2.api.Reply(bash(), fakeapi.Text("Done."))
	// The new engine restores what the last run left pending before it
	// takes taps from any chat app.
	require.Eventually(t, func() bool { _, ok := s2.e.Interaction(it.ID); return ok }, 10*time.Second, 5*time.Millisecond,
		"the approval is pending again after the restart")
	s2.tap(t, it.ID, interactions.DecisionAllow)

	again := s2.conn.WaitShown(t, 1) // the third identical call is asked about
	assert.Equal(t, touch, again.ToolSummary)
	assert.FileExists(t, filepath.Join(s2.dir, "made-after-restart.txt"), "the re-issued call ran before anyone was asked again")
	s2.tap(t, again.ID, interactions.DecisionDeny)
	assert.Equal(t, "Done.", s2.conn.WaitDone(t, 1).Result)
	assert.Equal(t, 1, s2.conn.ShownCount(), "only the third call was shown")
	assert.Equal(t, []string{"Bash", "Bash"}, s2.asked(), "the CLI asked about both calls; leashd answered the first itself")
	starts := s2.starts(t)
	require.Len(t, starts, 2)
	assert.Contains(t, starts[1], "--resume ", "the recovered answer goes to the resumed session")

	calls := s2.api.Calls()
	require.GreaterOrEqual(t, len(calls), 4)
	n := len(calls)
	rerun, ok := calls[n-2].ToolResult(calls[n-3].Reply.Tools[0].ID)
	require.True(t, ok)
	assert.False(t, rerun.IsError, "the re-issued call ran: %s", rerun.ResultText())
	third, ok := calls[n-1].ToolResult(calls[n-2].Reply.Tools[0].ID)
	require.True(t, ok)
	assert.True(t, third.IsError, "the third call was denied: %s", third.ResultText())

	assertAllowedAgainAudit(t, st, it.ID, again.ID)
}

// assertAllowedAgainAudit checks the audit after the restart: the tap on
// the old message (first), the call leashd allowed again, linked to it,
// and the third call (again), asked about as usual.
func assertAllowedAgainAudit(t *testing.T, st *sqlite.Store, first, again string) {
	t.Helper()
	recs, err := st.Audit(context.Background(), sqlite.AuditFilter{Kind: interactions.KindToolApproval})
	require.NoError(t, err)
	require.Len(t, recs, 3)
	assert.Equal(t, first, recs[0].Interaction.ID)
	assert.Equal(t, "answered", recs[0].Status())
	assert.False(t, recs[0].RecoveredAt.IsZero(), "the tap after the restart is recorded")
	assert.Equal(t, first+".again", recs[1].Interaction.ID)
	assert.Equal(t, first, recs[1].RecoveredFrom, "the call allowed again links to the tap")
	assert.Equal(t, "answered", recs[1].Status())
	assert.Equal(t, interactions.DecisionAllow, recs[1].Resolution.Decision)
	assert.Equal(t, "u1", recs[1].Resolution.By)
	assert.Equal(t, again, recs[2].Interaction.ID)
	assert.Empty(t, recs[2].RecoveredFrom)
}
