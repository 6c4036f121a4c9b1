package claude_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/enginetest/clocktest"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// The account's usage limit stops a turn: the chat is told when it resets,
// /status shows it, and with resume on the turn goes on by itself after the
// reset (in the same, resumed conversation); with resume off nothing is
// scheduled.
func TestE2EUsageLimitResetIsShownAndTheTurnResumes(t *testing.T) {
	reset := time.Now().Add(2 * time.Hour).Truncate(time.Second).UTC()
	for _, resume := range []bool{true, false} {
		t.Run(map[bool]string{true: "resume on", false: "resume off"}[resume], func(t *testing.T) {
			clock := clocktest.New(reset.Add(-2*time.Hour - 5*time.Minute))
			s, _ := newAgentStack(t, []claude.Option{claude.WithEnv(fakeapi.Subscriber())}, nil,
				func(_ *engine.Deps, c *engine.Config) { c.ResumeAfterLimit = resume }, func(d *engine.Deps, _ *engine.Config) { d.Clock = clock })
			// Every call of the first turn meets the limit (newer CLIs may
			// try again); the resume prompt finds it lifted.
			s.api.Otherwise(func(r *fakeapi.Request) fakeapi.Reply {
				if r.HasUserText(engine.ResumeAfterLimitPrompt) {
					return fakeapi.Text("Resumed where I stopped.")
				}
				return fakeapi.UsageLimit(reset, "five_hour")
			})
			s.send(t, "refactor the parser")
			sum := s.conn.WaitDone(t, 1)
			t.Logf("the CLI's result: %q", sum.Result)
			assert.True(t, sum.IsError)
			assert.Contains(t, sum.Result, "limit", "the CLI's own line reaches the chat")
			when := "at " + reset.Format("2006-01-02 15:04 UTC") + " (in 2h5m)"
			s.conn.WaitSaid(t, "Usage limit reached (5-hour): it resets "+when+".")
			status := s.status(t)
			if !resume {
				assert.Contains(t, s.conn.SaidText(), "Send a message after that to continue.")
				assert.Contains(t, status, "Usage limit (5-hour): resets "+when+"\n")
				assert.Empty(t, resumeTimers(clock), "nothing resumes by itself")
				return
			}
			assert.Contains(t, s.conn.SaidText(), "leashd will resume this turn then by itself.")
			assert.Contains(t, status, "Usage limit (5-hour): resets "+when+"; the turn resumes then by itself")
			timers := resumeTimers(clock)
			require.Len(t, timers, 1)
			assert.Equal(t, 2*time.Hour+5*time.Minute+30*time.Second, timers[0].D, "the resume waits until just after the reset")

			require.True(t, timers[0].Fire()) // the reset has passed
			s.conn.WaitSaid(t, "The usage limit has reset; resuming.")
			assert.Equal(t, "Resumed where I stopped.", s.conn.WaitDone(t, 2).Result)
			calls := s.api.Calls()
			last := calls[len(calls)-1]
			assert.True(t, last.HasUserText("refactor the parser"), "the resumed turn carries the interrupted one")
			assert.NotContains(t, s.status(t), "Usage limit", "the limit is over")
		})
	}
}

// resumeTimers are the clock's timers but the turns' signs of life
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
