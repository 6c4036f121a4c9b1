package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/interactions"
)

// A request /stop or /clear cancels is answered with StopFollows, so a
// driver whose agent must read the stop first (ACP's session/cancel) can
// wait for it however busy the machine is; one that expires is not.
func TestStopAndClearSayAStopFollows(t *testing.T) {
	results := make(chan agent.PermissionResponse, 3)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		results <- h.Permission(ctx, bashReq("make deploy"))
		return agent.Result{Text: prompt}, nil
	}}
	e, conn, _ := start(t, ag, nil)
	for i, cmd := range []string{"/stop", "/clear"} {
		send(t, e, "c1", "go")
		conn.WaitShown(t, i+1)
		send(t, e, "c1", cmd)
		r := <-results
		assert.True(t, r.NoAnswer, cmd)
		assert.True(t, r.StopFollows, "%s: a stop follows the cancelled answer", cmd)
	}
	// Nobody answers: it expires, and no stop follows.
	e, _, _ = start(t, ag, []interactions.Opt{interactions.WithTimeout(50 * time.Millisecond)})
	send(t, e, "c1", "go")
	r := <-results
	require.True(t, r.NoAnswer)
	assert.False(t, r.StopFollows, "an expired request is not followed by a stop")
}
