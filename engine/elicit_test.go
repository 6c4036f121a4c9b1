package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// elicitAgent elicits each request sent on calls and reports the answer.
func elicitAgent(calls <-chan agent.ElicitationRequest, results chan<- agent.ElicitationResponse) *enginetest.ScriptAgent {
	return &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		el, ok := h.(agent.Elicitor)
		if !ok {
			return agent.Result{Text: "the engine cannot elicit"}, nil
		}
		for req := range calls {
			if req.Server == "" {
				break
			}
			results <- el.Elicit(ctx, req)
		}
		return agent.Result{}, nil
	}}
}

var form = json.RawMessage(`{"type":"object","properties":{
	"env":{"type":"string","title":"Environment","description":"Deploy where?","oneOf":[{"const":"stg","title":"Staging"},{"const":"prd","title":"Production"}]},
	"checks":{"type":"array","title":"Checks","items":{"anyOf":[{"const":"lint","title":"Lint"},{"const":"test","title":"Tests"}]}},
	"replicas":{"type":"integer","description":"How many replicas?"}}}`)

// A form is asked one field at a time after the server's message, the
// choices as options (single, then multiple), a number as text that is
// asked again when it is not one; the content carries the schema's values.
func TestElicitationFormIsAskedAndAccepted(t *testing.T) {
	calls, results := make(chan agent.ElicitationRequest, 1), make(chan agent.ElicitationResponse, 1)
	e, conn, _ := start(t, elicitAgent(calls, results), nil)
	send(t, e, "c1", "go")
	calls <- agent.ElicitationRequest{Server: "deployer", Message: "Configure the deploy", Schema: form}
	conn.WaitSaid(t, "MCP server deployer asks: Configure the deploy")

	it := conn.WaitShown(t, 1)
	assert.Equal(t, "Deploy where?", it.Question)
	assert.Equal(t, 1, it.Index)
	assert.Equal(t, 3, it.Total)
	assert.Equal(t, []interactions.Choice{{Label: "Staging"}, {Label: "Production"}}, it.Options)
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{"Production"}})
	require.NoError(t, err)

	it = conn.WaitShown(t, 2)
	assert.True(t, it.MultiSelect)
	_, err = e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{"Lint", "Tests"}})
	require.NoError(t, err)

	it = conn.WaitShown(t, 3)
	assert.Equal(t, "How many replicas? (integer)", it.Question)
	assert.Empty(t, it.Options)
	_, err = e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Text: "three"})
	require.NoError(t, err)
	conn.WaitSaid(t, `"three" is not a whole number`)
	it = conn.WaitShown(t, 4)
	_, err = e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Text: "3"})
	require.NoError(t, err)

	r := <-results
	assert.Equal(t, agent.ElicitAccept, r.Action)
	assert.Equal(t, map[string]any{"env": "prd", "checks": []any{"lint", "test"}, "replicas": int64(3)}, r.Content)
	close(calls)
}

// Declining a question declines the form; nobody answering in time
// cancels it; a link is shown with Done, which accepts.
func TestElicitationDeclineTimeoutAndLink(t *testing.T) {
	calls, results := make(chan agent.ElicitationRequest, 1), make(chan agent.ElicitationResponse, 1)
	e, conn, _ := start(t, elicitAgent(calls, results), []interactions.Opt{interactions.WithTimeout(2 * time.Second)})
	send(t, e, "c1", "go")

	calls <- agent.ElicitationRequest{Server: "deployer", Schema: form}
	it := conn.WaitShown(t, 1)
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Reject: true})
	require.NoError(t, err)
	assert.Equal(t, agent.ElicitationResponse{Action: agent.ElicitDecline}, <-results)

	calls <- agent.ElicitationRequest{Server: "auth", Message: "Sign in to continue", URL: "https://auth.example/login?x=1"}
	it = conn.WaitShown(t, 2)
	assert.Contains(t, it.Question, "Sign in to continue")
	assert.Contains(t, it.Question, "https://auth.example/login?x=1")
	assert.Equal(t, "MCP server auth", it.Header)
	_, err = e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{"Done"}})
	require.NoError(t, err)
	assert.Equal(t, agent.ElicitAccept, (<-results).Action)

	calls <- agent.ElicitationRequest{Server: "deployer", Schema: form}
	conn.WaitShown(t, 3)
	assert.Equal(t, agent.ElicitationResponse{Action: agent.ElicitCancel}, <-results, "expired: cancel")

	calls <- agent.ElicitationRequest{Server: "bad", Schema: json.RawMessage(`{"properties":{"x":{"type":"object"}}}`)}
	assert.Equal(t, agent.ElicitDecline, (<-results).Action)
	conn.WaitSaid(t, `MCP server bad asked for input leashd could not show (field "x": type "object" cannot be asked`)
	close(calls)
}
