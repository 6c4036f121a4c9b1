package sqlite_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// TestRecoveryAfterACrash: an interaction is recorded and shown, then the
// process dies without resolving it. The next run's Interrupt finds it,
// with its message, and a late answer is recorded exactly once.
func TestRecoveryAfterACrash(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s1 := open(t, path)
	q := question("q1", "telegram:42", t0)
	require.NoError(t, s1.Requested(ctx, q))
	require.NoError(t, s1.Presented(ctx, "q1", "telegram:42:7"))
	done := question("q0", "telegram:42", t0.Add(-time.Minute))
	require.NoError(t, s1.Requested(ctx, done))
	require.NoError(t, s1.Resolved(ctx, done, interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite"}))
	require.NoError(t, s1.Close()) // as good as a crash: nothing settled q1

	restart := t0.Add(time.Hour)
	s2 := open(t, path, sqlite.WithClock(func() time.Time { return restart }))
	_, found, err := s2.LookupInterrupted(ctx, "q1")
	require.NoError(t, err)
	assert.True(t, found, "a crash leftover is answerable even before Interrupt runs")
	_, found, err = s2.LookupInterrupted(ctx, "q0")
	require.NoError(t, err)
	assert.False(t, found, "one that was answered is not")

	got, err := s2.Interrupt(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1, "only what was pending")
	assert.Equal(t, "q1", got[0].Interaction.ID)
	assert.Equal(t, "telegram:42:7", got[0].Ref)
	assert.Equal(t, q.Options, got[0].Interaction.Options)
	again, err := s2.Interrupt(ctx)
	require.NoError(t, err)
	assert.Empty(t, again, "a second Interrupt finds nothing new")

	r := record(t, s2, "q1")
	assert.Equal(t, "interrupted", r.Status())
	assert.Equal(t, sqlite.InterruptedText, r.Resolution.Text)
	assert.True(t, restart.Equal(r.InterruptedAt))

	in, found, err := s2.LookupInterrupted(ctx, "q1")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "Which database?", in.Interaction.Question)
	assert.Equal(t, "telegram:42:7", in.Ref)

	late := interactions.Resolution{Status: interactions.StatusAnswered, Answer: "Postgres", By: "1001", At: restart.Add(time.Minute)}
	first, err := s2.Recovered(ctx, "q1", late)
	require.NoError(t, err)
	assert.True(t, first)
	first, err = s2.Recovered(ctx, "q1", interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "1002"})
	require.NoError(t, err)
	assert.False(t, first, "a duplicate tap")

	r = record(t, s2, "q1")
	assert.Equal(t, "answered", r.Status())
	assert.Equal(t, "Postgres", r.Resolution.Answer, "the first late answer counts")
	assert.Equal(t, "1001", r.Resolution.By)
	assert.True(t, late.At.Equal(r.RecoveredAt))
	assert.True(t, restart.Equal(r.InterruptedAt), "when it was interrupted is kept")
	_, found, err = s2.LookupInterrupted(ctx, "q1")
	require.NoError(t, err)
	assert.True(t, found, "still found, so a duplicate tap is told it was answered")
	assert.Equal(t, []string{"requested", "presented", "interrupted", "recovered"}, events(t, path, "q1"))
}

// TestInterruptLeavesThisRunsInteractionsAlone: the engine calls Interrupt
// at start-up while connectors already run; a question asked in that
// moment belongs to the live coordinator and must not be marked
// interrupted.
func TestInterruptLeavesThisRunsInteractionsAlone(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s1 := open(t, path)
	require.NoError(t, s1.Requested(ctx, question("old", "web:1", t0)))
	require.NoError(t, s1.Close())

	s2 := open(t, path)
	fresh := question("new", "web:1", t0.Add(time.Hour))
	require.NoError(t, s2.Requested(ctx, fresh))
	got, err := s2.Interrupt(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "old", got[0].Interaction.ID)
	assert.Equal(t, "pending", record(t, s2, "new").Status())
	require.NoError(t, s2.Resolved(ctx, fresh, interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "u"}))
	assert.Equal(t, "answered", record(t, s2, "new").Status())
}

