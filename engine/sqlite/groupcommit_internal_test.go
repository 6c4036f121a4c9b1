package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/leashd/leashd/engine/agent"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// Writes that arrive while another is being committed are committed
// together: one transaction (one sync) for all, each write still on its
// own — a refused one is refused alone, the others are recorded. One
// transaction per write (the old way) puts at least one WAL frame per
// write: 52 here.
func TestWritesWaitingForTheWriterShareOneCommit(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "leashd.db"))
	require.NoError(t, err)
	defer s.Close()
	var busy, log, done int
	require.NoError(t, s.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done))

	const chats = 50
	s.h.wmu.Lock() // a commit under way: every write below waits for it
	var wg sync.WaitGroup
	for i := range chats {
		wg.Go(func() {
			assert.NoError(t, s.SaveSession(ctx, engine.SessionRecord{ChatID: fmt.Sprintf("c%d", i), AgentSessionID: "s", Mode: agent.ModePlan}))
		})
	}
	q := interactions.Interaction{ID: "dup", ChatID: "c1", Kind: interactions.KindQuestion, Question: "Which database?",
		Options: []interactions.Choice{{Label: "Postgres"}, {Label: "SQLite"}}, AskedAt: time.Now()}
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() { errs <- s.Requested(ctx, q) })
	}
	require.Eventually(t, func() bool {
		s.gc.Lock()
		defer s.gc.Unlock()
		return len(s.gc.queue) == chats+2
	}, 10*time.Second, time.Millisecond)
	s.h.wmu.Unlock()
	wg.Wait()
	close(errs)

	var refusals, ok int
	for err := range errs {
		if err == nil {
			ok++
		} else {
			assert.ErrorContains(t, err, "already recorded")
			refusals++
		}
	}
	assert.Equal(t, 1, ok, "the interaction is recorded once")
	assert.Equal(t, 1, refusals, "its duplicate is refused, alone")
	for i := range chats {
		rec, found, err := s.LoadSession(ctx, fmt.Sprintf("c%d", i))
		require.NoError(t, err)
		require.True(t, found, "chat c%d saved", i)
		assert.Equal(t, agent.ModePlan, rec.Mode)
	}
	require.NoError(t, s.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done))
	assert.LessOrEqual(t, log, 12, "WAL frames written for %d writes: one commit", chats+2)
	assert.Equal(t, 0, s.Queued())
}

// A write committed in another writer's batch returns once that commit is
// done, durable, even while the next commit (other chats' writes) is still
// under way. Before, every writer took the writer lock in turn after its
// write was committed, so the answer's writer could end up committing the
// next batch and wait for it: here, for a commit that does not finish.
func TestAWriteCommittedInAnotherBatchDoesNotWaitForTheNextCommit(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "leashd.db"))
	require.NoError(t, err)
	defer s.Close()
	q := interactions.Interaction{ID: "q1", ChatID: "c1", Kind: interactions.KindQuestion, Question: "Which database?",
		Options: []interactions.Choice{{Label: "Postgres"}, {Label: "SQLite"}}, AskedAt: time.Now()}
	require.NoError(t, s.Requested(ctx, q))

	queued := func(n int) func() bool {
		return func() bool {
			s.gc.Lock()
			defer s.gc.Unlock()
			return len(s.gc.queue) == n
		}
	}
	stuck := make(chan struct{}) // the next commit's write never finishes until the test ends
	defer close(stuck)
	next := make(chan error, 1)
	first := make(chan error, 1)

	s.h.wmu.Lock() // a commit under way
	go func() {    // another chat's write, queued first: it leads the next commit
		first <- s.write(ctx, OpSession, nil, func(*sql.Tx) error {
			// While this batch commits, another chat's write arrives; its
			// commit will not finish.
			go func() {
				next <- s.write(ctx, OpSession, nil, func(*sql.Tx) error { <-stuck; return nil })
			}()
			assert.Eventually(t, queued(1), 10*time.Second, time.Millisecond)
			return nil
		})
	}()
	require.Eventually(t, queued(1), 10*time.Second, time.Millisecond)
	answered := make(chan error, 1)
	go func() {
		answered <- s.Resolved(ctx, q, interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "42"})
	}()
	require.Eventually(t, queued(2), 10*time.Second, time.Millisecond)
	s.h.wmu.Unlock()

	select {
	case err := <-answered:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the answer's write was committed with the first batch, but Resolved did not return while the next commit was under way")
	}
	require.NoError(t, <-first)
	var status, answer string
	require.NoError(t, s.r.QueryRowContext(ctx, `SELECT status, answer FROM interactions WHERE id = ?`, q.ID).Scan(&status, &answer))
	assert.Equal(t, "answered", status, "durable when Resolved returned")
	assert.Equal(t, "SQLite", answer)
	select {
	case err := <-next:
		t.Fatalf("the next commit finished although its write is stuck: %v", err)
	default:
	}
}
