package approval

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/leashd/leashd/engine/agent"
)

// Rules remembers "allow for this session" rules, so an agent that does
// not track them itself (the demo agent) is not asked twice either.
type Rules struct {
	mu    sync.Mutex
	rules []agent.Rule
}

func (r *Rules) Add(rules []agent.Rule) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rules = append(r.rules, rules...)
}

func (r *Rules) Allows(tool string, input json.RawMessage) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rule := range r.rules {
		if rule.ToolName != tool {
			continue
		}
		if rule.RuleContent == "" {
			return true
		}
		if tool != "Bash" {
			continue // content rules of other tools are the agent's to match
		}
		var in struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(input, &in) != nil {
			continue
		}
		if in.Command == rule.RuleContent {
			return true // exactly the command a person allowed
		}
		if prefix, ok := strings.CutSuffix(rule.RuleContent, ":*"); ok && !hasShellOperators(in.Command) {
			if in.Command == prefix || strings.HasPrefix(in.Command, prefix+" ") {
				return true
			}
		}
	}
	return false
}

// shellOperators are the characters that let one Bash command line run
// more than the command it starts with: command separators and lists
// (; & | newline), substitutions ($( ), backquotes, and any $ expansion),
// and redirections (< >, also process substitution).
const shellOperators = ";&|`$<>\n\r"

// hasShellOperators reports whether a command line could do more than
// run its first command with arguments: a prefix rule such as
// "npm test:*" must not cover "npm test && curl … | sh", which no person
// has seen.
func hasShellOperators(cmd string) bool {
	return strings.ContainsAny(cmd, shellOperators)
}
