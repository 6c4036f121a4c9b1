package terminal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
)

// TestToolApprovalWithTheAgentsFlags: a tool approval that must be read in
// full, defaults to no and offers no session rule: the notes and the whole
// input are printed, Deny is offered first, a digit (a stray key) does not
// answer, "s" is not offered, and the letter a still allows.
func TestToolApprovalWithTheAgentsFlags(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	turn := func(ctx context.Context, _ string, h agent.TurnHandler) (agent.Result, error) {
		in, _ := json.Marshal(map[string]string{"title": "Leak", "repo": "acme/site"})
		got <- h.Permission(ctx, agent.PermissionRequest{
			ToolName: "mcp__github__create_issue", Input: in,
			Reason: "Posts to a public repo", MCPServer: "github", MCPSource: "user",
			DefaultToNo: true, NoSessionAllow: true, RequiresDetails: true,
		})
		return agent.Result{NumTurns: 1}, nil
	}
	p := startInproc(t, map[string]turnFunc{"go": turn})
	p.send("go\r")
	s := p.waitText("[r/a/d]")
	assert.Contains(t, s, "MCP server: github (user)")
	assert.Contains(t, s, "Why it asks: Posts to a public repo")
	assert.Contains(t, s, `"repo": "acme/site"`, "the whole input")
	assert.Contains(t, s, "r Reject   a Allow   d Deny with a reason")
	assert.NotContains(t, s, "Allow for this session")
	p.send("1\r")
	p.waitText(`"1" is not an answer: type r for Reject, a for Allow, d for Deny with a reason`)
	p.send("a\r")
	r := <-got
	assert.True(t, r.Allow, fmt.Sprintf("%+v", r))
	assert.Equal(t, agent.ClassUserTemporary, r.Classification)
}
