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

	"github.com/leashd/leashd/engine/agent"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine/policy"
	"github.com/leashd/leashd/interactions"
)

// editTools are allowed without asking in acceptEdits mode.
var editTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// maxPlanBytes bounds a plan read from a plan file; a longer plan is shown
// cut, with a note saying so (the agent keeps the whole file).
const maxPlanBytes = 256 << 10

// Permission implements TurnHandler: AskUserQuestion becomes questions,
// ExitPlanMode a plan review, every other tool a tool approval. While a
// person decides, the turn's time limit is paused.
func (t *turn) Permission(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	t.mu.Lock()
	stopping := t.cleanPlan != nil
	t.mu.Unlock()
	if stopping {
		return agent.PermissionResponse{Message: "The plan was approved; it continues in a fresh session.", Interrupt: true}
	}
	t.rememberSessionID() // before anything is put to a person
	t.budget.pause()
	defer t.budget.resume()
	if len(req.Options) > 0 && req.ToolName != agent.ToolExitPlanMode {
		// The agent's own options (ACP). An approval policy decides first,
		// as for every backend: its answer is the agent's matching option.
		if pol := t.policyDecision(req); pol.Rule != nil && (pol.Decision == policy.Allow || pol.Decision == policy.Deny) {
			r := t.policyDecided(ctx, req, pol)
			r.OptionID = pickOption(req.Options, r.Allow)
			return r
		}
		return t.chooseOption(ctx, req)
	}
	switch req.ToolName {
	case agent.ToolAskUserQuestion:
		return t.askQuestions(ctx, req)
	case agent.ToolExitPlanMode:
		return t.reviewPlan(ctx, req)
	default:
		return t.approveTool(ctx, req)
	}
}

func allow(req agent.PermissionRequest, updates ...agent.PermissionUpdate) agent.PermissionResponse {
	return agent.PermissionResponse{Allow: true, UpdatedInput: req.Input, UpdatedPermissions: updates}
}

// allowedBy is an allow a person gave: once (ClassUserTemporary) or by a
// rule they made (ClassUserPermanent).
func allowedBy(class string, req agent.PermissionRequest, updates ...agent.PermissionUpdate) agent.PermissionResponse {
	r := allow(req, updates...)
	r.Classification = class
	return r
}

func deny(msg string) agent.PermissionResponse { return agent.PermissionResponse{Message: msg} }

// rejected is a denial a person gave.
func rejected(msg string) agent.PermissionResponse {
	return agent.PermissionResponse{Message: msg, Classification: agent.ClassUserReject}
}

