package slack_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leashd/leashd/connectors/slack/slackfake"
)

// BenchmarkSocketModeAck measures how long an events_api envelope waits
// for its acknowledgement (Slack allows 3 s), through the real slack-go
// Socket Mode client; the work (an echo turn) happens after.
func BenchmarkSocketModeAck(b *testing.B) {
	e := start(b, envOpt{})
	var delays []time.Duration
	for b.Loop() {
		ts := e.nextTS()
		env, err := e.fake.Push("events_api", slackfake.EventCallback("Ev"+ts, slackfake.MessageEvent("D1", "im", allowedUser, ts, "", "hi")), 0)
		if err != nil {
			b.Fatal(err)
		}
		if !e.fake.WaitFor(wait, func() bool { _, ok := e.fake.Acked(env); return ok }) {
			b.Fatal("no ack")
		}
		d, _ := e.fake.AckDelay(env)
		delays = append(delays, d)
	}
	report(b, delays)
}

// BenchmarkTapToAgent measures a button tap's round trip: the block_actions
// envelope pushed → the agent holds the answer, and the message edited.
func BenchmarkTapToAgent(b *testing.B) {
	e := start(b, envOpt{})
	var delays []time.Duration
	n := 0
	for b.Loop() {
		n++
		e.dm(allowedUser, "ask")
		var q slackfake.Message
		e.fake.WaitFor(wait, func() bool {
			msgs := e.fake.Messages("D1")
			cnt := 0
			for _, m := range msgs {
				if strings.Contains(slackfake.Texts(m.Blocks), "Which database?") {
					cnt++
					q = m
				}
			}
			return cnt == n
		})
		t0 := time.Now()
		e.tap(allowedUser, q, "SQLite")
		if !e.fake.WaitFor(wait, func() bool { return len(e.agent.Responses()) == n && e.current(q).Edits > 0 }) {
			b.Fatal("tap not delivered")
		}
		delays = append(delays, time.Since(t0))
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
