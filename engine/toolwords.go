package engine

import "fmt"

// toolDeed is what a use of a tool did, as a person says it: one and
// many ("ran 1 command", "ran 3 commands"); %d is the count.
type toolDeed struct{ one, many string }

// toolDeeds name the tools agents report (Bash, Read, Edit…; the
// drivers give every agent's tools these names) in a turn's summary: the people in
// the chat know what the agent did, not its tools' names. Tools of one
// deed are counted together (Edit and MultiEdit are both edits). A tool
// not listed (an MCP server's, mcp__github__create_issue) keeps its name,
// which its operator gave it.
var toolDeeds = map[string]toolDeed{
	"Bash":            {"ran 1 command", "ran %d commands"},
	"BashOutput":      {"read a command's output", "read commands' output %d times"},
	"KillShell":       {"stopped 1 command", "stopped %d commands"},
	"KillBash":        {"stopped 1 command", "stopped %d commands"},
	"Read":            {"read 1 file", "read %d files"},
	"Edit":            {"made 1 edit", "made %d edits"},
	"MultiEdit":       {"made 1 edit", "made %d edits"},
	"NotebookEdit":    {"made 1 edit", "made %d edits"},
	"Write":           {"wrote 1 file", "wrote %d files"},
	"Glob":            {"searched the files", "searched the files %d times"},
	"Grep":            {"searched the files", "searched the files %d times"},
	"LS":              {"searched the files", "searched the files %d times"},
	"WebFetch":        {"fetched 1 web page", "fetched %d web pages"},
	"WebSearch":       {"searched the web", "searched the web %d times"},
	"Task":            {"started 1 helper agent", "started %d helper agents"},
	"Agent":           {"started 1 helper agent", "started %d helper agents"},
	"TodoWrite":       {"updated its to-do list", "updated its to-do list %d times"},
	"AskUserQuestion": {"asked you", "asked you %d times"},
	"ExitPlanMode":    {"proposed a plan", "proposed %d plans"},
}

// plainTools lists what the turn's tools did, in order of first use,
// merging tools of one deed: "ran 2 commands", "made 3 edits".
func plainTools(names []string, count map[string]int) []string {
	var order []toolDeed
	seen := map[toolDeed]int{}
	var out []string
	for _, name := range names {
		d, ok := toolDeeds[name]
		if !ok {
			d = toolDeed{name, name + "×%d"}
		}
		if _, ok := seen[d]; !ok {
			order = append(order, d)
		}
		seen[d] += count[name]
	}
	for _, d := range order {
		if n := seen[d]; n > 1 {
			out = append(out, fmt.Sprintf(d.many, n))
		} else {
			out = append(out, d.one)
		}
	}
	return out
}
