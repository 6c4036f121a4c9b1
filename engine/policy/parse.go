package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxFileBytes bounds a policy file.
const MaxFileBytes = 1 << 20

// AgentAnswered are the tools whose requests ask a person for content (an
// answer, a plan review), not for permission: they are never decided by a
// policy, and a rule naming one exactly is an error.
var AgentAnswered = []string{"AskUserQuestion", "ExitPlanMode"}

// Load reads and validates a policy file.
func Load(file string) (*Policy, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("policy file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("policy file %s: %w", file, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("policy file %s is larger than %d bytes", file, MaxFileBytes)
	}
	return Parse(file, data)
}

// Parse reads and validates a policy. source names it in errors
// ("file:line: …"). Every problem found is reported, each naming its line.
func Parse(source string, data []byte) (*Policy, error) {
	p := &Policy{Source: source}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: the policy is empty; expected a list under rules:, e.g.\nrules:\n  - tool: Bash\n    command: '^git push'\n    decision: deny\n    reason: Pushing is done by CI", source)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(source, data, err)
	}
	at := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", source, n.Line, fmt.Sprintf(format, args...))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("%s: expected one YAML document with a list of rules", source)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, at(root, "expected a mapping with the key rules: (a list of rules)")
	}
	var rules *yaml.Node
	var errs []error
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch {
		case k.Value != "rules":
			errs = append(errs, at(k, "unknown key %q; accepted: rules", k.Value))
		case rules != nil:
			errs = append(errs, at(k, "rules: is given twice"))
		default:
			rules = v
		}
	}
	if rules == nil && len(errs) == 0 {
		return nil, at(root, "no rules: key; expected a list of rules under rules:")
	}
	if rules != nil {
		switch {
		case rules.Kind != yaml.SequenceNode && !(rules.Kind == yaml.ScalarNode && rules.Tag == "!!null"):
			errs = append(errs, at(rules, "rules: must be a list of rules (- tool: …)"))
		default:
			for i, n := range rules.Content {
				r, rerrs := parseRule(n, i+1, at)
				errs = append(errs, rerrs...)
				if len(rerrs) == 0 {
					p.rules = append(p.rules, r)
				}
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

var ruleKeys = []string{"name", "tool", "command", "path", "chat", "decision", "reason"}

func parseRule(n *yaml.Node, index int, at func(*yaml.Node, string, ...any) error) (Rule, []error) {
	r := Rule{Index: index, Line: n.Line}
	var errs []error
	bad := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, at(n, "rule %d: %s", index, fmt.Sprintf(format, args...)))
	}
	if n.Kind != yaml.MappingNode {
		bad(n, "expected a mapping with tool: and decision: (and optionally name, command, path, chat, reason)")
		return r, errs
	}
	seen := map[string]bool{}
	var decision *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(ruleKeys, k.Value) {
			bad(k, "unknown key %q; accepted: %s", k.Value, strings.Join(ruleKeys, ", "))
			continue
		}
		if seen[k.Value] {
			bad(k, "%s is given twice", k.Value)
			continue
		}
		seen[k.Value] = true
		if k.Value == "decision" {
			decision = v
			continue
		}
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
			bad(v, "%s must be text (quote it: %s: '…')", k.Value, k.Value)
			continue
		}
		var err error
		switch k.Value {
		case "name":
			r.Name = v.Value
		case "reason":
			r.Reason = strings.TrimSpace(v.Value)
		case "tool":
			r.Tool = v.Value
			if r.tool, err = compileGlob(v.Value); err != nil {
				bad(v, "tool: %v", err)
			} else if slices.Contains(AgentAnswered, v.Value) {
				bad(v, "tool: %s asks a person for an answer, not for permission; policies do not decide it", v.Value)
			}
		case "path":
			r.Path = v.Value
			if r.path, err = compileGlob(v.Value); err != nil {
				bad(v, "path: %v", err)
			}
		case "chat":
			r.Chat = v.Value
			if r.chat, err = compileGlob(v.Value); err != nil {
				bad(v, "chat: %v", err)
			}
		case "command":
			r.Command = v.Value
			if v.Value == "" {
				bad(v, "command: is empty; give a regular expression such as '^git push' or leave the key out")
			} else if r.command, err = regexp.Compile(v.Value); err != nil {
				bad(v, "command: not a regular expression (RE2 syntax): %v", err)
			}
		}
	}
	if !seen["tool"] {
		bad(n, "tool: is missing; give a tool name such as Bash, or a glob such as 'mcp__*' or '*'")
	}
	if decision == nil {
		bad(n, "decision: is missing; accepted: allow, deny, ask, or {quorum: N}")
	} else {
		parseDecision(&r, decision, bad)
	}
	if r.Decision == Deny && r.Reason == "" && decision != nil {
		bad(decision, "decision: deny needs reason: (what the agent reads, e.g. reason: Pushing is done by CI.)")
	}
	return r, errs
}

func parseDecision(r *Rule, v *yaml.Node, bad func(*yaml.Node, string, ...any)) {
	const accepted = "accepted: allow, deny, ask, or {quorum: N} with N a whole number of 1 or more"
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
		switch d := Decision(v.Value); d {
		case Allow, Deny, Ask:
			r.Decision = d
		case Quorum:
			bad(v, "decision: quorum needs a number of approvals: decision: {quorum: 2}")
		default:
			bad(v, "decision: %q is not a decision; %s", v.Value, accepted)
		}
	case v.Kind == yaml.MappingNode && len(v.Content) == 2 && v.Content[0].Value == "quorum":
		q := v.Content[1]
		n, err := strconv.Atoi(q.Value)
		if q.Kind != yaml.ScalarNode || q.Tag != "!!int" || err != nil || n < 1 {
			bad(q, "decision: quorum %q is not a number of approvals; %s", q.Value, accepted)
			return
		}
		r.Decision, r.Quorum = Quorum, n
	default:
		bad(v, "decision: not understood; %s", accepted)
	}
}
