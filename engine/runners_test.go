package engine_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
)

// fakeRunners answers /runner and /status as cmd's hub adapter would.
type fakeRunners struct {
	args  []string
	slots atomic.Int64
}

func (f *fakeRunners) Slots() int { return int(f.slots.Load()) }

func (f *fakeRunners) Where(chat string) string { return "Runner: box1 for " + chat }
func (f *fakeRunners) Command(chat, args string) string {
	f.args = append(f.args, args)
	return "runner set to " + args + " for " + chat
}

// TestRunnerCommandAndStatus: without runners /runner says so; with them,
// /runner goes to them and /status names the chat's runner; Tell reaches
// the chat.
func TestRunnerCommandAndStatus(t *testing.T) {
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "/runner gpu1")
	conn.WaitSaid(t, "c1|Agents run on this server only: no runners are set up (LEASHD_RUNNER_TOKENS).")

	rs := &fakeRunners{}
	e.SetRunners(rs)
	send(t, e, "c1", "/runner labels gpu")
	conn.WaitSaid(t, "c1|runner set to labels gpu for c1")
	send(t, e, "c1", "/status")
	conn.WaitSaid(t, "Runner: box1 for c1")
	e.Tell(t.Context(), "c1", "Runner box1 was lost")
	conn.WaitSaid(t, "c1|Runner box1 was lost")
	assert.Equal(t, []string{"labels gpu"}, rs.args)
	assert.Empty(t, ag.Prompts(), "no command reached the agent")
}

// TestFullRunnersQueueTheChat: when the runners have no free slot a new
// chat queues and is told its place, as with local slots; a runner
// connecting (more slots) starts it.
func TestFullRunnersQueueTheChat(t *testing.T) {
	release := make(chan struct{})
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if prompt == "long job" {
			<-release
		}
		return agent.Result{}, nil
	}}
	defer close(release)
	e, conn, _ := start(t, ag, nil)
	rs := &fakeRunners{}
	e.SetRunners(rs)

	send(t, e, "c0", "hello")
	conn.WaitSaid(t, "c0|No runner is connected to run an agent; you are number 1 in the queue. Your prompt runs as soon as one connects.")
	rs.slots.Store(1)
	e.SlotsChanged()
	waitPrompt(t, ag, "hello")

	send(t, e, "c1", "long job")
	waitPrompt(t, ag, "long job")
	send(t, e, "c2", "second")
	conn.WaitSaid(t, "c2|All 1 agent slots (on the runners and this server) are busy; you are number 1 in the queue. Your prompt runs as soon as one frees up or another runner connects.")
	assert.NotContains(t, ag.Prompts(), "second")
	rs.slots.Store(2)
	e.SlotsChanged()
	waitPrompt(t, ag, "second")
}

func waitPrompt(t *testing.T, ag *enginetest.ScriptAgent, prompt string) {
	t.Helper()
	require.Eventually(t, func() bool { return slices.Contains(ag.Prompts(), prompt) },
		30*time.Second, 10*time.Millisecond, "the agent never got %q; it got %q", prompt, ag.Prompts())
}
