package sqlite_test

import (
	"context"
	"encoding/json"
	"github.com/leashd/leashd/engine/agent"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// counter is a sqlite.ErrorCounter.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) StoreError(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[op]++
}

func (c *counter) get(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op]
}

// logLines is a JSON slog sink the test reads back line by line.
type logLines struct{ testenv.Buffer }

// errors returns the ERROR records, decoded.
func (l *logLines) errors(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(l.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if m["level"] == "ERROR" {
			out = append(out, m)
		}
	}
	return out
}

// find returns the first ERROR record with these attributes.
func (l *logLines) find(t *testing.T, attrs map[string]any) map[string]any {
	t.Helper()
	for _, m := range l.errors(t) {
		ok := true
		for k, v := range attrs {
			ok = ok && m[k] == v
		}
		if ok {
			return m
		}
	}
	t.Fatalf("no ERROR log line with %v; errors logged: %v", attrs, l.errors(t))
	return nil
}

func openWatched(t *testing.T, path string) (*sqlite.Store, *counter, *logLines) {
	t.Helper()
	c, l := &counter{}, &logLines{}
	s := open(t, path, sqlite.WithErrorCounter(c), sqlite.WithLogger(slog.New(slog.NewJSONHandler(l, nil))))
	return s, c, l
}

// TestDiskFullWritesAreLoggedCountedRetriedAndMakeTheStoreNotReady fills a
// real (tmpfs) disk under the database: the answer that cannot be recorded
// is logged at ERROR with the interaction, chat and answer, every failed
// write is counted by op and kept in memory, Ready names the database while
// it cannot be written, and once there is room the kept writes are
// recorded in order: nothing a person answered is lost.
func TestDiskFullWritesAreLoggedCountedRetriedAndMakeTheStoreNotReady(t *testing.T) {
	dir := testenv.Tmpfs(t, 4<<20)
	path := filepath.Join(dir, "leashd.db")
	s, c, logs := openWatched(t, path)
	ctx := context.Background()
	require.NoError(t, s.Ready())

	q := question("q1", "telegram:42", t0)
	require.NoError(t, s.Requested(ctx, q))

	fill := testenv.Fill(t, dir)
	res := interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "alice", At: t0.Add(time.Minute)}
	err := s.Resolved(ctx, q, res)
	require.Error(t, err, "a full disk cannot take the answer")
	line := logs.find(t, map[string]any{"op": "resolved"})
	assert.Equal(t, "q1", line["id"])
	assert.Equal(t, "telegram:42", line["chat"])
	assert.Equal(t, "SQLite", line["answer"], "the answer a person gave is in the log when the database cannot take it")
	assert.Equal(t, "alice", line["by"])
	assert.Contains(t, line["lost"], "not in the audit log")
	assert.Contains(t, line["err"], "full")
	assert.Equal(t, 1, c.get(sqlite.OpResolved))

	// Asked, shown and answered while the disk is full.
	q2 := question("q2", "telegram:42", t0.Add(2*time.Minute))
	q2.Question = "Which database? " + strings.Repeat("x", 10000)
	require.Error(t, s.Requested(ctx, q2))
	logged := logs.find(t, map[string]any{"op": "requested"})["question"].(string)
	assert.True(t, strings.HasPrefix(logged, "Which database? xxx"))
	assert.True(t, strings.HasSuffix(logged, "… truncated (5920 bytes)"), "a huge question makes no huge log line: %q", logged[max(0, len(logged)-60):])
	require.Error(t, s.Presented(ctx, "q2", "42:7"))
	res2 := interactions.Resolution{Status: interactions.StatusAnswered, Answer: "Postgres", By: "bob", At: t0.Add(3 * time.Minute)}
	require.Error(t, s.Resolved(ctx, q2, res2))
	for _, mode := range []agent.Mode{agent.ModePlan, agent.ModeAcceptEdits} { // the later one wins
		require.Error(t, s.SaveSession(ctx, engine.SessionRecord{ChatID: "telegram:42", AgentSessionID: "sess-1", Mode: mode}))
	}
	assert.Equal(t, "sess-1", logs.find(t, map[string]any{"op": "session"})["agent_session"])
	assert.Equal(t, 1, c.get(sqlite.OpRequested))
	assert.Equal(t, 1, c.get(sqlite.OpPresented))
	assert.Equal(t, 2, c.get(sqlite.OpResolved))
	assert.Equal(t, 2, c.get(sqlite.OpSession))
	assert.Equal(t, 5, s.Queued(), "every failed write is kept; the two session saves of one chat as one")

	err = s.Ready()
	require.Error(t, err, "not ready while the disk is full")
	assert.Contains(t, err.Error(), path, "the error names the database")
	assert.Contains(t, err.Error(), "6 write(s) failed")
	assert.Contains(t, err.Error(), "5 kept in memory")

	require.NoError(t, os.Remove(fill))
	require.NoError(t, s.Ready(), "ready again once the kept writes are recorded")
	assert.Zero(t, s.Queued())
	r1, r2 := record(t, s, "q1"), record(t, s, "q2")
	assert.Equal(t, "answered", r1.Status())
	assert.Equal(t, "SQLite", r1.Resolution.Answer)
	assert.Equal(t, "alice", r1.Resolution.By)
	assert.Equal(t, "Postgres", r2.Resolution.Answer)
	assert.Equal(t, "42:7", r2.Ref)
	assert.Equal(t, []string{"requested", "presented", "resolved"}, events(t, path, "q2"))
	rec, ok, err := s.LoadSession(ctx, "telegram:42")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, agent.ModeAcceptEdits, rec.Mode)
}

