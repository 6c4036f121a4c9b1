package telegram_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/enginetest/clocktest"
)

// A long turn shows signs of life on its streamed message every 30 s —
// how long it has run and what its tools did — and the line goes when the
// turn ends. The engine's clock is a test clock: no waiting.
func TestLongTurnShowsSignsOfLife(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC))
	release := make(chan struct{})
	ag := &enginetest.ScriptAgent{Turn: func(_ context.Context, _ *enginetest.ScriptSession, _ string, h agent.TurnHandler) (agent.Result, error) {
		h.Text("Looking around.")
		h.ToolUse("Bash", json.RawMessage(`{"command":"ls"}`))
		h.ToolUse("Bash", json.RawMessage(`{"command":"git log"}`))
		h.ToolUse("Read", json.RawMessage(`{"file_path":"a.go"}`))
		<-release
		return agent.Result{Text: "Looking around."}, nil
	}}
	h := newHarness(t, setup{agent: ag, engineOpts: []enginetest.Setup{func(d *engine.Deps, _ *engine.Config) { d.Clock = clock }}})
	h.fake.Text(me, me, "look around")
	m := h.botMessage(me, "Looking around.")
	tick := func(n int) {
		var timers []*clocktest.Timer
		h.waitFor("a progress timer", func() bool {
			timers = nil
			for _, tm := range clock.Timers() {
				if tm.D == engine.ProgressEvery && !tm.Stopped() {
					timers = append(timers, tm)
				}
			}
			return len(timers) == 1
		})
		assert.True(t, timers[0].Fire(), "tick %d", n)
	}
	tick(1)
	m = h.waitMessage(me, m.ID, "the first sign of life", func(m tgfake.Message) bool { return strings.Contains(m.Text, "Still working") })
	assert.Equal(t, "Looking around.\n\n<i>⏳ Still working · 30s · ran 2 commands, read 1 file</i>", m.Text)
	tick(2)
	h.waitMessage(me, m.ID, "the second", func(m tgfake.Message) bool { return strings.Contains(m.Text, "Still working · 1m 0s") })
	close(release)
	h.botMessage(me, "<i>Done")
	m = h.waitMessage(me, m.ID, "the line gone", func(m tgfake.Message) bool { return !strings.Contains(m.Text, "Still working") })
	assert.Equal(t, "Looking around.", m.Text)
	for _, tm := range clock.Timers() {
		if tm.D == engine.ProgressEvery {
			assert.True(t, tm.Stopped(), "no sign of life after the turn")
		}
	}
}