// notAnswered is what the agent reads when nobody answered.
func notAnswered(res interactions.Resolution) agent.PermissionResponse {
	switch res.Status {
	case interactions.StatusRejected:
		if res.Decision == interactions.DecisionReject && res.Text != "" && res.Text != interactions.RejectedText {
			r := rejected(agent.RejectedBecause + res.Text) // a rejection with the person's reason
			r.Reason = res.Text
			return r
		}
		if res.Decision == interactions.DecisionDeny && res.Text != "" && res.Text != "The user denied this tool call." {
			r := rejected(res.Text)
			r.Reason = res.Text
			return r
		}
		return rejected(orDefault(res.Text, interactions.RejectedText))
	case interactions.StatusInterrupted:
		// res.Text is the notice for people; the agent is told what happens.
		return agent.PermissionResponse{Message: "leashd is restarting; if the user answers after the restart, the answer arrives as a new prompt.", Interrupt: true, NoAnswer: true}
	default:
		return agent.PermissionResponse{Message: orDefault(res.Text, "No answer was given."), NoAnswer: true}
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

func (t *turn) askQuestions(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	resp, unreadable := askQuestions(ctx, t.e.coord, t.c.id, req)
	if unreadable != "" {
		t.e.log.Warn("unreadable AskUserQuestion input", "chat", t.c.id, "err", unreadable)
		t.e.say(ctx, t.c.id, "The agent asked a question leashd could not read ("+unreadable+"); it was told so.")
	}
	return resp
}

// Flows asks people: *interactions.Coordinator in process, or
// interactions/client over a running leashd's HTTP API.
type Flows interface {
	Ask(ctx context.Context, chatID string, qs []interactions.Question) (interactions.AskResult, error)
	ReviewPlan(ctx context.Context, chatID, plan string) (interactions.Interaction, interactions.Resolution, error)
	ApproveTool(ctx context.Context, chatID, tool string, input json.RawMessage, summary string) (interactions.Interaction, interactions.Resolution, error)
}

var _ Flows = (*interactions.Coordinator)(nil)

// askQuestions puts AskUserQuestion's questions to people one at a time
// and allows it with the answers attached; unreadable says why the input
// could not be read ("" when it could).
func askQuestions(ctx context.Context, f Flows, chatID string, req agent.PermissionRequest) (resp agent.PermissionResponse, unreadable string) {
	var in askInput
	if err := json.Unmarshal(req.Input, &in); err != nil || len(in.Questions) == 0 {
		why := "it has no questions"
		if err != nil {
			why = err.Error()
		}
		return deny("leashd could not read the AskUserQuestion input (" + why + "); expected {\"questions\":[{\"question\",\"header\",\"options\":[{\"label\",\"description\"}],\"multiSelect\"}]}."), why
	}
	res, err := f.Ask(ctx, chatID, in.Questions)
	if err != nil {
		return deny("The question could not be asked: " + err.Error()), ""
	}
	if !res.Complete() {
		return notAnswered(res.Last), ""
	}
	updated, err := withAnswers(req.Input, res.Answers)
	if err != nil {
		return deny("leashd could not attach the answers: " + err.Error()), ""
	}
	return agent.PermissionResponse{Allow: true, UpdatedInput: updated, Classification: agent.ClassUserTemporary}, ""
}

// AskPermission decides a permission request of an agent leashd did not
// start — Claude Code run with --permission-prompt-tool pointing at
// leashd's MCP server — through f in chatID, as for the CLI leashd runs:
// AskUserQuestion becomes questions asked one at a time (allowed with the
// answers attached), ExitPlanMode a plan review (approve sets the mode:
// acceptEdits for the edit decisions, default otherwise; adjust denies with
// the feedback), any other tool a tool approval. There is no session here:
// no rules are kept, and a plan file is read relative to workDir.
func AskPermission(ctx context.Context, f Flows, chatID, workDir string, req agent.PermissionRequest) agent.PermissionResponse {
	switch req.ToolName {
	case agent.ToolAskUserQuestion:
		resp, _ := askQuestions(ctx, f, chatID, req)
		return resp
	case agent.ToolExitPlanMode:
		_, shown, refusal, _ := planOf(req.Input, workDir)
		if refusal != "" {
			return deny(refusal)
		}
		_, res, err := f.ReviewPlan(ctx, chatID, shown)
		if err != nil {
			return deny("The plan could not be shown: " + err.Error())
		}
		if res.Status != interactions.StatusAnswered {
			if res.Decision == interactions.DecisionAdjust {
				return rejected(res.Text) // the feedback, as the person wrote it
			}
			return notAnswered(res)
		}
		mode := agent.ModeAcceptEdits
		if res.Decision == interactions.DecisionDefault {
			mode = agent.ModeDefault
		}
		return allowedBy(agent.ClassUserTemporary, req, agent.PermissionUpdate{Type: "setMode", Mode: mode, Destination: "session"})
	default:
		_, res, err := f.ApproveTool(ctx, chatID, req.ToolName, req.Input, ToolSummary(req.ToolName, req.Input))
		if err != nil {
			return deny("The approval could not be asked: " + err.Error())
		}
		if res.Status != interactions.StatusAnswered {
			return notAnswered(res)
		}
		if res.Decision == interactions.DecisionAllowSession {
			return allowedBy(agent.ClassUserPermanent, req, agent.PermissionUpdate{Type: "addRules", Rules: sessionRules(req), Behavior: "allow", Destination: "session"})
		}
		return allowedBy(agent.ClassUserTemporary, req)
	}
}

// planOf reads ExitPlanMode's plan: its "plan", else the file at
// "planFilePath". shown is the plan as people review it: cut at
// maxPlanBytes with a note (a plan file is read only that far, so then plan
// is cut too; an inline plan reaches the agent whole). refusal is what the
// agent is told when there is none, and notice what the chat is told then
// ("" when nothing needs saying).
func planOf(input json.RawMessage, workDir string) (plan, shown, refusal, notice string) {
	var in planInput
	if err := json.Unmarshal(input, &in); err != nil {
		return "", "", "leashd could not read the ExitPlanMode input: " + err.Error(),
			"The agent sent a plan leashd could not read (" + err.Error() + "); it was told so."
	}
	plan = in.Plan
	if strings.TrimSpace(plan) == "" && in.PlanFilePath != "" {
		p, err := readPlanFile(in.PlanFilePath, workDir)
		if err != nil {
			return "", "", "leashd could not read the plan file (" + err.Error() + "); call ExitPlanMode again with the whole plan in \"plan\".",
				"The agent's plan file could not be read (" + err.Error() + "); it was told to send the plan as text."
		}
		if strings.TrimSpace(p) != "" {
			return p, p, "", "" // already cut to maxPlanBytes
		}
	}
	if strings.TrimSpace(plan) == "" {
		return "", "", "The plan is empty; write the plan before asking for review.", ""
	}
	shown = plan
	if len(shown) > maxPlanBytes { // cut like a plan file: megabytes would be hundreds of chat messages
		part, cut := capText(shown, maxPlanBytes)
		shown = part + "\n\n" + agent.TruncatedNote(cut) + " — the plan is longer than leashd shows for review"
	}
	return plan, shown, "", ""
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

func (t *turn) reviewPlan(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	plan, shown, refusal, notice := planOf(req.Input, t.c.workDir)
	if refusal != "" {
		if notice != "" {
			t.e.say(ctx, t.c.id, notice)
		}
		return deny(refusal)
	}
	_, res, err := t.e.coord.Request(ctx, interactions.Interaction{ChatID: t.c.id, Kind: interactions.KindPlanReview, Plan: shown, Quorum: t.e.quorumFor(t.c.id)})
	if err != nil {
		return deny("The plan could not be shown: " + err.Error())
	}
	if res.Status != interactions.StatusAnswered {
		if res.Decision == interactions.DecisionAdjust {
			r := rejected(res.Text) // the feedback, as the person wrote it
			r.Reason = res.Text
			return r
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
		return allowedBy(agent.ClassUserTemporary, req)
	case interactions.DecisionEdit:
		t.setMode(agent.ModeAcceptEdits)
		t.e.say(ctx, t.c.id, "Plan approved. Mode: acceptEdits — edits are applied without asking.")
		return allowedBy(agent.ClassUserTemporary, req, agent.PermissionUpdate{Type: "setMode", Mode: agent.ModeAcceptEdits, Destination: "session"})
	default:
		t.setMode(agent.ModeDefault)
		t.e.say(ctx, t.c.id, "Plan approved. Mode: default — each edit asks for approval.")
		return allowedBy(agent.ClassUserTemporary, req, agent.PermissionUpdate{Type: "setMode", Mode: agent.ModeDefault, Destination: "session"})
	}
}

func (t *turn) setMode(m agent.Mode) {
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

func (t *turn) approveTool(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	pol := t.policyDecision(req)
	if pol.Rule != nil && (pol.Decision == policy.Allow || pol.Decision == policy.Deny) {
		return t.policyDecided(ctx, req, pol)
	}
	// An ask or quorum rule, or the agent's own word that a person must
	// decide, puts the call to people even where the mode or a session
	// rule would allow it.
	mustAsk := pol.Rule != nil || req.MustAsk()
	if pol.Overridden {
		t.e.log.Info("policy allow overridden: the agent says a person must decide", "chat", t.c.id, "tool", req.ToolName, "rule", pol.Rule.Ref())
	}
	t.e.mu.Lock()
	mode := t.c.mode
	t.e.mu.Unlock()
	if !mustAsk && ((mode == agent.ModeAcceptEdits && editTools[req.ToolName]) || mode == agent.ModeBypass) {
		return allow(req)
	}
	if !mustAsk && t.e.engineRules() && t.rules.allows(req.ToolName, req.Input) {
		return allowedBy(agent.ClassUserPermanent, req)
	}
	if pol.Quorum > 1 && !t.e.isGroupChat(t.c.id) {
		// Nobody else can approve in a one-person chat (a private chat, the
		// page, the terminal): the policy's requirement stands, at once
		// rather than after the timeout.
		pol.Decision = policy.Deny
		pol.Reason = fmt.Sprintf("it needs %d approvers and this chat has one person; ask in a group chat (a Telegram group or Slack channel) where the approvers are", pol.Quorum)
		return t.policyDecided(ctx, req, pol)
	}
	// A policy's quorum, or the group chat's; whichever asks for more.
	quorum := max(pol.Quorum, t.e.quorumFor(t.c.id))
	if quorum <= 1 { // one person's late answer is not a quorum
		if res, ok := t.allowedAgain(ctx, req); ok {
			return res
		}
	}
	it := toolInteraction(t.c.id, req)
	it.Quorum = quorum
	_, res, err := t.e.coord.Request(ctx, it)
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
			return allowedBy(agent.ClassUserTemporary, req)
		}
		rules := sessionRules(req)
		t.rules.add(rules)
		return allowedBy(agent.ClassUserPermanent, req, agent.PermissionUpdate{Type: "addRules", Rules: rules, Behavior: "allow", Destination: "session"})
	}
	return allowedBy(agent.ClassUserTemporary, req)
}

// toolInteraction is the tool approval a person sees for req: the call,
// why the agent asks, the MCP server, and which options in what order.
// A request an ask rule forced offers no "allow for this session": such a
// rule would not stop the next prompt.
func toolInteraction(chatID string, req agent.PermissionRequest) interactions.Interaction {
	var why []string
	if r := strings.TrimSpace(plainText(req.Reason)); r != "" {
		why = append(why, "Why it asks: "+r)
	}
	if p := strings.TrimSpace(plainText(req.BlockedPath)); p != "" {
		why = append(why, "Path: "+p)
	}
	if r := strings.TrimSpace(plainText(req.AskRule)); r != "" {
		why = append(why, "Your ask rule "+r+" requires a person to decide.")
	}
	server := strings.TrimSpace(plainText(req.MCPServer))
	if src := strings.TrimSpace(plainText(req.MCPSource)); server != "" && src != "" {
		server += " (" + src + ")"
	}
	return interactions.Interaction{
		ChatID: chatID, Kind: interactions.KindToolApproval,
		ToolName: req.ToolName, ToolInput: req.Input, ToolSummary: ToolSummary(req.ToolName, req.Input),
		Reason: excerpt(strings.Join(why, "\n"), 20), MCPServer: connectors.Truncate(strings.Join(strings.Fields(server), " "), 200),
		DefaultToNo: req.DefaultToNo, NoSessionAllow: req.NoSessionAllow || req.AskRule != "",
		RequiresDetails: req.RequiresDetails,
	}
}

// plainText drops terminal escape sequences and control characters (but
// newlines and tabs) from text the agent says may carry them.
func plainText(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == 0x1b: // ESC: skip a CSI/OSC sequence or the next char
			if i+1 < len(rs) && rs[i+1] == '[' {
				i += 2
				for i < len(rs) && (rs[i] < 0x40 || rs[i] > 0x7e) {
					i++
				}
			} else if i+1 < len(rs) && rs[i+1] == ']' {
				i += 2
				for i < len(rs) && rs[i] != 0x07 && !(rs[i] == 0x1b && i+1 < len(rs) && rs[i+1] == '\\') {
					i++
				}
				if i < len(rs) && rs[i] == 0x1b {
					i++
				}
			} else {
				i++
			}
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || (r >= 0x7f && r < 0xa0) || r == 0x2028 || r == 0x2029:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sessionRules are the rules "allow for this session" adds: the agent's own
// suggestion when it made one (always with destination session), else the
// exact Bash command, else the whole tool.
func sessionRules(req agent.PermissionRequest) []agent.Rule {
	if len(req.Suggestions) > 0 {
		var rules []agent.Rule
		for _, s := range req.Suggestions {
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
			return []agent.Rule{{ToolName: "Bash", RuleContent: in.Command}}
		}
	}
	return []agent.Rule{{ToolName: req.ToolName}}
}

// engineRules says whether the engine applies "allow for the session"
// rules itself: only for agents that ask for it (SessionRulesByEngine).
// An agent that keeps its own rules (Claude Code) asks only about calls its
// rules do not cover; allowing such a call here because of a looser match
// would approve something nobody has seen.
func (e *Engine) engineRules() bool {
	r, ok := e.agent.(agent.SessionRulesByEngine)
	return ok && r.SessionRulesByEngine()
}

// ruleSet remembers "allow for this session" rules, so an agent that does
// not track them itself (the demo agent) is not asked twice either.
type ruleSet struct {
	mu    sync.Mutex
	rules []agent.Rule
}

func (c *chat) rules() *ruleSet {
	if c.allowed == nil {
		c.allowed = &ruleSet{}
	}
	return c.allowed
}

func (r *ruleSet) add(rules []agent.Rule) {
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
