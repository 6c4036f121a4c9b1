// Package policy decides tool permission requests before anyone is asked:
// an ordered list of rules, read from a YAML file (LEASHD_POLICY_FILE),
// each matching a tool (and optionally its Bash command, a file path in its
// input, the chat) and deciding allow, deny (with a reason), ask, or
// quorum: N. The first matching rule wins; when none matches the request is
// asked as usual.
//
// The file:
//
//	rules:
//	  - name: no pushing                # optional, shown with the rule
//	    tool: Bash                      # a tool name or glob (required)
//	    command: '\bgit\s+push\b'       # a regular expression (RE2), Bash command
//	    decision: deny
//	    reason: Pushing is done by CI.  # required with deny: the agent reads it
//	  - tool: Bash
//	    command: '^npm (test|run lint)$'
//	    decision: allow
//	  - tool: Write
//	    path: '**/deploy/**'            # a glob over the file path in the input
//	    decision: {quorum: 2}           # two approvers
//	  - tool: '*'
//	    chat: 'telegram:*'              # a glob over the chat ID
//	    decision: ask
//
// Compound shell commands: an allow rule never matches a command line
// that could run more than one command (one with ; & | ` $ < > or a line
// break), so "^npm test" does not allow "npm test && curl … | sh"; such a
// command goes on to the next rules and, if none matches, is asked; nor
// one that Split does not fully understand (a quote left open, an option
// a wrapper does not have). Every other rule (deny, ask, quorum) matches
// the whole command line or any command in it as Split unwraps it:
// split at those operators, leading VAR=value assignments, shell keywords
// and wrappers (sudo, doas, env, command, builtin, exec, nice, nohup, time,
// timeout, stdbuf, xargs) with their options taken off, the command
// word's directory and backslashes dropped, git's global options skipped;
// so "^git push" also denies "make && sudo -u root /usr/bin/git -C . push".
// This is a safety net, not a sandbox: "bash -c 'git push'" is one
// command starting with bash — write deny patterns unanchored
// ('\bgit\s+push\b') to catch those too.
//
// Paths: a rule's path glob is matched against each file path in the
// input (file_path, path, notebook_path), cleaned (a/../b is b), both as
// given (absolute) and relative to the working directory when it is
// inside it; an allow rule must match every path of the request, any
// other rule any one of them. Symbolic links are not resolved.
package policy

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Decision is what a rule decides.
type Decision string

// Decisions.
const (
	Allow  Decision = "allow"  // runs without asking anyone
	Deny   Decision = "deny"   // refused; the agent reads the rule's reason
	Ask    Decision = "ask"    // put to a person
	Quorum Decision = "quorum" // put to people; Rule.Quorum approvals needed
)

// Rule is one rule of a policy, as read from the file.
type Rule struct {
	Index    int    // 1-based position in the file
	Line     int    // line of the rule in the file
	Name     string // optional
	Tool     string // glob over the tool name
	Command  string // regular expression over the Bash command ("" = any)
	Path     string // glob over a file path in the input ("" = any)
	Chat     string // glob over the chat ID ("" = any)
	Decision Decision
	Quorum   int    // approvals needed, with Decision Quorum
	Reason   string // the agent reads it on a deny

	tool, path, chat *regexp.Regexp
	command          *regexp.Regexp
}

// Ref names the rule for people: `rule 2 (line 7)`, or with a name
// `rule 2 "no pushing" (line 7)`.
func (r *Rule) Ref() string {
	if r.Name != "" {
		return fmt.Sprintf("rule %d %q (line %d)", r.Index, r.Name, r.Line)
	}
	return fmt.Sprintf("rule %d (line %d)", r.Index, r.Line)
}

// Policy is an ordered list of rules. A nil *Policy has no rules.
type Policy struct {
	// Source names where it was read from (the file), for messages.
	Source string
	rules  []Rule
}

// Rules returns the rules in order.
func (p *Policy) Rules() []Rule {
	if p == nil {
		return nil
	}
	return append([]Rule(nil), p.rules...)
}

// Request is a permission request as the policy sees it.
type Request struct {
	Tool    string
	Command string   // the Bash command; "" when the input has none
	Paths   []string // file paths in the input
	Chat    string
	WorkDir string // the chat's working directory, for relative path globs
	// AgentAsks is set when the agent itself says a person must decide
	// (PermissionRequest.MustAsk: the agent's own ask rule or its word that
	// a person must see it): an allow rule then asks instead.
	AgentAsks bool
}

