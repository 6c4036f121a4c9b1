package discord_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leashd/leashd/connectors/discord/discordfake"
)

// BenchmarkTapAck measures how long a tap waits for its acknowledgement
// (Discord allows 3 s), Gateway dispatch to interaction callback through
// the real discordgo client; the work happens after.
func BenchmarkTapAck(b *testing.B) {
	e := start(b, envOpt{})
	e.dm(dev, "ask")
	q := e.waitComponents(dmChan, "Which database?")
	var delays []time.Duration
	for b.Loop() {
		id, err := e.fake.Click(stranger, q, "leashd:unknown:0") // acknowledged, then refused
		if err != nil {
			b.Fatal(err)
		}
		var it discordfake.Interaction
		if !e.fake.WaitFor(wait, func() bool {
			for _, x := range e.fake.Interactions() {
				if x.ID == id && !x.Responded.IsZero() {
					it = x
					return true
				}
			}
			return false
		}) {
			b.Fatal("no acknowledgement")
		}
		delays = append(delays, it.Responded.Sub(it.Sent))
	}
	report(b, delays)
}

// BenchmarkTapToAgent measures a tap's round trip: the button tapped →
// the agent holds the answer and the message shows it.
func BenchmarkTapToAgent(b *testing.B) {
	e := start(b, envOpt{})
	var delays []time.Duration
	n := 0
	for b.Loop() {
		n++
		e.dm(dev, "ask")
		var q discordfake.Message
		e.fake.WaitFor(wait, func() bool {
			cnt := 0
			for _, m := range e.fake.Messages(dmChan) {
				if strings.Contains(m.Content, "Which database?") && !strings.Contains(m.Content, "Answer") && m.HasComponents() {
					cnt++
					q = m
				}
			}
			return cnt == 1
		})
		t0 := time.Now()
		e.click(dev, q, "SQLite")
		if !e.fake.WaitFor(wait, func() bool { return len(e.agent.Responses()) == n && !e.current(q).HasComponents() }) {
			b.Fatal("tap not delivered")
		}
		delays = append(delays, time.Since(t0))
		e.waitText(dmChan, "asked:")
	}
	report(b, delays)
}

func report(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, "p99-ms")
}
