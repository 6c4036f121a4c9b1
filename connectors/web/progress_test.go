package web_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/enginetest/clocktest"
)

// A long turn's signs of life show on the page under its output, every
// tick of the engine's clock, and go when the turn ends.
func TestBrowserShowsSignsOfLife(t *testing.T) {
	ctx := browser(t)
	clock := clocktest.New(time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC))
	release := make(chan struct{})
	ag := &enginetest.ScriptAgent{Turn: func(_ context.Context, _ *enginetest.ScriptSession, _ string, h agent.TurnHandler) (agent.Result, error) {
		h.Text("Building it.")
		h.ToolUse("Bash", json.RawMessage(`{"command":"make"}`))
		<-release
		return agent.Result{Text: "Building it."}, nil
	}}
	e := start(t, setup{agent: ag, engOpts: []enginetest.Setup{func(d *engine.Deps, _ *engine.Config) { d.Clock = clock }}})
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.pageURL()), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	sendPrompt(t, ctx, "build it")
	waitText(t, ctx, "Building it.")
	var timer *clocktest.Timer
	require.Eventually(t, func() bool {
		for _, tm := range clock.Timers() {
			if tm.D == engine.ProgressEvery && !tm.Stopped() {
				timer = tm
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond)
	require.True(t, timer.Fire())
	waitText(t, ctx, "⏳ Still working · 30s · ran 1 command")
	last, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll(".chat:not([hidden]) > *")].pop().textContent`))
	require.NoError(t, err)
	assert.Equal(t, "⏳ Still working · 30s · ran 1 command", last, "under the turn's output")
	close(release)
	waitSel(t, ctx, ".done")
	assert.Zero(t, count(t, ctx, ".progress"), "gone when the turn ends")
}