// TestWritesStillFailingAtCloseAreLoggedAsLost: when leashd stops before
// the disk has room, each kept write is logged at ERROR as lost, with what
// it held.
func TestWritesStillFailingAtCloseAreLoggedAsLost(t *testing.T) {
	dir := testenv.Tmpfs(t, 4<<20)
	c, logs := &counter{}, &logLines{}
	s, err := sqlite.Open(context.Background(), filepath.Join(dir, "leashd.db"), sqlite.WithErrorCounter(c), sqlite.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	require.NoError(t, err)
	q := question("q1", "telegram:42", t0)
	require.NoError(t, s.Requested(context.Background(), q))
	testenv.Fill(t, dir)
	require.Error(t, s.Resolved(context.Background(), q, interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "alice"}))
	_ = s.Close()
	line := logs.find(t, map[string]any{"msg": "database write still failing at shutdown; this record is lost"})
	assert.Equal(t, "SQLite", line["answer"])
	assert.Equal(t, "q1", line["id"])
}

// TestReadOnlyFileWritesAreLoggedCountedAndMakeTheStoreNotReady makes the
// database's files immutable (read-only even for root, through the
// descriptors leashd holds): writes fail, are logged and counted, and the
// store is not ready until they succeed again.
func TestReadOnlyFileWritesAreLoggedCountedAndMakeTheStoreNotReady(t *testing.T) {
	path := dbPath(t)
	s, c, logs := openWatched(t, path)
	ctx := context.Background()
	q := toolApproval("t1", "slack:C1", t0)
	require.NoError(t, s.Requested(ctx, q))

	undoWAL := testenv.Immutable(t, path+"-wal")
	undoDB := testenv.Immutable(t, path)
	res := interactions.Resolution{Status: interactions.StatusRejected, Decision: "deny", Text: "not in prod", By: "carol", At: t0.Add(time.Minute)}
	require.Error(t, s.Resolved(ctx, q, res))
	line := logs.find(t, map[string]any{"op": "resolved"})
	assert.Equal(t, "t1", line["id"])
	assert.Equal(t, "deny", line["decision"])
	assert.Equal(t, "not in prod", line["text"])
	assert.Equal(t, 1, c.get(sqlite.OpResolved))
	require.Error(t, s.Presented(ctx, "t1", "slack:C1:1700000000.1"))
	assert.Equal(t, 1, c.get(sqlite.OpPresented))
	require.Error(t, s.Ready())

	undoWAL()
	undoDB()
	require.NoError(t, s.Ready(), "writable again: the kept writes are recorded")
	r := record(t, s, "t1")
	assert.Equal(t, "rejected", r.Status())
	assert.Equal(t, "not in prod", r.Resolution.Text)
	assert.Equal(t, "slack:C1:1700000000.1", r.Ref)
}

