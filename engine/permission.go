package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/leashd/leashd/engine/policy"
	"github.com/leashd/leashd/interactions"
)

// Tools the engine treats specially.
const (
	ToolAskUserQuestion = "AskUserQuestion"
	ToolExitPlanMode    = "ExitPlanMode"
)

// editTools are allowed without asking in acceptEdits mode.
var editTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// maxPlanBytes bounds a plan read from a plan file; a longer plan is shown
// cut, with a note saying so (the agent keeps the whole file).
const maxPlanBytes = 256 << 10

// Permission implements TurnHandler: AskUserQuestion becomes questions,
// ExitPlanMode a plan review, every other tool a tool approval. While a
// person decides, the turn's time limit is paused.
func (t *turn) Permission(ctx context.Context, req PermissionRequest) PermissionResponse {
	t.mu.Lock()
	stopping := t.cleanPlan != nil
	t.mu.Unlock()
	if stopping {
		return PermissionResponse{Message: "The plan was approved; it continues in a fresh session.", Interrupt: true}
	}
	t.rememberSessionID() // before anything is put to a person
	t.budget.pause()
	defer t.budget.resume()
	switch req.ToolName {
	case ToolAskUserQuestion:
		return t.askQuestions(ctx, req)
	case ToolExitPlanMode:
		return t.reviewPlan(ctx, req)
	default:
		return t.approveTool(ctx, req)
	}
}

func allow(req PermissionRequest, updates ...PermissionUpdate) PermissionResponse {
	return PermissionResponse{Allow: true, UpdatedInput: req.Input, UpdatedPermissions: updates}
}

func deny(msg string) PermissionResponse { return PermissionResponse{Message: msg} }

// RejectedBecause starts what the agent reads when a person rejects a
// request outright and says why; the reason follows. Without a reason it
// reads interactions.RejectedText.
const RejectedBecause = "The user rejected this request: "

