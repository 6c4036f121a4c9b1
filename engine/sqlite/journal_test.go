package sqlite_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/leashd/leashd/engine/agent"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

func TestJournalRecordsAnInteractionsLife(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path)

	q := question("q1", "telegram:42", t0)
	require.NoError(t, s.Requested(ctx, q))
	r := record(t, s, "q1")
	assert.Equal(t, "pending", r.Status(), "recorded before it is shown")
	assert.Empty(t, r.Ref)

	require.NoError(t, s.Presented(ctx, "q1", "telegram:42:7"))
	require.NoError(t, s.Presented(ctx, "q1", "telegram:42:7"), "the same reference again is harmless")
	require.ErrorContains(t, s.Presented(ctx, "q1", "telegram:42:8"), `already shown as "telegram:42:7"`)

	res := interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "1001", At: t0.Add(90 * time.Second)}
	require.NoError(t, s.Resolved(ctx, q, res))
	require.NoError(t, s.Close())

	s = open(t, path) // what is recorded survives a restart
	r = record(t, s, "q1")
	assert.Equal(t, q.Question, r.Interaction.Question)
	assert.Equal(t, q.Options, r.Interaction.Options)
	assert.Equal(t, "DB", r.Interaction.Header)
	assert.Equal(t, 1, r.Interaction.Index)
	assert.Equal(t, 2, r.Interaction.Total)
	assert.True(t, q.Deadline.Equal(r.Interaction.Deadline))
	assert.True(t, t0.Equal(r.Interaction.AskedAt))
	assert.Equal(t, "telegram:42:7", r.Ref)
	assert.Equal(t, "answered", r.Status())
	assert.Equal(t, "SQLite", r.Resolution.Answer)
	assert.Equal(t, "1001", r.Resolution.By)
	assert.True(t, res.At.Equal(r.Resolution.At))
	assert.True(t, r.InterruptedAt.IsZero())
	assert.Equal(t, []string{"requested", "presented", "resolved"}, events(t, path, "q1"))
}

// TestPresentedIsRecordedAfterCancellation: a shutdown can cancel the
// turn between sending the message and recording it; the reference must
// still be kept, or the message could not be edited after the restart.
func TestPresentedIsRecordedAfterCancellation(t *testing.T) {
	s := open(t, dbPath(t))
	require.NoError(t, s.Requested(context.Background(), question("q1", "web:1", t0)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, s.Presented(ctx, "q1", "m1"))
	assert.Equal(t, "m1", record(t, s, "q1").Ref)
}

func TestJournalKeepsToolInputAndPlan(t *testing.T) {
	ctx := context.Background()
	s := open(t, dbPath(t))
	tool := toolApproval("t1", "slack:C1", t0)
	require.NoError(t, s.Requested(ctx, tool))
	plan := interactions.Interaction{ID: "p1", ChatID: "slack:C1", Kind: interactions.KindPlanReview,
		Options: interactions.PlanOptions, Plan: "1. add a table\n2. migrate", AskedAt: t0.Add(time.Second)}
	require.NoError(t, s.Requested(ctx, plan))
	require.NoError(t, s.Resolved(ctx, tool, interactions.Resolution{Status: interactions.StatusRejected, Decision: "deny", Text: "not on main", By: "U1"}))

	r := record(t, s, "t1")
	assert.Equal(t, "Bash", r.Interaction.ToolName)
	assert.JSONEq(t, `{"command":"npm test | tee out.txt"}`, string(r.Interaction.ToolInput))
	assert.Equal(t, "rejected", r.Status())
	assert.Equal(t, "deny", r.Resolution.Decision)
	assert.Equal(t, "not on main", r.Resolution.Text)
	assert.False(t, r.Resolution.At.IsZero(), "a resolution without a time gets the store's clock")
	p := record(t, s, "p1")
	assert.Equal(t, plan.Plan, p.Interaction.Plan)
	assert.Equal(t, interactions.PlanOptions, p.Interaction.Options)
	assert.Equal(t, "pending", p.Status())
}

func TestJournalRefusesBadInputAndKeepsWhatIsRecorded(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path)
	q := question("q1", "web:1", t0)
	require.NoError(t, s.Requested(ctx, q))

	dup := q
	dup.Question = "something else"
	require.ErrorContains(t, s.Requested(ctx, dup), "already recorded")
	assert.Equal(t, "Which database?", record(t, s, "q1").Interaction.Question, "the first record is kept")

	require.ErrorContains(t, s.Requested(ctx, interactions.Interaction{ChatID: "web:1", Kind: interactions.KindQuestion, AskedAt: t0}), "no ID")
	bad := toolApproval("t1", "web:1", t0)
	bad.ToolInput = []byte(`{"command":`)
	require.ErrorContains(t, s.Requested(ctx, bad), "not valid JSON")
	require.ErrorContains(t, s.Presented(ctx, "nope", "m1"), "never recorded")
	err := s.Resolved(ctx, q, interactions.Resolution{Status: "maybe"})
	require.ErrorContains(t, err, `unknown status "maybe"`)
	assert.Equal(t, "pending", record(t, s, "q1").Status())
}