// TestDeletedDatabaseFileIsNoticed deletes the database file while the
// store has it open: SQLite keeps writing to the deleted file, so writes
// "succeed" into a file nobody can open again. The store notices: Ready
// says so, the deletion is logged and counted once, and each later write
// is logged as lost.
func TestDeletedDatabaseFileIsNoticed(t *testing.T) {
	path := dbPath(t)
	s, c, logs := openWatched(t, path)
	ctx := context.Background()
	require.NoError(t, s.Requested(ctx, question("q1", "web:a", t0)))
	require.NoError(t, s.Ready())

	require.NoError(t, os.Remove(path))
	err := s.Ready()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was deleted while leashd runs")
	assert.Equal(t, 1, c.get(sqlite.OpFile))
	logs.find(t, map[string]any{"msg": "database file lost"})

	res := interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "dave", At: t0.Add(time.Minute)}
	_ = s.Resolved(ctx, question("q1", "web:a", t0), res) // commits into the deleted file
	line := logs.find(t, map[string]any{"op": "resolved"})
	assert.Equal(t, "SQLite", line["answer"], "the answer that only reached the deleted file is in the log")
	assert.Equal(t, 1, c.get(sqlite.OpResolved))
	assert.Equal(t, 1, c.get(sqlite.OpFile), "the deletion is counted once")
	require.Error(t, s.Ready(), "still not ready: only a restart with the file restored helps")
}

// TestRefusedWritesAreNotDiskFailures: a duplicate or unknown record is the
// caller's mistake, not the disk's; the store stays ready.
func TestRefusedWritesAreNotDiskFailures(t *testing.T) {
	s, c, logs := openWatched(t, dbPath(t))
	ctx := context.Background()
	q := question("q1", "web:a", t0)
	require.NoError(t, s.Requested(ctx, q))
	require.Error(t, s.Requested(ctx, q), "a duplicate")
	_, err := s.Recovered(ctx, "nope", interactions.Resolution{Status: interactions.StatusAnswered, Answer: "x"})
	require.Error(t, err)
	require.NoError(t, s.Ready())
	assert.Zero(t, c.get(sqlite.OpRequested)+c.get(sqlite.OpRecovered))
	assert.Empty(t, logs.errors(t))
}

// TestARetryThatCannotSucceedDoesNotHoldUpTheQueue: a kept write that fails
// on retry for a reason other than the disk (here: the message of an
// interaction that was never recorded) is logged as lost and dropped; the
// writes behind it are recorded.
func TestARetryThatCannotSucceedDoesNotHoldUpTheQueue(t *testing.T) {
	dir := testenv.Tmpfs(t, 4<<20)
	s, _, logs := openWatched(t, filepath.Join(dir, "leashd.db"))
	ctx := context.Background()
	fill := testenv.Fill(t, dir)
	require.Error(t, s.Presented(ctx, "never-asked", "42:1"))
	q := question("q1", "telegram:42", t0)
	require.Error(t, s.Requested(ctx, q))
	require.Equal(t, 1, s.Queued(), "the retry before this write dropped the one that cannot succeed")
	require.NoError(t, os.Remove(fill))
	require.NoError(t, s.Ready())
	assert.Zero(t, s.Queued())
	assert.Equal(t, "pending", record(t, s, "q1").Status(), "the write behind it was recorded")
	line := logs.find(t, map[string]any{"msg": "database write refused on retry; this record is lost"})
	assert.Equal(t, "never-asked", line["id"])
}
