package connectors

import (
	"encoding/json"
	"strings"

	"github.com/leashd/leashd/interactions"
)

// toolActions say in plain words what a tool call does, by tool name
// (the agents' usual tools) or by ACP tool kind.
var toolActions = map[string]string{
	"Bash": "run a command", "execute": "run a command",
	"Write": "write a file",
	"Edit":  "edit a file", "MultiEdit": "edit a file", "edit": "edit a file",
	"NotebookEdit": "edit a notebook",
	"Read":         "read a file", "read": "read a file",
	"delete": "delete a file", "move": "move a file",
	"Glob": "find files", "Grep": "search in files", "LS": "list a folder", "search": "search in files",
	"WebFetch": "fetch a web page", "fetch": "fetch a web page",
	"WebSearch":    "search the web",
	"Task":         "start a helper agent",
	"TodoWrite":    "update its to-do list",
	"ExitPlanMode": "stop planning and start working",
}

// ToolAction is the heading of a tool approval in plain words: "The agent
// wants to run a command", "… to write a file", "… to use the tool x of
// the MCP server y", "… to use the tool X".
func ToolAction(tool string) string {
	if a, ok := toolActions[tool]; ok {
		return "The agent wants to " + a
	}
	if rest, ok := strings.CutPrefix(tool, "mcp__"); ok {
		if server, name, ok := strings.Cut(rest, "__"); ok && server != "" && name != "" {
			return "The agent wants to use the tool " + name + " of the MCP server " + server
		}
	}
	if strings.TrimSpace(tool) == "" {
		return "The agent wants to use a tool"
	}
	return "The agent wants to use the tool " + tool
}

// RefusalReason is the reason a person gave when refusing an approval
// (interactions.Refusal): the text typed instead of tapping, or "" when
// they only tapped a refusing button.
func RefusalReason(it interactions.Interaction, res interactions.Resolution) string {
	switch res.Status {
	case interactions.StatusAnswered:
		if it.Kind == interactions.KindQuestion && !it.HasOption(res.Answer) {
			return res.Answer // typed instead of tapped
		}
	case interactions.StatusRejected:
		if res.Text != interactions.RejectedText && res.Text != DeniedText {
			return res.Text
		}
	}
	return ""
}

// DeniedText is a denied tool call's text when the person gave no reason.
const DeniedText = "The user denied this tool call."

// ToolCommand is the whole command of a tool call that runs one (its
// input's "command"), or "".
func ToolCommand(it interactions.Interaction) string {
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(it.ToolInput, &in) != nil {
		return ""
	}
	return in.Command
}

// ToolCode is what a tool approval shows as its request: the whole input
// when it must be read in full (RequiresDetails) or has no summary, the
// whole command when the summary holds only a cut copy of it, else the
// summary.
func ToolCode(it interactions.Interaction) string {
	if strings.TrimSpace(it.ToolSummary) == "" || (it.RequiresDetails && len(it.ToolInput) > 0) {
		return ToolDetails(it)
	}
	if cmd := ToolCommand(it); cmd != "" && !strings.Contains(it.ToolSummary, cmd) {
		return cmd
	}
	return it.ToolSummary
}
