package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/slack/slackfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/enginetest/clocktest"
)

// A long turn shows signs of life under its streamed message in Slack,
// and the line goes when the turn ends; the engine's clock is a test
// clock.
func TestLongTurnShowsSignsOfLifeInSlack(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC))
	release := make(chan struct{})
	ag := &enginetest.ScriptAgent{Turn: func(_ context.Context, _ *enginetest.ScriptSession, _ string, h agent.TurnHandler) (agent.Result, error) {
		h.Text("Looking around.")
		h.ToolUse("Bash", json.RawMessage(`{"command":"ls"}`))
		h.ToolUse("Grep", json.RawMessage(`{"pattern":"x"}`))
		<-release
		return agent.Result{Text: "Looking around."}, nil
	}}
	e := start(t, envOpt{agent: ag, engine: []enginetest.Setup{func(d *engine.Deps, _ *engine.Config) { d.Clock = clock }}})
	e.dm(allowedUser, "look around")
	m := e.waitText("D1", "Looking around.")
	var timer *clocktest.Timer
	require.Eventually(t, func() bool {
		for _, tm := range clock.Timers() {
			if tm.D == engine.ProgressEvery && !tm.Stopped() {
				timer = tm
				return true
			}
		}
		return false
	}, wait, time.Millisecond)
	require.True(t, timer.Fire())
	m = e.waitMsg("D1", "signs of life", func(x slackfake.Message) bool { return x.TS == m.TS && strings.Contains(x.Text, "Still working") })
	assert.Equal(t, "Looking around.\n\n_⏳ Still working · 30s · ran 1 command, searched the files_", m.Text)
	close(release)
	e.waitText("D1", "Done")
	m = e.waitMsg("D1", "the line gone", func(x slackfake.Message) bool { return x.TS == m.TS && !strings.Contains(x.Text, "Still working") })
	assert.Equal(t, "Looking around.", m.Text)
}
