package metrics_test

// Metrics overhead. Run with:
//
//	go test -run='^$' -bench=. -benchmem ./engine/metrics
//
// BenchmarkRequestResolve compares the coordinator's request→resolve rate
// bare, with a subscriber that only drains events (as the engine has), and
// with Metrics.Watch following them (and logging each one as JSON); the
// other benchmarks price each operation on its own.

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/metrics"
	"github.com/leashd/leashd/interactions"
)

func BenchmarkRequestResolve(b *testing.B) {
	for _, mode := range []string{"bare", "subscribed", "watched", "watched+logged"} {
		b.Run(mode, func(b *testing.B) {
			var c *interactions.Coordinator
			c = interactions.New(interactions.WithTimeout(time.Hour), interactions.WithPresenter(interactions.PresenterFunc(
				func(_ context.Context, it *interactions.Interaction) (string, error) {
					_, err := c.Reply(it.ID, interactions.Reply{By: "u", Answers: []string{interactions.DecisionAllow}})
					return "m", err
				})))
			ctx, cancel := context.WithCancel(context.Background())
			wait := func() {}
			switch mode {
			case "subscribed": // what the engine's own subscription costs
				events, stop := c.Subscribe()
				done := make(chan struct{})
				go func() {
					for range events {
					}
					close(done)
				}()
				go func() { <-ctx.Done(); stop() }()
				wait = func() { <-done }
			case "watched":
				wait = metrics.New(metrics.WithoutRuntimeCollectors()).Watch(ctx, c)
			case "watched+logged":
				log := slog.New(slog.NewJSONHandler(io.Discard, nil))
				wait = metrics.New(metrics.WithoutRuntimeCollectors(), metrics.WithLogger(log)).Watch(ctx, c)
			}
			var chats atomic.Int64
			b.SetParallelism(16)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				it := interactions.Interaction{Kind: interactions.KindToolApproval, ToolName: "Bash",
					ChatID: "telegram:" + strconv.FormatInt(chats.Add(1), 10)}
				for pb.Next() {
					if _, res, err := c.Request(context.Background(), it); err != nil || res.Status != interactions.StatusAnswered {
						b.Error(res, err)
						return
					}
				}
			})
			// Include the time the watcher needs to catch up.
			cancel()
			wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "interactions/s")
		})
	}
}

func BenchmarkObserve(b *testing.B) {
	m := metrics.New(metrics.WithoutRuntimeCollectors())
	now := time.Now()
	it := interactions.Interaction{ID: "abc", ChatID: "telegram:1", Kind: interactions.KindQuestion, AskedAt: now}
	asked := interactions.Event{Type: interactions.EventRequested, Interaction: it}
	done := interactions.Event{Type: interactions.EventResolved, Interaction: it,
		Resolution: interactions.Resolution{Status: interactions.StatusAnswered, At: now.Add(3 * time.Second)}}
	b.ReportAllocs()
	for b.Loop() {
		m.Observe(asked)
		m.Observe(done)
	}
}

func BenchmarkOutboundParallel(b *testing.B) {
	m := metrics.New(metrics.WithoutRuntimeCollectors())
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Outbound("telegram")
		}
	})
}

func BenchmarkScrape(b *testing.B) {
	m := metrics.New()
	h := m.Handler()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
