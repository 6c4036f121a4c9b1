package terminal_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/interactions"
)

// attrOf is the attributes of the last occurrence of sub on the screen.
func (p *inproc) attrOf(sub string) attr {
	p.t.Helper()
	p.scr.mu.Lock()
	defer p.scr.mu.Unlock()
	a, ok := p.scr.vt.AttrOf(sub)
	require.True(p.t, ok, "%q is not on the screen", sub)
	return a
}

// A program's yes/no approval reads as one: its header, the action in
// bold, the details beneath; approve green, reject red; a rejection is
// shown as Denied, in red.
func TestYesNoApprovalIsAnApprovalCard(t *testing.T) {
	p := startInproc(t, nil)
	got := make(chan interactions.InputResponse, 1)
	go func() {
		r, _ := p.coord.RequestInput(context.Background(), interactions.InputRequest{
			ChatID: "terminal:t", Header: "Approval", Prompt: "Deploy v1.2 to production\n\n3 services, 40 s downtime",
			Options: []interactions.Choice{{Label: "Approve"}, {Label: "Reject"}},
		})
		got <- r
	}()
	s := p.waitText("[a/r]")
	assert.Contains(t, s, "Approval\nDeploy v1.2 to production\n  3 services, 40 s downtime\n  a/1 Approve   r/2 Reject\n[a/r]")
	assert.True(t, p.attrOf("Deploy v1.2").bold, "the action in bold")
	assert.False(t, p.attrOf("3 services").bold, "its details beneath, plain")
	assert.Equal(t, 32, p.attrOf("a/1 Approve").fg, "approve is green")
	assert.Equal(t, 31, p.attrOf("r/2 Reject").fg, "reject is red")
	p.send("r\r")
	assert.Equal(t, "Reject", (<-got).Value)
	p.waitText("  → Denied (Reject)")
	assert.Equal(t, 31, p.attrOf("→ Denied (Reject)").fg)
}

// A tool approval with the agent's own options lists them by name,
// allow-like green and reject-like red; the whole command is shown
// however long it is.
func TestToolApprovalWithTheAgentsOptions(t *testing.T) {
	cmd := strings.Repeat("echo step && ", 400) + "the-end"
	got := make(chan agent.PermissionResponse, 1)
	in, err := json.Marshal(map[string]string{"command": cmd})
	require.NoError(t, err)
	p := startInproc(t, map[string]turnFunc{"go": func(ctx context.Context, _ string, h agent.TurnHandler) (agent.Result, error) {
		got <- h.Permission(ctx, agent.PermissionRequest{ToolName: "Bash", Input: in, Options: []agent.PermissionOption{
			{ID: "once", Name: "Allow once", Kind: "allow_once"}, {ID: "no", Name: "Reject", Kind: "reject_once"}}})
		return agent.Result{Text: "ok"}, nil
	}})
	p.send("go\r")
	s := p.waitText("Choose 1-2")
	assert.Contains(t, s, "The agent wants to run a command:")
	assert.Contains(t, strings.ReplaceAll(s, "\n", ""), "the-end", "the whole command")
	assert.Contains(t, s, "1) Allow once")
	assert.Equal(t, 32, p.attrOf("Allow once").fg)
	assert.Equal(t, 31, p.attrOf("Reject — ").fg, "the reject option is red")
	p.send("2\r")
	resp := <-got
	assert.False(t, resp.Allow)
	assert.Equal(t, "no", resp.OptionID)
	p.waitText("  → Denied (Reject)")
}
