package interactions_test

// Coordinator benchmarks. Run them with:
//
//	GODEBUG=adaptivestackstart=0 go test -run='^$' -bench=. -benchmem ./interactions
//
// (.ci/bench does). Go's adaptive initial goroutine stack size, on by
// default, starts new goroutines with the average stack the last GC saw; in
// a test binary that average is the test runner's own deep goroutines', so
// the goroutines started here would begin at 4 KiB whatever they need, the
// bare handoff's too. Turned off, stack-B/pending is the stack the waiting
// goroutines need.
//
// They report interactions requested and resolved per second
// (BenchmarkRequestResolve*, BenchmarkHandoff) and the memory one pending
// interaction costs at 1k, 10k and 100k pending at once
// (BenchmarkPendingMemory). BenchmarkHandoff and BenchmarkPendingMemory
// measure a bare handoff beside the coordinator, in the same run, and
// report the coordinator's figure as a ratio of it.
//
// They guard limits sized for people tapping buttons: at least 125,000
// interactions/s at 1,000 chats (BenchmarkHandoff/chats=1000; five times the
// Python original's 25,000/s) and at most 6 KiB per pending interaction with
// its waiting goroutine (BenchmarkPendingMemory). .ci/bench checks both.

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
	return func(_ context.Context, it *interactions.Interaction) (string, error) {
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
	c := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(_ context.Context, it *interactions.Interaction) (string, error) {
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

// bareHandoff is the reference the coordinator is measured against: the
// least a handoff between an asking goroutine and a resolving one can do —
// a mutex-guarded map, one resolver goroutine, a channel per waiter.
type bareHandoff struct {
	mu      sync.Mutex
	next    uint64
	waiting map[uint64]chan string
	taps    chan uint64 // what the resolver answers, as a connector's taps
}

func newBareHandoff() *bareHandoff {
	return &bareHandoff{waiting: make(map[uint64]chan string), taps: make(chan uint64, 1024)}
}

// ask registers a waiter, has it answered by the resolver and waits.
func (h *bareHandoff) ask(tap bool) string {
	ch := make(chan string, 1)
	h.mu.Lock()
	h.next++
	id := h.next
	h.waiting[id] = ch
	h.mu.Unlock()
	if tap {
		h.taps <- id
	}
	return <-ch
}

// resolve answers until taps is closed.
func (h *bareHandoff) resolve() {
	for id := range h.taps {
		h.mu.Lock()
		ch := h.waiting[id]
		delete(h.waiting, id)
		h.mu.Unlock()
		ch <- interactions.DecisionAllow
	}
}

// answerAll answers everyone waiting (the end of BenchmarkPendingMemory).
func (h *bareHandoff) answerAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, ch := range h.waiting {
		delete(h.waiting, id)
		ch <- interactions.DecisionAllow
	}
}

// BenchmarkHandoff runs b.N interactions through the coordinator, asked by
// `chats` goroutines at once (each its own chat, asking again as soon as it
// is answered) and answered by one resolver goroutine, as a connector's
// update loop answers taps; then the same b.N through the bare handoff, the
// same way. It reports both rates and their ratio. With subscriber, an
// event subscriber is attached to the coordinator, as the engine has. The
// two run in alternating rounds (a tenth of b.N each), so that a moment
// when the machine is busy with something else slows both alike.
func BenchmarkHandoff(b *testing.B) {
	for _, bc := range []struct {
		chats int
		subs  bool
	}{{1, false}, {1000, false}, {1000, true}} {
		name := fmt.Sprintf("chats=%d", bc.chats)
		if bc.subs {
			name += "/subscriber"
		}
		b.Run(name, func(b *testing.B) {
			var coord, bare time.Duration
			for round := range handoffRounds {
				n := b.N / handoffRounds
				if round < b.N%handoffRounds {
					n++
				}
				coord += runHandoff(b, bc.chats, n, coordinatorAsker(b, bc.subs))
				bare += runHandoff(b, bc.chats, n, bareAsker())
			}
			b.ReportMetric(float64(coord.Nanoseconds())/float64(b.N), "ns/op")
			b.ReportMetric(float64(b.N)/coord.Seconds(), "interactions/s")
			b.ReportMetric(float64(b.N)/bare.Seconds(), "bare-interactions/s")
			b.ReportMetric(bare.Seconds()/coord.Seconds(), "x-bare")
		})
	}
}

const handoffRounds = 10

// An asker returns ask (called by each chat's goroutine, chat 0 to chats-1;
// it asks and waits for the answer) and stop (called after the last
// answer).
type asker func(chats int) (ask func(chat int) error, stop func())

func coordinatorAsker(b *testing.B, subscribe bool) asker {
	return func(chats int) (func(int) error, func()) {
		taps := make(chan string, 1024)
		c := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(_ context.Context, it *interactions.Interaction) (string, error) {
			taps <- it.ID
			return "m", nil
		})), interactions.WithTimeout(time.Hour))
		resolved := make(chan struct{})
		allow := interactions.Reply{By: "u", Answers: []string{interactions.DecisionAllow}} // a tap, decoded once
		go func() {
			defer close(resolved)
			for id := range taps {
				if _, err := c.Reply(id, allow); err != nil {
					b.Error(err)
				}
			}
		}()
		drained := make(chan struct{})
		stopEvents := func() {}
		if subscribe {
			events, stop := c.Subscribe()
			stopEvents = stop
			go func() {
				defer close(drained)
				for range events {
				}
			}()
		} else {
			close(drained)
		}
		ids := make([]string, chats)
		for i := range ids {
			ids[i] = "telegram:" + strconv.Itoa(i)
		}
		ask := func(chat int) error {
			it := benchApproval
			it.ChatID = ids[chat]
			_, res, err := c.Request(context.Background(), it)
			if err == nil && res.Status != interactions.StatusAnswered {
				err = fmt.Errorf("status %s", res.Status)
			}
			return err
		}
		return ask, func() { close(taps); <-resolved; stopEvents(); <-drained }
	}
}

