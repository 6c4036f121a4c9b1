package claude_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

func (a *spyAgent) opened() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.openedFor...)
}

// With LEASHD_PREWARM, a real CLI process is started and initialized
// before anyone writes; a new chat's first prompt is answered by it (the
// chat opens no process of its own) and another spare takes its place.
func TestE2EPrewarmedCLIAnswersANewChat(t *testing.T) {
	s := newStack(t, func(_ *engine.Deps, c *engine.Config) { c.Prewarm = 1 }, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = 3 })
	s.api.Otherwise(func(*fakeapi.Request) fakeapi.Reply { return fakeapi.Text("ok from the spare") })
	require.Eventually(t, func() bool { return len(s.starts(t)) == 1 }, 30*time.Second, 10*time.Millisecond, "the spare CLI is started")

	s.send(t, "hello")
	sum := s.conn.WaitDone(t, 1)
	assert.Contains(t, sum.Result, "ok from the spare")
	require.Eventually(t, func() bool { return len(s.spy.opened()) == 2 }, 30*time.Second, 10*time.Millisecond, "a new spare is started")
	assert.Equal(t, []string{"", ""}, s.spy.opened(), "both sessions opened were spares: the chat's turn ran in the first")
	assert.Equal(t, 2, s.e.SessionsActive(), "the chat's process and the new spare")
}

// BenchmarkE2ENewChatFirstText: a new chat's prompt → the first streamed
// text, through the engine and the real CLI against the fake API, without
// and with a prewarmed spare (LEASHD_PREWARM 0 and 1). Between prompts the
// last chat's process is closed (idle timeout) and, with prewarm, a spare
// started again; that settling is not timed.
//
//	LEASHD_TEST_CLAUDE=$(command -v claude) go test -run '^$' -bench E2ENewChatFirstText -benchtime 5x ./engine/agent/claude
func BenchmarkE2ENewChatFirstText(b *testing.B) {
	for _, prewarm := range []int{0, 1} {
		b.Run(fmt.Sprintf("prewarm=%d", prewarm), func(b *testing.B) {
			s := newStack(b, func(_ *engine.Deps, c *engine.Config) { c.Prewarm = prewarm }, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = 2 }, func(_ *engine.Deps, c *engine.Config) { c.IdleTimeout = 100 * time.Millisecond })
			s.api.Otherwise(func(*fakeapi.Request) fakeapi.Reply { return fakeapi.Text("first words") })
			var total time.Duration
			n := 0
			for b.Loop() {
				b.StopTimer()
				// Settle: the last chat's process closed, the spare ready.
				time.Sleep(2 * time.Second)
				n++
				s.conn.Lock()
				before := len(s.conn.Streamed)
				s.conn.Unlock()
				b.StartTimer()
				start := time.Now()
				_, err := s.e.HandleMessage(context.Background(), connectors.Incoming{ChatID: fmt.Sprintf("new-%d", n), UserID: "u1", Text: "hello"})
				require.NoError(b, err)
				s.conn.WaitFor(b, "the first streamed text", func() bool { return len(s.conn.Streamed) > before })
				total += time.Since(start)
				b.StopTimer()
				s.conn.WaitDone(b, n)
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(n), "first-text-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}
