package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest/clocktest"
	"github.com/leashd/leashd/interactions"
)

// A scheduled resume is for work that stopped: a turn that runs before the
// reset, or /clear, cancels it; a limit hit again replaces it.
func TestResumeAfterLimitIsCancelledByWhatHappensMeanwhile(t *testing.T) {
	reset := time.Date(2026, 11, 25, 13, 34, 0, 0, time.UTC)
	limited := func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if strings.HasPrefix(prompt, "limit") {
			return agent.Result{Text: "You've hit your limit", IsError: true, UsageLimit: &agent.UsageLimit{ResetsAt: reset, Kind: "seven_day"}}, nil
		}
		return agent.Result{Text: "ran: " + prompt}, nil
	}
	for _, tc := range []struct {
		name     string
		then     func(t *testing.T, e *engine.Engine, conn *enginetest.Conn)
		timers   int
		resumes  bool
		stopped0 bool
	}{
		{"nothing meanwhile", func(*testing.T, *engine.Engine, *enginetest.Conn) {}, 1, true, false},
		{"a turn ran", func(t *testing.T, e *engine.Engine, conn *enginetest.Conn) {
			send(t, e, "c1", "go on")
			conn.WaitFor(t, "second turn", func() bool { return len(conn.Summaries) == 2 })
		}, 1, false, true},
		{"limit again", func(t *testing.T, e *engine.Engine, conn *enginetest.Conn) {
			send(t, e, "c1", "limit again")
			conn.WaitFor(t, "second turn", func() bool { return len(conn.Summaries) == 2 })
		}, 2, false, true},
		{"/clear", func(t *testing.T, e *engine.Engine, conn *enginetest.Conn) {
			send(t, e, "c1", "/clear")
			conn.WaitSaid(t, "fresh")
		}, 1, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktest.New(reset.Add(-90 * time.Minute))
			ag := &enginetest.ScriptAgent{Turn: limited}
			e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.ResumeAfterLimit = true }, func(d *engine.Deps, _ *engine.Config) { d.Clock = clock })
			send(t, e, "c1", "limit me")
			conn.WaitSaid(t, "Usage limit reached (weekly): it resets at 2026-11-25 13:34 UTC (in 1h30m). leashd will resume this turn then by itself.")
			tc.then(t, e, conn)
			// The turn's summary goes out before the engine settles the
			// scheduled resume (afterLimit runs after done): wait for it.
			require.Eventually(t, func() bool {
				ts := resumeTimers(clock)
				return len(ts) == tc.timers && ts[0].Stopped() == tc.stopped0
			}, 10*time.Second, time.Millisecond, "timers: want %d, the first stopped=%v", tc.timers, tc.stopped0)
			timers := resumeTimers(clock)
			timers[0].Fire()
			if tc.resumes {
				conn.WaitFor(t, "the resumed turn", func() bool { return len(conn.Summaries) == 2 })
				assert.Equal(t, engine.ResumeAfterLimitPrompt, ag.Prompts()[1])
				return
			}
			for _, p := range ag.Prompts() {
				assert.NotEqual(t, engine.ResumeAfterLimitPrompt, p, "no resume after %s", tc.name)
			}
			assert.NotContains(t, conn.SaidText(), "resuming")
		})
	}
}

// The call a person allowed after a restart is allowed once more without
// asking when the agent re-issues it (input compared as JSON), not a
// different call, and not a second time.
func TestAllowedAfterRestartOnce(t *testing.T) {
	input := json.RawMessage(`{"command":"make deploy","description":"ship it"}`)
	rec := &fakeRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{}, left: []engine.Interrupted{
		{Ref: "msg-old1", Interaction: interactions.Interaction{ID: "old1", ChatID: "c1", Kind: interactions.KindToolApproval,
			ToolName: "Bash", ToolInput: input, ToolSummary: "make deploy", Options: interactions.ToolOptions}},
	}}
	results := make(chan agent.PermissionResponse, 3)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if strings.HasPrefix(prompt, agent.RecoveredPromptPrefix) {
			// the same call, keys in another order; a different one; the same again
			for _, in := range []string{`{"description":"ship it", "command":"make deploy"}`, `{"command":"make clean"}`, string(input)} {
				results <- h.Permission(ctx, agent.PermissionRequest{ToolName: "Bash", Input: json.RawMessage(in)})
			}
		}
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(d *engine.Deps, _ *engine.Config) { d.Store = rec })
	waitRestored(t, e, "old1")
	_, err := e.Reply(context.Background(), "old1", interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	r := <-results
	assert.True(t, r.Allow, "the re-issued call is allowed")
	// without asking: the first call shown is the next one
	for i, want := range []string{"make clean", "make deploy"} {
		it := conn.WaitShown(t, i+1)
		assert.Contains(t, it.ToolSummary, want, "asked as usual")
		_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionDeny}})
		require.NoError(t, err)
		assert.False(t, (<-results).Allow)
	}
}

// resumeTimers are the clock's timers but a turn's signs of life
// (engine.ProgressEvery).
func resumeTimers(c *clocktest.Clock) []*clocktest.Timer {
	var out []*clocktest.Timer
	for _, t := range c.Timers() {
		if t.D != engine.ProgressEvery {
			out = append(out, t)
		}
	}
	return out
}
