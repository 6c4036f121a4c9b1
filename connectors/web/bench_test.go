package web_test

import (
	"net/http"
	"testing"
	"time"
)

// BenchmarkTapToResolved measures one tap through the HTTP API: from
// sending POST /api/interactions/{id}/reply to its interaction.resolved
// event on an open event stream (engine, coordinator and demo agent real).
func BenchmarkTapToResolved(b *testing.B) {
	e := start(b, setup{})
	s := e.subscribe("?chat=bench")
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		e.send("bench", "bash", "agent")
		it := s.next("interaction.requested")
		b.StartTimer()
		t0 := time.Now()
		st, body := e.reply(id(it), `{"answers":[["allow"]]}`)
		if st != http.StatusNoContent {
			b.Fatalf("reply: %d %s", st, body)
		}
		s.resolved(id(it))
		total += time.Since(t0)
		b.StopTimer()
		s.next("agent.done")
		s.unread = nil
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/tap")
}

// BenchmarkPromptToFirstText measures POST /api/chats/{chat}/messages to
// the first streamed agent text on the event stream.
func BenchmarkPromptToFirstText(b *testing.B) {
	e := start(b, setup{})
	s := e.subscribe("?chat=bp")
	for b.Loop() {
		e.send("bp", "hello", "agent")
		s.next("message")
		b.StopTimer()
		s.next("agent.done")
		s.unread = nil
		b.StartTimer()
	}
}