// TestShutdownInterruptionIsRecoverable: at a graceful shutdown the
// coordinator resolves pending interactions as interrupted; after the
// restart they answer like crash leftovers.
func TestShutdownInterruptionIsRecoverable(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s1 := open(t, path)
	plan := interactions.Interaction{ID: "p1", ChatID: "web:1", Kind: interactions.KindPlanReview,
		Options: interactions.PlanOptions, Plan: "1. do it", AskedAt: t0}
	require.NoError(t, s1.Requested(ctx, plan))
	require.NoError(t, s1.Presented(ctx, "p1", "m1"))
	require.NoError(t, s1.Resolved(ctx, plan, interactions.Resolution{Status: interactions.StatusInterrupted, Text: "leashd is restarting"}))
	require.NoError(t, s1.Close())

	s2 := open(t, path)
	got, err := s2.Interrupt(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "the shutdown already recorded it")
	in, found, err := s2.LookupInterrupted(ctx, "p1")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "m1", in.Ref)
	first, err := s2.Recovered(ctx, "p1", interactions.Resolution{Status: interactions.StatusAnswered, Decision: interactions.DecisionEdit, By: "u"})
	require.NoError(t, err)
	assert.True(t, first)
	assert.Equal(t, interactions.DecisionEdit, record(t, s2, "p1").Resolution.Decision)
}

func TestRecoveredRefusesWhatWasNotInterrupted(t *testing.T) {
	ctx := context.Background()
	s := open(t, dbPath(t))
	q := question("q1", "web:1", t0)
	require.NoError(t, s.Requested(ctx, q))
	ans := interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite"}

	_, err := s.Recovered(ctx, "nope", ans)
	require.ErrorContains(t, err, `no interaction "nope"`)
	_, err = s.Recovered(ctx, "q1", ans)
	require.ErrorContains(t, err, "not interrupted")
	_, err = s.Recovered(ctx, "q1", interactions.Resolution{Status: interactions.StatusInterrupted})
	require.ErrorContains(t, err, "accepted: answered, rejected, expired, cancelled")
	_, found, err := s.LookupInterrupted(ctx, "q1")
	require.NoError(t, err)
	assert.False(t, found)
	assert.Equal(t, "pending", record(t, s, "q1").Status())
}

// TestDuplicateLateTapsRecordOnce: many taps on one old button at once
// (two people, a double tap, a retried webhook): exactly one wins.
func TestDuplicateLateTapsRecordOnce(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s1 := open(t, path)
	require.NoError(t, s1.Requested(ctx, question("q1", "web:1", t0)))
	require.NoError(t, s1.Close())
	s2 := open(t, path)
	_, err := s2.Interrupt(ctx)
	require.NoError(t, err)
	other := open(t, path) // a second connection pool on the file

	var wins atomic.Int32
	var winner atomic.Value
	var wg sync.WaitGroup
	for i := range 20 {
		st := s2
		if i%2 == 1 {
			st = other
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			by := "u" + itoa(i)
			first, err := st.Recovered(ctx, "q1", interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: by})
			assert.NoError(t, err)
			if first {
				wins.Add(1)
				winner.Store(by)
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 1, wins.Load())
	assert.Equal(t, winner.Load(), record(t, s2, "q1").Resolution.By)
	assert.Equal(t, []string{"requested", "interrupted", "recovered"}, events(t, path, "q1"))
}

// TestATapBeforeInterruptRuns: at start-up, a tap made while leashd was
// down can arrive before Interrupt has marked what the crash left pending.
// It is answered all the same, once, and Interrupt then leaves it alone.
func TestATapBeforeInterruptRuns(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s1 := open(t, path)
	require.NoError(t, s1.Requested(ctx, question("q1", "telegram:42", t0)))
	require.NoError(t, s1.Presented(ctx, "q1", "telegram:42:7"))
	require.NoError(t, s1.Close())

	s2 := open(t, path)
	live := question("live", "telegram:42", t0.Add(time.Hour))
	require.NoError(t, s2.Requested(ctx, live))
	in, found, err := s2.LookupInterrupted(ctx, "q1")
	require.NoError(t, err)
	require.True(t, found, "left pending by the crash")
	assert.Equal(t, "telegram:42:7", in.Ref)
	_, found, err = s2.LookupInterrupted(ctx, "live")
	require.NoError(t, err)
	assert.False(t, found, "this run's own question is not a leftover")
	_, err = s2.Recovered(ctx, "live", interactions.Resolution{Status: interactions.StatusAnswered, Answer: "x"})
	require.ErrorContains(t, err, "not interrupted")

	first, err := s2.Recovered(ctx, "q1", interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "1001"})
	require.NoError(t, err)
	assert.True(t, first)
	first, err = s2.Recovered(ctx, "q1", interactions.Resolution{Status: interactions.StatusAnswered, Answer: "Postgres", By: "1002"})
	require.NoError(t, err)
	assert.False(t, first)
	got, err := s2.Interrupt(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "already answered: its message is not marked interrupted afterwards")

	r := record(t, s2, "q1")
	assert.Equal(t, "answered", r.Status())
	assert.Equal(t, "1001", r.Resolution.By)
	assert.False(t, r.InterruptedAt.IsZero())
	assert.Equal(t, []string{"requested", "presented", "interrupted", "recovered"}, events(t, path, "q1"))
	assert.Equal(t, "pending", record(t, s2, "live").Status())
}

