package sqlite_test

import (
	"context"
	"fmt"
	"github.com/leashd/leashd/engine/agent"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// BenchmarkJournalInteraction is one interaction's whole record:
// Requested, Presented and Resolved (three synced transactions).
func BenchmarkJournalInteraction(b *testing.B) {
	ctx := context.Background()
	s := open(b, dbPath(b))
	ans := interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "1001"}
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprintf("q%d", i)
		q := question(id, "telegram:42", t0.Add(time.Duration(i)*time.Millisecond))
		if err := s.Requested(ctx, q); err != nil {
			b.Fatal(err)
		}
		if err := s.Presented(ctx, id, "m"+id); err != nil {
			b.Fatal(err)
		}
		if err := s.Resolved(ctx, q, ans); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(3*b.N)/b.Elapsed().Seconds(), "writes/s")
}

// BenchmarkJournalParallel: many chats' coordinators writing at once.
func BenchmarkJournalParallel(b *testing.B) {
	ctx := context.Background()
	s := open(b, dbPath(b))
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if err := s.Requested(ctx, question(fmt.Sprintf("p%d", i), "web:x", t0)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

func BenchmarkSaveSession(b *testing.B) {
	ctx := context.Background()
	s := open(b, dbPath(b))
	rec := engine.SessionRecord{ChatID: "telegram:42", AgentSessionID: "sess", Mode: agent.ModePlan, WorkDir: "/srv"}
	for b.Loop() {
		rec.LastActive = time.Now()
		if err := s.SaveSession(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAudit reads one chat's last 50 out of 10,000 interactions, as
// `leashd audit --chat C --limit 50` does.
func BenchmarkAudit(b *testing.B) {
	ctx := context.Background()
	path := dbPath(b)
	s := open(b, path)
	db := rawDB(b, path)
	tx, err := db.Begin()
	require.NoError(b, err)
	for i := range 10000 {
		_, err := tx.Exec(`INSERT INTO interactions (id, chat_id, kind, question, asked_at, status, answer)
			VALUES (?, ?, 'question', 'Which database?', ?, 'answered', 'SQLite')`,
			fmt.Sprintf("a%d", i), fmt.Sprintf("web:%d", i%20), t0.Add(time.Duration(i)*time.Second).UTC().Format("2006-01-02T15:04:05.000000000Z"))
		require.NoError(b, err)
	}
	require.NoError(b, tx.Commit())
	for b.Loop() {
		recs, err := s.Audit(ctx, sqlite.AuditFilter{ChatID: "web:7", Limit: 50})
		if err != nil || len(recs) != 50 {
			b.Fatal(len(recs), err)
		}
	}
}

// BenchmarkJournalChats: 1,000 chats' coordinators each journaling
// interactions (requested, presented, resolved) at once, as in the
// Telegram end-to-end benchmark with the store. It reports the writes/s
// and how long a Resolved took (p50, p99): the agent gets its answer only
// once that write is durable.
func BenchmarkJournalChats(b *testing.B) {
	ctx := context.Background()
	s := open(b, dbPath(b))
	ans := interactions.Resolution{Status: interactions.StatusAnswered, Answer: "SQLite", By: "1001"}
	var (
		n   atomic.Int64
		mu  sync.Mutex
		lat []time.Duration
	)
	b.SetParallelism(500) // × GOMAXPROCS goroutines
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			id := fmt.Sprintf("c%d", n.Add(1))
			q := question(id, "telegram:"+id, t0)
			if err := s.Requested(ctx, q); err != nil {
				b.Error(err)
				return
			}
			if err := s.Presented(ctx, id, "m"+id); err != nil {
				b.Error(err)
				return
			}
			start := time.Now()
			if err := s.Resolved(ctx, q, ans); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) / 1000
	}
	b.ReportMetric(float64(3*b.N)/b.Elapsed().Seconds(), "writes/s")
	b.ReportMetric(pct(0.50), "resolved-p50-ms")
	b.ReportMetric(pct(0.99), "resolved-p99-ms")
}
