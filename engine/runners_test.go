package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
)

// fakeRunners answers /runner and /status as cmd's hub adapter would.
type fakeRunners struct{ args []string }

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