// TestUnansweredListsWhatEarlierRunsLeftOpen: after a restart the engine
// shows interrupted interactions again to connectors without history (the
// web page). Unanswered lists exactly those still answerable: interrupted
// at a shutdown or left by a crash, not yet answered, not this run's, and
// not older than asked.
func TestUnansweredListsWhatEarlierRunsLeftOpen(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	stop := t0.Add(time.Hour)
	s1 := open(t, path, sqlite.WithClock(func() time.Time { return stop }))
	interrupted := func(id string, asked time.Time) {
		it := question(id, "web:1", asked)
		require.NoError(t, s1.Requested(ctx, it))
		require.NoError(t, s1.Resolved(ctx, it, interactions.Resolution{Status: interactions.StatusInterrupted, Text: "leashd restarted", At: stop}))
	}
	interrupted("shutdown-new", t0.Add(30*time.Minute))
	interrupted("shutdown-old", t0)
	interrupted("answered-later", t0.Add(40*time.Minute))
	answered := question("answered", "web:1", t0)
	require.NoError(t, s1.Requested(ctx, answered))
	require.NoError(t, s1.Resolved(ctx, answered, interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "u"}))
	require.NoError(t, s1.Requested(ctx, question("crash", "telegram:42", t0.Add(50*time.Minute))))
	require.NoError(t, s1.Close())

	restart := stop.Add(time.Minute)
	s2 := open(t, path, sqlite.WithClock(func() time.Time { return restart }))
	first, err := s2.Recovered(ctx, "answered-later", interactions.Resolution{Status: interactions.StatusAnswered, Answer: "Postgres", By: "u"})
	require.NoError(t, err)
	require.True(t, first)
	mine := question("this-run", "web:1", restart)
	require.NoError(t, s2.Requested(ctx, mine))
	require.NoError(t, s2.Resolved(ctx, mine, interactions.Resolution{Status: interactions.StatusInterrupted, At: restart}))

	ids := func(since time.Time) []string {
		got, err := s2.Unanswered(ctx, since)
		require.NoError(t, err)
		var out []string
		for _, in := range got {
			out = append(out, in.Interaction.ID)
		}
		return out
	}
	assert.Equal(t, []string{"shutdown-old", "shutdown-new"}, ids(time.Time{}), "oldest first; the crash leftover is not marked yet")
	_, err = s2.Interrupt(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"shutdown-old", "shutdown-new", "crash"}, ids(time.Time{}))
	assert.Equal(t, []string{"crash"}, ids(stop.Add(time.Second)), "since bounds when they were interrupted")

	first, err = s2.Recovered(ctx, "shutdown-old", interactions.Resolution{Status: interactions.StatusRejected, By: "u"})
	require.NoError(t, err)
	require.True(t, first)
	assert.Equal(t, []string{"shutdown-new", "crash"}, ids(time.Time{}), "answered after the restart: no longer listed")
}