func TestJournalKeepsTheLogSmall(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	now := t0.Add(time.Hour)
	s := open(t, path, sqlite.WithClock(func() time.Time { return now }))
	big := toolApproval("t1", "web:1", t0)
	big.ToolName, big.ToolSummary = "Write", "Write /srv/app/data.json (1 MB)"
	big.ToolInput = []byte(`{"file_path":"/srv/app/data.json","content":"` + strings.Repeat("x", 1<<20) + `"}`)
	require.NoError(t, s.Requested(ctx, big))
	small := toolApproval("t2", "web:1", time.Time{}) // no time given: the store's clock
	require.NoError(t, s.Requested(ctx, small))

	r := record(t, s, "t1")
	assert.JSONEq(t, fmt.Sprintf(`{"leashd_omitted":"tool input too large to keep","bytes":%d}`, len(big.ToolInput)), string(r.Interaction.ToolInput))
	assert.Equal(t, "Write /srv/app/data.json (1 MB)", r.Interaction.ToolSummary, "the summary is kept")
	assert.JSONEq(t, string(small.ToolInput), string(record(t, s, "t2").Interaction.ToolInput))
	assert.True(t, now.Equal(record(t, s, "t2").Interaction.AskedAt))
	require.NoError(t, s.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	wal, err := os.Stat(path + "-wal")
	if err == nil {
		assert.Less(t, fi.Size()+wal.Size(), int64(1<<20), "the megabyte was not stored")
	} else {
		assert.Less(t, fi.Size(), int64(1<<20), "the megabyte was not stored")
	}
}

func TestResolvedWithoutRequestedRecordsItWhole(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path)
	q := question("lost", "web:1", t0)
	require.NoError(t, s.Resolved(ctx, q, interactions.Resolution{Status: interactions.StatusExpired, Text: "no answer"}))
	r := record(t, s, "lost")
	assert.Equal(t, "Which database?", r.Interaction.Question)
	assert.Equal(t, "expired", r.Status())
	assert.Equal(t, []string{"requested", "resolved"}, events(t, path, "lost"))
}

func TestASettledOutcomeIsNeverRewritten(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	var logs bytes.Buffer
	s := open(t, path, sqlite.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	q := question("q1", "web:1", t0)
	require.NoError(t, s.Requested(ctx, q))
	require.NoError(t, s.Resolved(ctx, q, interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "a"}))
	// A late second resolution is recorded as an event but changes nothing.
	require.NoError(t, s.Resolved(ctx, q, interactions.Resolution{Status: interactions.StatusExpired, By: "b"}))
	r := record(t, s, "q1")
	assert.Equal(t, "answered", r.Status())
	assert.Equal(t, "a", r.Resolution.By)
	assert.Equal(t, []string{"requested", "resolved", "resolved"}, events(t, path, "q1"))
	assert.Contains(t, logs.String(), "interaction resolved after it was settled")
	assert.Contains(t, logs.String(), "recorded=answered now=expired")

	// Not even by hand: the triggers refuse.
	db := rawDB(t, path)
	_, err := db.Exec(`UPDATE interactions SET ref = 'm1' WHERE id = 'q1'`)
	require.NoError(t, err, "the reference can be set once")
	for _, q := range []string{
		`UPDATE interactions SET answer = 'Postgres' WHERE id = 'q1'`,
		`UPDATE interactions SET question = 'Which cloud?' WHERE id = 'q1'`,
		`UPDATE interactions SET ref = 'other' WHERE id = 'q1'`,
		`DELETE FROM interactions WHERE id = 'q1'`,
		`UPDATE events SET type = 'presented'`,
		`DELETE FROM events`,
	} {
		_, err := db.Exec(q)
		require.Error(t, err, q)
	}
	assert.Equal(t, "SQLite", record(t, s, "q1").Resolution.Answer)
}

