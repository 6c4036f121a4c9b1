package interactions_test

// Coordinator benchmarks. Run them with:
//
//	go test -run='^$' -bench=. -benchmem ./interactions
//
// They report interactions requested and resolved per second
// (BenchmarkRequestResolve*) and the memory one pending interaction costs at
// 1k, 10k and 100k pending at once (BenchmarkPendingMemory).

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leashd/leashd/interactions"
)

var benchApproval = interactions.Interaction{Kind: interactions.KindToolApproval, ToolName: "Bash", ToolSummary: "go test ./..."}

// tapPresenter answers every interaction the moment it is shown, as a tap
// racing the presentation would.
func tapPresenter(c **interactions.Coordinator) interactions.PresenterFunc {
	return func(_ context.Context, it interactions.Interaction) (string, error) {
		if _, err := (*c).Reply(it.ID, interactions.Reply{By: "u", Answers: []string{interactions.DecisionAllow}}); err != nil {
			return "", err
		}
		return "m", nil
	}
}

func reportRate(b *testing.B, n int64) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "interactions/s")
}

// One chat: ask, answer, hand the answer back, in a loop.
func BenchmarkRequestResolve(b *testing.B) {
	var c *interactions.Coordinator
	c = interactions.New(interactions.WithPresenter(tapPresenter(&c)), interactions.WithTimeout(time.Hour))
	ctx := context.Background()
	it := benchApproval
	it.ChatID = "telegram:1"
	b.ReportAllocs()
	for b.Loop() {
		if _, res, err := c.Request(ctx, it); err != nil || res.Status != interactions.StatusAnswered {
			b.Fatal(res, err)
		}
	}
	reportRate(b, int64(b.N))
}

// Many chats at once (GOMAXPROCS×16 goroutines, each its own chat), with an
// event subscriber attached as the engine has.
func BenchmarkRequestResolveParallel(b *testing.B) {
	var c *interactions.Coordinator
	c = interactions.New(interactions.WithPresenter(tapPresenter(&c)), interactions.WithTimeout(time.Hour))
	events, stop := c.Subscribe()
	drained := make(chan struct{})
	go func() {
		for range events {
		}
		close(drained)
	}()
	var chats atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		it := benchApproval
		it.ChatID = "telegram:" + strconv.FormatInt(chats.Add(1), 10)
		for pb.Next() {
			if _, res, err := c.Request(context.Background(), it); err != nil || res.Status != interactions.StatusAnswered {
				b.Error(res, err)
				return
			}
		}
	})
	reportRate(b, int64(b.N))
	stop()
	<-drained
}

// The answer comes from another goroutine (a connector's update loop), as a
// tap does: request → present → tap → resolved → agent unblocked.
func BenchmarkRequestResolveTapFromConnector(b *testing.B) {
	shown := make(chan string, 1024)
	c := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(_ context.Context, it interactions.Interaction) (string, error) {
		shown <- it.ID
		return "m", nil
	})), interactions.WithTimeout(time.Hour))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for id := range shown {
			if _, err := c.Reply(id, interactions.Reply{By: "u", Answers: []string{interactions.DecisionAllow}}); err != nil {
				b.Error(err)
			}
		}
	}()
	var chats atomic.Int64
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		it := benchApproval
		it.ChatID = "telegram:" + strconv.FormatInt(chats.Add(1), 10)
		for pb.Next() {
			if _, res, err := c.Request(context.Background(), it); err != nil || res.Status != interactions.StatusAnswered {
				b.Error(res, err)
				return
			}
		}
	})
	reportRate(b, int64(b.N))
	close(shown)
	<-done
}

// BenchmarkPendingMemory holds n interactions pending at once (each in the
// goroutine that asked, as an agent turn waits) and reports the heap bytes
// and goroutine stack bytes each costs, measured with runtime.ReadMemStats
// after a GC, before and while they are pending. The coordinator's own share
// is heap-B/pending; stack-B/pending is the asking goroutine's stack, which
// the agent's turn has anyway.
func BenchmarkPendingMemory(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			var heap, stack float64
			for b.Loop() {
				h, s := pendingCost(b, n)
				heap += h
				stack += s
			}
			b.ReportMetric(heap/float64(b.N), "heap-B/pending")
			b.ReportMetric(stack/float64(b.N), "stack-B/pending")
			b.ReportMetric(0, "ns/op") // one op is n interactions; the per-op time says nothing
		})
	}
}

func pendingCost(b *testing.B, n int) (heapPer, stackPer float64) {
	b.Helper()
	var shown sync.WaitGroup
	shown.Add(n)
	c := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(context.Context, interactions.Interaction) (string, error) {
		shown.Done()
		return "m", nil
	})), interactions.WithTimeout(time.Hour))
	// A subscriber, as the engine and metrics have: events are queued, not
	// kept, once delivered.
	events, stop := c.Subscribe()
	go func() {
		for range events {
		}
	}()
	chats := make([]string, n)
	for i := range chats {
		chats[i] = "telegram:" + strconv.Itoa(i)
	}
	before := memStats()
	var finished sync.WaitGroup
	for i := range n {
		finished.Go(func() {
			it := benchApproval
			it.ChatID = chats[i]
			if _, _, err := c.Request(context.Background(), it); err != nil {
				b.Error(err)
			}
		})
	}
	shown.Wait()
	for c.PendingCount() != n {
		runtime.Gosched()
	}
	during := memStats()
	if got := c.Interrupt("benchmark done"); len(got) != n {
		b.Fatalf("interrupted %d, want %d", len(got), n)
	}
	finished.Wait()
	stop()
	heapPer = float64(int64(during.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
	stackPer = float64(int64(during.StackInuse)-int64(before.StackInuse)) / float64(n)
	return heapPer, stackPer
}

func memStats() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}
