package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/interactions"
)

// A request an MCP client asked before a restart is not offered again: no
// client can collect its answer. It is ended with the reason, recorded,
// and its message says so. One asked through the HTTP API stays pending:
// its caller collects the answer by ID after the restart.
func TestRestartEndsWhatMCPClientsAskedAndKeepsWhatTheAPIAsked(t *testing.T) {
	approval := func(id, asker string) interactions.Interaction {
		return interactions.Interaction{ID: id, ChatID: "c1", Kind: interactions.KindQuestion, Asker: asker, Approval: true,
			Question: "Deploy?", Options: []interactions.Choice{{Label: "Approve"}, {Label: "Deny"}}}
	}
	rec := &fakeRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{}, left: []engine.Interrupted{
		{Ref: "msg-mcp", Interaction: approval("mcp1", engine.AskerMCP)},
		{Ref: "msg-api", Interaction: approval("api1", engine.AskerAPI)},
	}}
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(d *engine.Deps, _ *engine.Config) { d.Store = rec })
	waitRestored(t, e, "api1")
	conn.WaitFor(t, "the MCP request's message says it ended", func() bool {
		for _, u := range conn.Updates {
			if u.Ref == "msg-mcp" && u.Resolution.Status == interactions.StatusCancelled && u.Resolution.Text == interactions.AskerGoneText {
				return true
			}
		}
		return false
	})
	_, pending := e.Interaction("mcp1")
	assert.False(t, pending, "not answerable again")
	_, err := e.Reply(context.Background(), "mcp1", interactions.Reply{By: "u1", Answers: []string{"Approve"}})
	assert.Error(t, err, "a tap on its old button")
	rec.mu.Lock()
	assert.Equal(t, interactions.StatusCancelled, rec.done["mcp1"].Status, "recorded")
	assert.Equal(t, interactions.AskerGoneText, rec.done["mcp1"].Text)
	_, apiDone := rec.done["api1"]
	rec.mu.Unlock()
	assert.False(t, apiDone, "the API's request is not ended")
	_, pending = e.Interaction("api1")
	assert.True(t, pending, "the API's request is answerable after the restart")
	conn.Lock()
	for _, u := range conn.Updates {
		if u.Ref == "msg-api" {
			assert.NotEqual(t, interactions.StatusCancelled, u.Resolution.Status, "the API's request is not shown as ended")
		}
	}
	conn.Unlock()
}
