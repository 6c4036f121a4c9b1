package engine_test

import (
	"context"
	"testing"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// reqAgent puts each request sent on calls to the engine and reports the
// decision on results; a zero request ends the turn.
func reqAgent(engineRules bool, calls <-chan agent.PermissionRequest, results chan<- agent.PermissionResponse) *enginetest.ScriptAgent {
	return &enginetest.ScriptAgent{EngineRules: engineRules, Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		for req := range calls {
			if req.ToolName == "" {
				break
			}
			results <- h.Permission(ctx, req)
		}
		return agent.Result{}, nil
	}}
}

// What the agent says about a request reaches the person: the reason, the
// path, the MCP server, and which options in what order; terminal escapes
// in the agent's text do not.
func TestToolApprovalCarriesTheAgentsFields(t *testing.T) {
	calls, results := make(chan agent.PermissionRequest, 2), make(chan agent.PermissionResponse, 2)
	e, conn, _ := start(t, reqAgent(false, calls, results), nil)
	send(t, e, "c1", "go")
	req := agent.PermissionRequest{
		ToolName: "mcp__github__create_issue", Input: mustJSON(map[string]string{"title": "x"}),
		Reason: "Creates an issue \x1b[31min a public repo\x1b[0m", BlockedPath: "/etc/passwd",
		MCPServer: "github", MCPSource: "user",
		DefaultToNo: true, NoSessionAllow: true, RequiresDetails: true,
	}
	calls <- req
	it := conn.WaitShown(t, 1)
	assert.Equal(t, "Why it asks: Creates an issue in a public repo\nPath: /etc/passwd", it.Reason)
	assert.Equal(t, "github (user)", it.MCPServer)
	assert.True(t, it.DefaultToNo)
	assert.True(t, it.NoSessionAllow)
	assert.True(t, it.RequiresDetails)
	assert.Equal(t, []interactions.Choice{interactions.ToolOptions[2], interactions.ToolOptions[0]}, it.Options, "deny first, no session rule")
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	r := <-results
	assert.True(t, r.Allow)
	assert.Equal(t, agent.ClassUserTemporary, r.Classification)
	close(calls)
}

// How a person decided reaches the agent as a classification: once,
// for the session, or rejected; nobody deciding (a mode) leaves it empty.
func TestDecisionClassification(t *testing.T) {
	calls, results := make(chan agent.PermissionRequest, 4), make(chan agent.PermissionResponse, 4)
	e, conn, _ := start(t, reqAgent(true, calls, results), nil)
	send(t, e, "c1", "go")
	for i, tc := range []struct {
		reply interactions.Reply
		want  string
		allow bool
	}{
		{interactions.Reply{Answers: []string{interactions.DecisionAllowSession}}, agent.ClassUserPermanent, true},
		{interactions.Reply{Answers: []string{interactions.DecisionDeny}, Text: "no"}, agent.ClassUserReject, false},
		{interactions.Reply{Reject: true}, agent.ClassUserReject, false},
	} {
		calls <- bashReq("make " + string(rune('a'+i)))
		it := conn.WaitShown(t, i+1)
		tc.reply.By = "u1"
		_, err := e.Reply(context.Background(), it.ID, tc.reply)
		require.NoError(t, err)
		r := <-results
		assert.Equal(t, tc.allow, r.Allow)
		assert.Equal(t, tc.want, r.Classification, "reply %d", i)
	}
	// A later call the session rule covers was allowed by the person's
	// rule: permanent, not asked.
	calls <- bashReq("make a")
	r := <-results
	assert.True(t, r.Allow)
	assert.Equal(t, agent.ClassUserPermanent, r.Classification)
	close(calls)
}

// A request the person's own ask rule forced is always put to a person:
// not allowed by a session rule the engine keeps (the demo path), not by
// acceptEdits, and it offers no "allow for this session".
func TestAskRuleIsNeverAutoApproved(t *testing.T) {
	calls, results := make(chan agent.PermissionRequest, 4), make(chan agent.PermissionResponse, 4)
	e, conn, _ := start(t, reqAgent(true, calls, results), nil, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModeAcceptEdits })
	send(t, e, "c1", "go")
	calls <- bashReq("npm test")
	it := conn.WaitShown(t, 1)
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAllowSession}})
	require.NoError(t, err)
	require.True(t, (<-results).Allow)

	// Covered by the session rule, but forced by an ask rule.
	forced := bashReq("npm test")
	forced.AskRule = "Bash(npm test)"
	calls <- forced
	it = conn.WaitShown(t, 2)
	assert.Equal(t, "Your ask rule Bash(npm test) requires a person to decide.", it.Reason)
	assert.False(t, it.HasOption(interactions.DecisionAllowSession))
	_, err = e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionDeny}})
	require.NoError(t, err)
	assert.False(t, (<-results).Allow)

	// An edit in acceptEdits mode, forced by an ask rule.
	edit := agent.PermissionRequest{ToolName: "Write", Input: mustJSON(map[string]string{"file_path": "a.txt", "content": "x"}), AskRule: "Write"}
	calls <- edit
	it = conn.WaitShown(t, 3)
	assert.Equal(t, "Write", it.ToolName)
	_, err = e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	assert.True(t, (<-results).Allow)

	// Without the ask rule the same edit is allowed by the mode.
	edit.AskRule = ""
	calls <- edit
	r := <-results
	assert.True(t, r.Allow)
	assert.Empty(t, r.Classification, "no person decided")
	close(calls)
}
