package connectors_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// A tool approval says in plain words what the agent wants, never "run
// Write".
func TestToolActionInPlainWords(t *testing.T) {
	for tool, want := range map[string]string{
		"Bash":                      "The agent wants to run a command",
		"Write":                     "The agent wants to write a file",
		"Edit":                      "The agent wants to edit a file",
		"execute":                   "The agent wants to run a command",
		"WebFetch":                  "The agent wants to fetch a web page",
		"mcp__github__create_issue": "The agent wants to use the tool create_issue of the MCP server github",
		"Shell":                     "The agent wants to use the tool Shell",
		"":                          "The agent wants to use a tool",
	} {
		assert.Equal(t, want, connectors.ToolAction(tool), tool)
	}
}

// The plan decision agents offer first is marked recommended, and
// every decision says what it does.
func TestPlanDecisionsSayWhatTheyDo(t *testing.T) {
	assert.Equal(t, "Approve, fresh session (recommended)", connectors.DecisionLabel(interactions.RecommendedPlanOption))
	for _, o := range interactions.PlanOptions {
		assert.NotEmpty(t, o.Description, o.Label)
	}
}

// A command the summary holds only a cut copy of is shown whole.
func TestToolCodeIsTheWholeCommand(t *testing.T) {
	it := interactions.Interaction{Kind: interactions.KindToolApproval, ToolName: "Bash",
		ToolInput: []byte(`{"command":"echo one && echo two"}`), ToolSummary: "echo one … (cut)"}
	assert.Equal(t, "echo one && echo two", connectors.ToolCode(it))
	it.ToolSummary = "echo one && echo two\n# Print"
	assert.Equal(t, it.ToolSummary, connectors.ToolCode(it), "a whole summary keeps its description")
}
