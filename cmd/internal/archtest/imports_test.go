package archtest

import (
	"slices"
	"strings"
	"testing"
)

// importRule is one dependency rule: a package for which applies holds may
// not import a module package for which forbids holds.
type importRule struct {
	name    string
	applies func(p string) bool
	forbids func(p, imp string) bool
}

// importRules are the rules on the imports of non-test files (doc.go).
var importRules = []importRule{{
	name:    "interactions imports nothing of the module",
	applies: func(p string) bool { return p == "interactions" || under(p, "interactions/internal") },
	forbids: func(_, imp string) bool { return !under(imp, "interactions/internal") },
}, {
	name:    "interactions/client imports only interactions and its wire types",
	applies: func(p string) bool { return p == "interactions/client" || p == "interactions/wire" },
	forbids: func(_, imp string) bool {
		return imp != "interactions" && imp != "interactions/wire" && !under(imp, "interactions/internal")
	},
}, {
	name:    "no connector imports the engine",
	applies: func(p string) bool { return under(p, "connectors") },
	forbids: func(_, imp string) bool { return under(imp, "engine") },
}, {
	name:    "no agent imports a connector",
	applies: func(p string) bool { return under(p, "engine/agent") },
	forbids: func(_, imp string) bool { return under(imp, "connectors") },
}, {
	name:    "an agent driver knows the contract (engine/agent), not the engine",
	applies: func(p string) bool { return under(p, "engine/agent") },
	forbids: func(_, imp string) bool { return imp == "engine" },
}, {
	name:    "no agent imports another agent",
	applies: func(p string) bool { return agentOf(p) != "" },
	forbids: func(p, imp string) bool {
		return agentOf(imp) != "" && agentOf(imp) != agentOf(p) && !under(imp, "engine/agent/sandbox")
	},
}, {
	name:    "config imports nothing of engine or connectors",
	applies: func(p string) bool { return under(p, "config") },
	forbids: func(_, imp string) bool { return under(imp, "engine") || under(imp, "connectors") },
}, {
	name:    "only cmd and the Claude driver import engine/agent/claude",
	applies: func(p string) bool { return !under(p, "cmd") && !under(p, "engine/agent/claude") },
	forbids: func(_, imp string) bool { return under(imp, "engine/agent/claude") },
}, {
	name:    "the engine package imports no agent driver and no chat app",
	applies: func(p string) bool { return p == "engine" || p == "engine/approval" || p == "engine/agent" },
	forbids: func(_, imp string) bool {
		return agentOf(imp) != "" || under(imp, "engine/agent/internal") || strings.HasPrefix(imp, "connectors/")
	},
}}

// agentOf returns the agent a package belongs to ("claude" for
// engine/agent/claude/fakes), or "" for packages that are no agent's,
// engine/agent/internal/... included.
func agentOf(p string) string {
	rest, ok := strings.CutPrefix(p, "engine/agent/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	if name == "internal" {
		return ""
	}
	return name
}

// TestImportRules checks the non-test imports of every package against
// importRules.
func TestImportRules(t *testing.T) {
	for _, p := range packages(t) {
		for _, r := range importRules {
			if !r.applies(p.Path) {
				continue
			}
			for _, imp := range p.Imports {
				if r.forbids(p.Path, imp) {
					t.Errorf("%s imports %s: %s", p.Path, imp, r.name)
				}
			}
		}
	}
}

// layout is the module's package layout, relative to the module path.
var layout = []string{
	"interactions", "interactions/client", "interactions/wire",
	"engine", "engine/approval",
	"engine/agent", "engine/agent/claude", "engine/agent/acp", "engine/agent/demo",
	"engine/agent/internal/agentproc", "engine/internal/inbox",
	"engine/agent/sandbox", "engine/agent/sandbox/bwrap", "engine/agent/sandbox/docker",
	"engine/sqlite", "engine/mcpserver", "engine/metrics", "engine/policy", "engine/worktree",
	"engine/enginetest", "engine/enginetest/fakeapi", "engine/enginetest/gittest",
	"connectors", "connectors/telegram", "connectors/telegram/tgfake",
	"connectors/slack", "connectors/slack/slackfake", "connectors/web", "connectors/terminal",
	"config", "config/testenv", "cmd/leashd", "deploy",
}

// topLevel are the module's top-level folders.
var topLevel = []string{"cmd", "config", "connectors", "deploy", "engine", "interactions"}

// TestLayout checks that the packages the rules are written for exist (a
// rule about a package that moved away would pass without checking
// anything) and that every package sits in one of the top-level folders.
func TestLayout(t *testing.T) {
	have := map[string]bool{}
	for _, p := range packages(t) {
		have[p.Path] = true
		top, _, _ := strings.Cut(p.Path, "/")
		if !slices.Contains(topLevel, top) {
			t.Errorf("package %q is outside the top-level folders %v", p.Path, topLevel)
		}
	}
	for _, want := range layout {
		if !have[want] {
			t.Errorf("package %s is missing from the layout", want)
		}
	}
}
