package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
)

// The agent's AskUserQuestion with 10,000 options or a blank label is
// refused: the agent reads why (it may ask again), the chat is told, and
// nothing with buttons is shown.
func TestAgentQuestionOverTheLimitsIsRefused(t *testing.T) {
	many := make([]map[string]string, 10_000)
	for i := range many {
		many[i] = map[string]string{"label": fmt.Sprint("option ", i)}
	}
	for _, tc := range []struct {
		name string
		opts []map[string]string
		want string
	}{
		{"10,000 options", many, "options: 10000 options; at most 10"},
		{"a blank label", []map[string]string{{"label": "Yes"}, {"label": ""}}, "options[1].label: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan agent.PermissionResponse, 1)
			ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
				got <- h.Permission(ctx, agent.PermissionRequest{ToolName: agent.ToolAskUserQuestion, Input: mustJSON(map[string]any{
					"questions": []map[string]any{{"question": "Which?", "header": "Pick", "options": tc.opts}}})})
				return agent.Result{}, nil
			}}
			e, conn, _ := start(t, ag, nil)
			send(t, e, "c1", "ask me")
			resp := <-got
			assert.False(t, resp.Allow)
			assert.Equal(t, "The question could not be asked: "+tc.want, resp.Message)
			conn.WaitSaid(t, "c1|The agent asked a question leashd could not read ("+tc.want+"); it was told so.")
			conn.Lock()
			defer conn.Unlock()
			assert.Empty(t, conn.Shown)
		})
	}
}
