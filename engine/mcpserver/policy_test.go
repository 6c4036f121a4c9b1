package mcpserver_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/mcpserver"
	"github.com/leashd/leashd/engine/policy"
	"github.com/leashd/leashd/interactions"
)

// permission_prompt meets the policy an agent's request meets: a deny rule
// denies `git push --force` at once, the caller reads the rule, the chat is
// told, and nobody is asked.
func TestPermissionPromptDeniedByPolicy(t *testing.T) {
	p, err := policy.Parse("policy.yaml", []byte("rules:\n  - name: no pushing\n    tool: Bash\n    command: '\\bgit\\s+push\\b'\n    decision: deny\n    reason: Pushing is done by CI.\n"))
	require.NoError(t, err)
	coord := interactions.New()
	e := enginetest.New(&enginetest.ScriptAgent{}, coord, func(d *engine.Deps, _ *engine.Config) { d.Policy = policy.NewHolder("", p) })
	conn := enginetest.NewConn("web")
	e.AddConnector(conn)
	cs := connect(t, coord)
	var out string
	select {
	case r := <-callAsync(t, cs, mcpserver.ToolPermissionPrompt, map[string]any{"tool_name": "Bash", "input": map[string]string{"command": "git push --force"}}):
		require.False(t, r.isError, r.text)
		out = r.text
	case <-time.After(10 * time.Second):
		t.Fatal("not decided at once: it waits for a person")
	}
	var got struct{ Behavior, Message string }
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.Equal(t, "deny", got.Behavior)
	assert.Equal(t, `denied by policy rule 1 "no pushing" (line 2): Pushing is done by CI.`, got.Message)
	conn.WaitSaid(t, `Denied by policy rule 1 "no pushing" (line 2): Pushing is done by CI. — Bash: git push --force`)
	conn.Lock()
	assert.Empty(t, conn.Shown, "nobody is asked")
	conn.Unlock()
}