// notAnswered is what the agent reads when nobody answered.
func notAnswered(res interactions.Resolution) PermissionResponse {
	switch res.Status {
	case interactions.StatusRejected:
		if res.Decision == interactions.DecisionReject && res.Text != "" && res.Text != interactions.RejectedText {
			return deny(RejectedBecause + res.Text) // a rejection with the person's reason
		}
		return deny(orDefault(res.Text, interactions.RejectedText))
	case interactions.StatusInterrupted:
		// res.Text is the notice for people; the agent is told what happens.
		return PermissionResponse{Message: "leashd is restarting; if the user answers after the restart, the answer arrives as a new prompt.", Interrupt: true}
	default:
		return deny(orDefault(res.Text, "No answer was given."))
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

type askInput struct {
	Questions []interactions.Question `json:"questions"`
}

func (t *turn) askQuestions(ctx context.Context, req PermissionRequest) PermissionResponse {
	var in askInput
	if err := json.Unmarshal(req.Input, &in); err != nil || len(in.Questions) == 0 {
		why := "it has no questions"
		if err != nil {
			why = err.Error()
		}
		t.e.log.Warn("unreadable AskUserQuestion input", "chat", t.c.id, "err", why)
		t.e.say(ctx, t.c.id, "The agent asked a question leashd could not read ("+why+"); it was told so.")
		return deny("leashd could not read the AskUserQuestion input (" + why + "); expected {\"questions\":[{\"question\",\"header\",\"options\":[{\"label\",\"description\"}],\"multiSelect\"}]}.")
	}
	res, err := t.e.coord.Ask(ctx, t.c.id, in.Questions)
	if err != nil {
		return deny("The question could not be asked: " + err.Error())
	}
	if !res.Complete() {
		return notAnswered(res.Last)
	}
	updated, err := withAnswers(req.Input, res.Answers)
	if err != nil {
		return deny("leashd could not attach the answers: " + err.Error())
	}
	return PermissionResponse{Allow: true, UpdatedInput: updated}
}

// withAnswers returns the tool input with "answers" set, every other field
// kept as the agent sent it.
func withAnswers(input json.RawMessage, answers map[string]string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(input, &m); err != nil {
		return nil, err
	}
	a, err := json.Marshal(answers)
	if err != nil {
		return nil, err
	}
	m["answers"] = a
	return json.Marshal(m)
}

type planInput struct {
	Plan         string `json:"plan"`
	PlanFilePath string `json:"planFilePath"`
}

func (t *turn) reviewPlan(ctx context.Context, req PermissionRequest) PermissionResponse {
	var in planInput
	if err := json.Unmarshal(req.Input, &in); err != nil {
		t.e.say(ctx, t.c.id, "The agent sent a plan leashd could not read ("+err.Error()+"); it was told so.")
		return deny("leashd could not read the ExitPlanMode input: " + err.Error())
	}
	plan, fromFile := in.Plan, false
	if strings.TrimSpace(plan) == "" && in.PlanFilePath != "" {
		p, err := readPlanFile(in.PlanFilePath, t.c.workDir)
		if err != nil {
			t.e.say(ctx, t.c.id, "The agent's plan file could not be read ("+err.Error()+"); it was told to send the plan as text.")
			return deny("leashd could not read the plan file (" + err.Error() + "); call ExitPlanMode again with the whole plan in \"plan\".")
		}
		plan, fromFile = p, true // already cut to maxPlanBytes
	}
	if strings.TrimSpace(plan) == "" {
		return deny("The plan is empty; write the plan before asking for review.")
	}
	shown := plan
	if !fromFile && len(shown) > maxPlanBytes { // cut like a plan file: megabytes would be hundreds of chat messages
		part, cut := capText(shown, maxPlanBytes)
		shown = part + "\n\n" + TruncatedNote(cut) + " — the plan is longer than leashd shows for review"
	}
	_, res, err := t.e.coord.ReviewPlan(ctx, t.c.id, shown)
	if err != nil {
		return deny("The plan could not be shown: " + err.Error())
	}
	if res.Status != interactions.StatusAnswered {
		if res.Decision == interactions.DecisionAdjust {
			return deny(res.Text) // the feedback, as the person wrote it
		}
		return notAnswered(res)
	}
	switch res.Decision {
	case interactions.DecisionCleanEdit:
		t.mu.Lock()
		t.cleanPlan = &plan
		t.mu.Unlock()
		go func() { // stop this turn: the plan continues in a fresh session
			if err := t.sess.Interrupt(context.WithoutCancel(ctx)); err != nil {
				t.e.log.Warn("interrupting after clean plan approval", "chat", t.c.id, "err", err)
			}
		}()
		return allow(req)
	case interactions.DecisionEdit:
		t.setMode(ModeAcceptEdits)
		t.e.say(ctx, t.c.id, "Plan approved. Mode: acceptEdits — edits are applied without asking.")
		return allow(req, PermissionUpdate{Type: "setMode", Mode: ModeAcceptEdits, Destination: "session"})
	default:
		t.setMode(ModeDefault)
		t.e.say(ctx, t.c.id, "Plan approved. Mode: default — each edit asks for approval.")
		return allow(req, PermissionUpdate{Type: "setMode", Mode: ModeDefault, Destination: "session"})
	}
}

func (t *turn) setMode(m Mode) {
	t.e.mu.Lock()
	t.c.mode = m
	t.e.mu.Unlock()
	t.e.save(t.c)
}

func readPlanFile(path, workDir string) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(workDir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPlanBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxPlanBytes {
		cut := b[:maxPlanBytes]
		for len(cut) > 0 && !utf8.Valid(cut) {
			cut = cut[:len(cut)-1]
		}
		return string(cut) + fmt.Sprintf("\n\n… (plan cut at %d KiB for display; the full plan is in %s)", maxPlanBytes>>10, path), nil
	}
	return string(b), nil
}

func (t *turn) approveTool(ctx context.Context, req PermissionRequest) PermissionResponse {
	pol := t.policyDecision(req)
	if pol.Rule != nil && (pol.Decision == policy.Allow || pol.Decision == policy.Deny) {
		return t.policyDecided(ctx, req, pol)
	}
	// An ask or quorum rule, or the agent's own word that a person must
	// decide, puts the call to people even where the mode or a session
	// rule would allow it.
	mustAsk := pol.Rule != nil || req.agentAsks()
	if pol.Overridden {
		t.e.log.Info("policy allow overridden: the agent says a person must decide", "chat", t.c.id, "tool", req.ToolName, "rule", pol.Rule.Ref())
	}
	t.e.mu.Lock()
	mode := t.c.mode
	t.e.mu.Unlock()
	if !mustAsk && ((mode == ModeAcceptEdits && editTools[req.ToolName]) || mode == ModeBypass) {
		return allow(req)
	}
	if !mustAsk && t.e.engineRules() && t.rules.allows(req.ToolName, req.Input) {
		return allow(req)
	}
	if pol.Quorum <= 1 { // one person's late answer is not a quorum
		if res, ok := t.allowedAgain(ctx, req); ok {
			return res
		}
	}
	var res interactions.Resolution
	var err error
	if pol.Quorum > 1 {
		_, res, err = t.e.coord.Request(ctx, interactions.Interaction{ChatID: t.c.id, Kind: interactions.KindToolApproval,
			ToolName: req.ToolName, ToolInput: req.Input, ToolSummary: ToolSummary(req.ToolName, req.Input), Quorum: pol.Quorum})
	} else {
		_, res, err = t.e.coord.ApproveTool(ctx, t.c.id, req.ToolName, req.Input, ToolSummary(req.ToolName, req.Input))
	}
	if err != nil {
		return deny("The approval could not be asked: " + err.Error())
	}
	if res.Status != interactions.StatusAnswered {
		return notAnswered(res)
	}
	if res.Decision == interactions.DecisionAllowSession {
		if pol.Rule != nil {
			// A session rule would let the agent stop asking about such
			// calls, and the policy rule would no longer be consulted.
			t.e.say(ctx, t.c.id, "Allowed this call only: policy "+pol.Rule.Ref()+" puts each such call to people.")
			return allow(req)
		}
		rules := sessionRules(req)
		t.rules.add(rules)
		return allow(req, PermissionUpdate{Type: "addRules", Rules: rules, Behavior: "allow", Destination: "session"})
	}
	return allow(req)
}

// sessionRules are the rules "allow for this session" adds: the agent's own
// suggestion when it made one (always with destination session), else the
// exact Bash command, else the whole tool.
func sessionRules(req PermissionRequest) []Rule {
	var sugg []PermissionUpdate
	if len(req.Suggestions) > 0 && json.Unmarshal(req.Suggestions, &sugg) == nil {
		var rules []Rule
		for _, s := range sugg {
			if s.Type == "addRules" && (s.Behavior == "" || s.Behavior == "allow") {
				rules = append(rules, s.Rules...)
			}
		}
		if len(rules) > 0 {
			return rules
		}
	}
	if req.ToolName == "Bash" {
		var in struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(req.Input, &in) == nil && in.Command != "" {
			return []Rule{{ToolName: "Bash", RuleContent: in.Command}}
		}
	}
	return []Rule{{ToolName: req.ToolName}}
}

// engineRules says whether the engine applies "allow for the session"
// rules itself: only for agents that ask for it (SessionRulesByEngine).
// An agent that keeps its own rules (Claude Code) asks only about calls its
// rules do not cover; allowing such a call here because of a looser match
// would approve something nobody has seen.
func (e *Engine) engineRules() bool {
	r, ok := e.agent.(SessionRulesByEngine)
	return ok && r.SessionRulesByEngine()
}

// ruleSet remembers "allow for this session" rules, so an agent that does
// not track them itself (the demo agent) is not asked twice either.
type ruleSet struct {
	mu    sync.Mutex
	rules []Rule
}

func (c *chat) rules() *ruleSet {
	if c.allowed == nil {
		c.allowed = &ruleSet{}
	}
	return c.allowed
}

func (r *ruleSet) add(rules []Rule) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rules = append(r.rules, rules...)
}

func (r *ruleSet) allows(tool string, input json.RawMessage) bool {
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

// ToolSummary renders a tool call for people: the Bash command, the file
// path and an excerpt of the change for Write/Edit, else compact JSON.
func ToolSummary(tool string, input json.RawMessage) string {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	str := func(k string) string {
		s, _ := in[k].(string)
		return s
	}
	switch tool {
	case "Bash":
		s := str("command")
		if d := str("description"); d != "" {
			s += "\n# " + d
		}
		return s
	case "Write":
		content := str("content")
		if content == "" {
			return str("file_path") + "\n(empty file)"
		}
		return str("file_path") + "\n" + excerpt(prefixLines(content, "+ "), 20)
	case "Edit":
		return str("file_path") + "\n" + excerpt(diffLines(str("old_string"), str("new_string")), 20)
	case "MultiEdit":
		var b strings.Builder
		b.WriteString(str("file_path"))
		edits, _ := in["edits"].([]any)
		for _, e := range edits {
			m, _ := e.(map[string]any)
			o, _ := m["old_string"].(string)
			n, _ := m["new_string"].(string)
			if d := diffLines(o, n); d != "" {
				b.WriteString("\n" + d)
			}
		}
		return excerpt(b.String(), 24)
	case "NotebookEdit":
		return str("notebook_path") + "\n" + excerpt(prefixLines(str("new_source"), "+ "), 20)
	case "Read", "Glob", "Grep", "LS":
		for _, k := range []string{"file_path", "path", "pattern"} {
			if s := str(k); s != "" {
				return s
			}
		}
	case "WebFetch":
		return str("url")
	}
	b, _ := json.Marshal(in)
	return excerpt(string(b), 20)
}

// diffLines shows a replacement: the old lines with "- ", the new with
// "+ " (an insertion has no old lines, a deletion no new ones).
func diffLines(old, new string) string {
	var parts []string
	for _, p := range []string{prefixLines(old, "- "), prefixLines(new, "+ ")} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "\n")
}

func prefixLines(s, p string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = p + l
	}
	return strings.Join(lines, "\n")
}

// excerpt keeps at most n lines and 3000 characters, saying what was cut.
func excerpt(s string, n int) string {
	lines := strings.Split(s, "\n")
	cut := false
	if len(lines) > n {
		lines, cut = lines[:n], true
	}
	out := strings.Join(lines, "\n")
	if utf8.RuneCountInString(out) > 3000 {
		out, cut = string([]rune(out)[:3000]), true
	}
	if cut {
		out += "\n… (cut)"
	}
	return out
}