// A call allowed again after a restart is an answered record linked to the
// answer that allowed it; it can only link to an allowed interaction.
func TestAllowedAgainLinksToTheRecoveredAnswer(t *testing.T) {
	ctx := context.Background()
	s := open(t, dbPath(t))
	orig := interactions.Interaction{ID: "a1", ChatID: "web:1", Kind: interactions.KindToolApproval, ToolName: "Bash",
		ToolInput: json.RawMessage(`{"command":"touch x"}`), ToolSummary: "touch x", AskedAt: t0}
	again := orig
	again.ID = "a1.again"
	res := interactions.Resolution{Status: interactions.StatusAnswered, Decision: interactions.DecisionAllow, By: "ann", At: t0.Add(time.Minute)}

	require.NoError(t, s.Requested(ctx, orig))
	err := s.AllowedAgain(ctx, again, res, "a1")
	require.ErrorContains(t, err, "interaction a1 was not allowed (status pending)")
	require.ErrorContains(t, s.AllowedAgain(ctx, again, res, "nope"), `no interaction "nope" is recorded`)
	require.ErrorContains(t, s.AllowedAgain(ctx, again, res, ""), "no original interaction named")

	require.NoError(t, s.Resolved(ctx, orig, res))
	require.NoError(t, s.AllowedAgain(ctx, again, res, "a1"))
	r := record(t, s, "a1.again")
	assert.Equal(t, "a1", r.RecoveredFrom)
	assert.Equal(t, "answered", r.Status())
	assert.Equal(t, "ann", r.Resolution.By)
	assert.JSONEq(t, `{"command":"touch x"}`, string(r.Interaction.ToolInput))
	assert.Empty(t, record(t, s, "a1").RecoveredFrom)
	require.Error(t, s.AllowedAgain(ctx, again, res, "a1"), "recorded once")
}

// A multi-select's selection is journaled on every toggle (the latest
// wins) and comes back with the interaction after a crash and after a
// shutdown; a question without a selection comes back with none.
func TestSelectionSurvivesRestarts(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s1 := open(t, path)
	ms := question("ms1", "telegram:42", t0)
	ms.MultiSelect = true
	ms.Options = []interactions.Choice{{Label: "lint"}, {Label: "test"}, {Label: "vet"}}
	require.NoError(t, s1.Requested(ctx, ms))
	require.NoError(t, s1.Requested(ctx, func() interactions.Interaction {
		q := question("plain", "telegram:42", t0.Add(time.Second))
		q.MultiSelect = true
		q.Options = ms.Options
		return q
	}()))
	require.NoError(t, s1.Selected(ctx, "ms1", []string{"lint"}))
	require.NoError(t, s1.Selected(ctx, "ms1", []string{"lint", "vet"}))
	require.NoError(t, s1.Close()) // a crash: both still pending

	s2 := open(t, path)
	left, err := s2.Interrupt(ctx)
	require.NoError(t, err)
	require.Len(t, left, 2)
	assert.Equal(t, []string{"lint", "vet"}, left[0].Selected)
	assert.Nil(t, left[1].Selected)
	require.NoError(t, s2.Selected(ctx, "ms1", []string{"vet"})) // toggled after the restart
	require.NoError(t, s2.Close())

	s3 := open(t, path)
	open3, err := s3.Unanswered(ctx, time.Time{})
	require.NoError(t, err)
	require.Len(t, open3, 2)
	assert.Equal(t, "ms1", open3[0].Interaction.ID)
	assert.Equal(t, []string{"vet"}, open3[0].Selected, "the latest selection, after a second restart")
	assert.ErrorContains(t, s3.Selected(ctx, "neverwas", []string{"x"}), "neverwas")
}
