package slack_test

import (
	"strings"
	"testing"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/connectors/slack/slackfake"
)

// A tool approval that must not be approved by one stray tap, offers no
// session rule and needs its details read: Deny is the first button and
// no button is styled as the obvious one to press, there is no "Allow for
// this session", the whole input is shown with the agent's reason and the
// MCP server, and Allow still allows.
func TestToolApprovalWithTheAgentsFlags(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(allowedUser, "flagged")
	q := e.waitButtons("D1", "Tool approval")
	var texts []string
	for _, b := range slackfake.Buttons(q.Blocks) {
		texts = append(texts, b.Text)
	}
	assert.Equal(t, []string{"Deny", "Allow"}, texts)
	assert.NotContains(t, string(q.Blocks), `"primary"`, "nothing invites a quick approval")
	shown := slackfake.Texts(q.Blocks)
	assert.Contains(t, shown, "MCP server: github (user)")
	assert.Contains(t, shown, "Why it asks: Posts to a public repo")
	assert.Contains(t, shown, "Review the whole request before you answer.")
	assert.Contains(t, shown, `"title": "Leak &lt;keys&gt;"`, "the whole input, indented")
	assert.Contains(t, shown, `"repo": "acme/site"`)
	assert.Less(t, strings.Index(shown, "Why it asks"), strings.Index(shown, `"title"`), "the reason comes before the details")
	e.tap(approverUser, q, "Allow")
	r := e.agent.WaitResponses(t, 1)
	assert.True(t, r[0].Allow)
	assert.Equal(t, agent.ClassUserTemporary, r[0].Classification)
	assert.Empty(t, r[0].UpdatedPermissions)
}