// TestConcurrentWriters drives the store from many goroutines at once —
// the coordinator's request goroutines, the engine saving sessions, a
// reader running `leashd audit` — and from a second Store on the same file
// (another process): nothing is lost and nothing fails with "database is
// locked".
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path)
	other := open(t, path)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*4)
	for w := range writers {
		st := s
		if w%2 == 1 {
			st = other
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				chat := fmt.Sprintf("web:%d", w)
				q := question(id, chat, t0.Add(time.Duration(w*each+i)*time.Millisecond))
				errs <- st.Requested(ctx, q)
				errs <- st.Presented(ctx, id, "m-"+id)
				errs <- st.Resolved(ctx, q, interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: chat})
				errs <- st.SaveSession(ctx, engine.SessionRecord{ChatID: chat, AgentSessionID: id, Mode: agent.ModePlan})
			}
		}()
	}
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		ro := open(t, path, sqlite.ReadOnly())
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := ro.Audit(ctx, sqlite.AuditFilter{ChatID: "web:3"}); err != nil {
				errs <- err
				return
			}
			time.Sleep(time.Millisecond) // an operator's pace, not a spin
		}
	}()
	wg.Wait()
	close(stop)
	<-readerDone
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	recs, err := s.Audit(ctx, sqlite.AuditFilter{})
	require.NoError(t, err)
	require.Len(t, recs, writers*each)
	for _, r := range recs {
		assert.Equal(t, "answered", r.Status(), r.Interaction.ID)
		assert.Equal(t, "m-"+r.Interaction.ID, r.Ref)
	}
	for w := range writers {
		rec, found, err := other.LoadSession(ctx, fmt.Sprintf("web:%d", w))
		require.NoError(t, err)
		require.True(t, found)
		assert.Equal(t, fmt.Sprintf("w%d-%d", w, each-1), rec.AgentSessionID, "the last save wins")
	}
}

func TestAuditFilters(t *testing.T) {
	ctx := context.Background()
	s := open(t, dbPath(t))
	q1 := question("q1", "telegram:1", t0)
	q2 := question("q2", "telegram:2", t0.Add(time.Hour))
	t3 := toolApproval("t3", "telegram:1", t0.Add(2*time.Hour))
	t4 := toolApproval("t4", "slack:C9", t0.Add(3*time.Hour))
	for _, it := range []interactions.Interaction{q1, q2, t3, t4} {
		require.NoError(t, s.Requested(ctx, it))
	}
	require.NoError(t, s.Resolved(ctx, q1, interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite"}))
	require.NoError(t, s.Resolved(ctx, t3, interactions.Resolution{Status: interactions.StatusRejected, Decision: "deny"}))
	require.NoError(t, s.Resolved(ctx, t4, interactions.Resolution{Status: interactions.StatusExpired}))

	ids := func(f sqlite.AuditFilter) []string {
		t.Helper()
		recs, err := s.Audit(ctx, f)
		require.NoError(t, err)
		out := []string{}
		for _, r := range recs {
			out = append(out, r.Interaction.ID)
		}
		return out
	}
	assert.Equal(t, []string{"q1", "q2", "t3", "t4"}, ids(sqlite.AuditFilter{}), "oldest first")
	assert.Equal(t, []string{"q1", "t3"}, ids(sqlite.AuditFilter{ChatID: "telegram:1"}))
	assert.Equal(t, []string{"q2", "t3", "t4"}, ids(sqlite.AuditFilter{Since: t0.Add(time.Hour)}), "since is inclusive")
	assert.Equal(t, []string{"t3", "t4"}, ids(sqlite.AuditFilter{Kind: interactions.KindToolApproval}))
	assert.Equal(t, []string{"q2"}, ids(sqlite.AuditFilter{Status: "pending"}))
	assert.Equal(t, []string{"t4"}, ids(sqlite.AuditFilter{Status: "expired"}))
	assert.Equal(t, []string{"t3", "t4"}, ids(sqlite.AuditFilter{Limit: 2}), "the newest two, oldest first")
	assert.Equal(t, []string{"t3"}, ids(sqlite.AuditFilter{ChatID: "telegram:1", Kind: interactions.KindToolApproval, Limit: 5}))
	assert.Equal(t, []string{}, ids(sqlite.AuditFilter{ChatID: "nobody"}))

	_, err := s.Audit(ctx, sqlite.AuditFilter{Kind: "poll"})
	require.ErrorContains(t, err, `unknown kind "poll" (accepted: question, plan_review, tool_approval)`)
	_, err = s.Audit(ctx, sqlite.AuditFilter{Status: "done"})
	require.ErrorContains(t, err, `unknown status "done" (accepted: pending, answered, rejected, expired, cancelled, interrupted)`)
	_, err = s.Audit(ctx, sqlite.AuditFilter{Limit: -1})
	require.ErrorContains(t, err, "negative")
}
