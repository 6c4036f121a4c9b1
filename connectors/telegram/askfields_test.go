package telegram_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

// A tool approval that must not be approved by one stray tap, offers no
// session rule and needs its details read: Deny is the first button, there
// is no "Allow for this session", the whole input (not the compact
// command) is shown with the agent's reason and the MCP server, and the
// Allow button still allows.
func TestToolApprovalWithTheAgentsFlags(t *testing.T) {
	h := newHarness(t, setup{turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
		raw, _ := json.Marshal(map[string]any{"title": "Leak <keys>", "body": "long body", "repo": "acme/site"})
		th.Permission(ctx, agent.PermissionRequest{
			ToolName: "mcp__github__create_issue", Input: raw, ToolUseID: "toolu_1",
			Reason: "Posts to a public repo", MCPServer: "github", MCPSource: "user",
			DefaultToNo: true, NoSessionAllow: true, RequiresDetails: true,
		})
		return agent.Result{Text: "ok"}, nil
	}})
	h.fake.Text(me, me, "file it")
	m := h.botMessage(me, "The agent wants to use the tool create_issue of the MCP server github")
	assert.Equal(t, []string{"Deny", "Allow"}, m.Buttons())
	assert.Contains(t, m.Text, "MCP server: github (user)")
	assert.Contains(t, m.Text, "Why it asks: Posts to a public repo")
	assert.Contains(t, m.Text, "Review the whole request before you answer.")
	assert.Contains(t, m.Text, "Deny comes first")
	assert.Contains(t, m.Text, `&quot;title&quot;: &quot;Leak &lt;keys&gt;&quot;`, "the whole input, indented")
	assert.Contains(t, m.Text, `&quot;repo&quot;: &quot;acme/site&quot;`)
	h.answer(h.tap(me, me, m.ID, "Allow"))
	resp := h.response(1)
	assert.True(t, resp.Allow, "the Allow button allows wherever it stands")
	assert.Equal(t, agent.ClassUserTemporary, resp.Classification)
	assert.Empty(t, resp.UpdatedPermissions)
}

// A request the agent withdrew loses its buttons and says so.
func TestWithdrawnToolApprovalSaysSo(t *testing.T) {
	var h *harness
	h = newHarness(t, setup{turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
		pctx, cancel := context.WithCancelCause(ctx)
		raw, _ := json.Marshal(map[string]any{"command": "rm -rf build"})
		done := make(chan agent.PermissionResponse, 1)
		go func() {
			done <- th.Permission(pctx, agent.PermissionRequest{ToolName: "Bash", Input: raw, ToolUseID: "toolu_1"})
		}()
		h.fake.Wait(waitLimit, func() bool {
			ms := h.fake.BotMessages(me)
			return len(ms) > 0 && ms[len(ms)-1].Markup != nil
		})
		cancel(agent.ErrRequestWithdrawn)
		<-done
		return agent.Result{Text: "ok"}, nil
	}})
	h.fake.Text(me, me, "build")
	m := h.botMessage(me, "The agent wants to run a command")
	m = h.waitMessage(me, m.ID, "withdrawn", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "The agent withdrew this request.")
	require.False(t, h.response(1).Allow)
}
