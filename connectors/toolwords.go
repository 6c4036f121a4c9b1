package connectors

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/leashd/leashd/interactions"
)

// toolWord says in plain words what a use of a tool is: what the agent
// wants to do (a tool approval's heading), and what it did, once and n
// times (a turn's summary; %d is the count). Tools of one deed share their
// words, so a summary counts Edit and MultiEdit together.
type toolWord struct{ wants, didOne, didMany string }

var (
	runs    = toolWord{"run a command", "ran 1 command", "ran %d commands"}
	edits   = toolWord{"edit a file", "made 1 edit", "made %d edits"}
	reads   = toolWord{"read a file", "read 1 file", "read %d files"}
	greps   = toolWord{"search in files", "searched the files", "searched the files %d times"}
	fetches = toolWord{"fetch a web page", "fetched 1 web page", "fetched %d web pages"}
	helpers = toolWord{"start a helper agent", "started 1 helper agent", "started %d helper agents"}
	stops   = toolWord{"stop a running command", "stopped 1 command", "stopped %d commands"}
)

// toolWords are the words of the agents' tools, by tool name (the Claude
// Code names, which the ACP driver also uses) or ACP tool kind. A tool not
// listed (an MCP server's) keeps its name, which its operator gave it.
var toolWords = map[string]toolWord{
	"Bash": runs, "execute": runs,
	"BashOutput": {"read a command's output", "read a command's output", "read commands' output %d times"},
	"KillShell":  stops, "KillBash": stops,
	"Write": {"write a file", "wrote 1 file", "wrote %d files"},
	"Edit":  edits, "MultiEdit": edits, "edit": edits,
	"NotebookEdit": {"edit a notebook", "made 1 edit", "made %d edits"},
	"Read":         reads, "read": reads,
	"delete": {"delete a file", "deleted 1 file", "deleted %d files"},
	"move":   {"move a file", "moved 1 file", "moved %d files"},
	"Glob":   {"find files", "searched the files", "searched the files %d times"},
	"Grep":   greps, "search": greps,
	"LS":       {"list a folder", "searched the files", "searched the files %d times"},
	"WebFetch": fetches, "fetch": fetches,
	"WebSearch": {"search the web", "searched the web", "searched the web %d times"},
	"Task":      helpers, "Agent": helpers,
	"TodoWrite":       {"update its to-do list", "updated its to-do list", "updated its to-do list %d times"},
	"AskUserQuestion": {"ask you", "asked you", "asked you %d times"},
	"ExitPlanMode":    {"stop planning and start working", "proposed a plan", "proposed %d plans"},
}

// ToolsDone lists what a turn's tools did, in order of first use, merging
// tools of one deed: "ran 2 commands", "made 3 edits". count is how often
// each of names was used.
func ToolsDone(names []string, count map[string]int) []string {
	type deed struct{ one, many string }
	var order []deed
	seen := map[deed]int{}
	for _, name := range names {
		d := deed{name, name + "×%d"}
		if w, ok := toolWords[name]; ok {
			d = deed{w.didOne, w.didMany}
		}
		if _, ok := seen[d]; !ok {
			order = append(order, d)
		}
		seen[d] += count[name]
	}
	out := make([]string, 0, len(order))
	for _, d := range order {
		if n := seen[d]; n > 1 {
			out = append(out, fmt.Sprintf(d.many, n))
		} else {
			out = append(out, d.one)
		}
	}
	return out
}

// ToolAction is the heading of a tool approval in plain words: "The agent
// wants to run a command", "… to write a file", "… to use the tool x of
// the MCP server y", "… to use the tool X".
func ToolAction(tool string) string {
	if w, ok := toolWords[tool]; ok {
		return "The agent wants to " + w.wants
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
// diff of a file change when there is one (Interaction.Diff), the whole
// command when the summary holds only a cut copy of it, else the summary.
func ToolCode(it interactions.Interaction) string {
	if strings.TrimSpace(it.ToolSummary) == "" || (it.RequiresDetails && len(it.ToolInput) > 0) {
		return ToolDetails(it)
	}
	if it.Diff != "" {
		return it.Diff
	}
	if cmd := ToolCommand(it); cmd != "" && !strings.Contains(it.ToolSummary, cmd) {
		return cmd
	}
	return it.ToolSummary
}