func bareAsker() asker {
	return func(int) (func(int) error, func()) {
		h := newBareHandoff()
		resolved := make(chan struct{})
		go func() { defer close(resolved); h.resolve() }()
		ask := func(int) error {
			if got := h.ask(true); got != interactions.DecisionAllow {
				return fmt.Errorf("answer %q", got)
			}
			return nil
		}
		return ask, func() { close(h.taps); <-resolved }
	}
}

// runHandoff has n interactions asked by chats goroutines and returns how
// long they took, from the first ask to the last answer.
func runHandoff(b *testing.B, chats, n int, newAsker asker) time.Duration {
	b.Helper()
	ask, stop := newAsker(chats)
	defer stop()
	var wg sync.WaitGroup
	begin := make(chan struct{})
	for chat := range chats {
		rounds := n / chats
		if chat < n%chats {
			rounds++
		}
		wg.Go(func() {
			<-begin
			for range rounds {
				if err := ask(chat); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	start := time.Now()
	close(begin)
	wg.Wait()
	return time.Since(start)
}

// BenchmarkPendingMemory holds n interactions pending at once (each in the
// goroutine that asked, as an agent turn waits in Request) and reports the
// heap bytes and goroutine stack bytes each costs, measured with
// runtime.ReadMemStats after a GC, before and while they are pending:
// B/pending is their sum. bare-B/pending is a goroutine waiting in the bare
// handoff, measured the same way in the same run.
//
// A goroutine's descriptor (about 400 bytes) is allocated the first time
// that many goroutines exist at once and kept for reuse after they end, so
// whichever side ran first would pay for both: warmGoroutines has n
// goroutines exist before either side is measured, and neither figure
// includes descriptors.
func BenchmarkPendingMemory(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		warmGoroutines(n)
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			var heap, stack, bare float64
			for b.Loop() {
				h, s := pendingCost(b, n)
				heap += h
				stack += s
				bh, bs := barePendingCost(n)
				bare += bh + bs
			}
			per := float64(b.N)
			b.ReportMetric(heap/per, "heap-B/pending")
			b.ReportMetric(stack/per, "stack-B/pending")
			b.ReportMetric((heap+stack)/per, "B/pending")
			b.ReportMetric(bare/per, "bare-B/pending")
			b.ReportMetric((heap+stack)/bare, "x-bare")
			b.ReportMetric(0, "ns/op") // one op is n interactions; the per-op time says nothing
		})
	}
}

func pendingCost(b testing.TB, n int) (heapPer, stackPer float64) {
	b.Helper()
	var shown sync.WaitGroup
	shown.Add(n)
	c := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(context.Context, *interactions.Interaction) (string, error) {
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
	ctx, cancel := context.WithCancel(context.Background()) // as an agent turn's
	defer cancel()
	before := memStats()
	var finished sync.WaitGroup
	for i := range n {
		finished.Go(func() {
			it := benchApproval
			it.ChatID = chats[i]
			if _, _, err := c.Request(ctx, it); err != nil {
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

// warmGoroutines has n goroutines exist at once, then end.
func warmGoroutines(n int) {
	var started, finished sync.WaitGroup
	release := make(chan struct{})
	started.Add(n)
	for range n {
		finished.Go(func() { started.Done(); <-release })
	}
	started.Wait()
	close(release)
	finished.Wait()
}

// barePendingCost is pendingCost for the bare handoff.
func barePendingCost(n int) (heapPer, stackPer float64) {
	h := newBareHandoff()
	before := memStats()
	var finished sync.WaitGroup
	for range n {
		finished.Go(func() { h.ask(false) })
	}
	for {
		h.mu.Lock()
		k := len(h.waiting)
		h.mu.Unlock()
		if k == n {
			break
		}
		runtime.Gosched()
	}
	during := memStats()
	h.answerAll()
	finished.Wait()
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