// RequestFor builds the Request for a tool call: the command is the
// input's "command" string, the paths its "file_path", "path" and
// "notebook_path" strings.
func RequestFor(tool string, input json.RawMessage, chat, workDir string) Request {
	r := Request{Tool: tool, Chat: chat, WorkDir: workDir}
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return r
	}
	if c, ok := in["command"].(string); ok {
		r.Command = c
	}
	for _, k := range []string{"file_path", "path", "notebook_path"} {
		if p, ok := in[k].(string); ok && p != "" {
			r.Paths = append(r.Paths, p)
		}
	}
	return r
}

// Result is a policy's decision on a request.
type Result struct {
	Decision Decision
	Quorum   int    // approvals needed (Decision Quorum)
	Reason   string // the deny reason
	// Rule is the rule that decided; nil when none matched (Decision Ask).
	Rule *Rule
	// Overridden is set when Rule allowed but the agent said a person must
	// decide (Request.AgentAsks): Decision is then Ask.
	Overridden bool
}

// Evaluate returns the decision of the first rule matching r; Ask with no
// rule when none matches.
func (p *Policy) Evaluate(r Request) Result {
	if p == nil {
		return Result{Decision: Ask}
	}
	cmds := &commandLine{line: r.Command}
	for i := range p.rules {
		rule := &p.rules[i]
		if !rule.matches(r, cmds) {
			continue
		}
		res := Result{Decision: rule.Decision, Quorum: rule.Quorum, Reason: rule.Reason, Rule: rule}
		if res.Decision == Allow && r.AgentAsks {
			res.Decision, res.Overridden = Ask, true
		}
		return res
	}
	return Result{Decision: Ask}
}

// commandLine splits a command line once, when a rule first needs it.
type commandLine struct {
	line        string
	split, sure bool
	cmds        []string
}

func (c *commandLine) commands() []string {
	if !c.split {
		c.cmds, c.sure = Split(c.line)
		c.split = true
	}
	return c.cmds
}

// understood reports whether Split understood every part of the line.
func (c *commandLine) understood() bool {
	c.commands()
	return c.sure
}

func (rule *Rule) matches(r Request, cmds *commandLine) bool {
	if !rule.tool.MatchString(r.Tool) {
		return false
	}
	if rule.chat != nil && !rule.chat.MatchString(r.Chat) {
		return false
	}
	permissive := rule.Decision == Allow
	if rule.command != nil {
		if r.Command == "" {
			return false
		}
		if permissive {
			// Only a single simple command, understood, matched whole.
			if HasShellOperators(r.Command) || !rule.command.MatchString(strings.TrimSpace(r.Command)) || !cmds.understood() {
				return false
			}
		} else if !rule.matchesAnyCommand(cmds) {
			return false
		}
	}
	if rule.path != nil {
		if len(r.Paths) == 0 {
			return false
		}
		hits := 0
		for _, p := range r.Paths {
			if rule.matchesPath(p, r.WorkDir) {
				hits++
			}
		}
		if permissive && hits < len(r.Paths) || hits == 0 {
			return false
		}
	}
	return true
}

func (rule *Rule) matchesAnyCommand(cmds *commandLine) bool {
	if rule.command.MatchString(strings.TrimSpace(cmds.line)) {
		return true
	}
	for _, c := range cmds.commands() {
		if rule.command.MatchString(c) {
			return true
		}
	}
	return false
}

func (rule *Rule) matchesPath(p, workDir string) bool {
	for _, form := range pathForms(p, workDir) {
		if rule.path.MatchString(form) {
			return true
		}
	}
	return false
}

// pathForms are the forms a path glob is matched against: the cleaned path
// (absolute when the working directory is known), and the path relative to
// the working directory when it lies inside it.
func pathForms(p, workDir string) []string {
	wd := ""
	if workDir != "" {
		wd = path.Clean(workDir)
	}
	if !path.IsAbs(p) && path.IsAbs(wd) {
		p = path.Join(wd, p)
	}
	p = path.Clean(p)
	forms := []string{p}
	if path.IsAbs(wd) && path.IsAbs(p) {
		if wd == "/" {
			forms = append(forms, strings.TrimPrefix(p, "/"))
		} else if rel, ok := strings.CutPrefix(p, wd+"/"); ok {
			forms = append(forms, rel)
		}
	}
	return forms
}
