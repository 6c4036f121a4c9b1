// Package demo is a built-in agent that needs nothing installed and no
// network: it streams short scripted replies and, on a few words in the
// prompt, exercises every kind of interaction leashd supports — questions
// (single and multi-select), a plan review and tool approvals — then reports
// exactly what it received, the way Claude Code would read it.
//
// Words (case-insensitive, anywhere in the prompt):
//
//	question, ask       AskUserQuestion: "Which database?" then "Which features?"
//	plan                ExitPlanMode with a short Markdown plan
//	bash, run           a Bash approval for `echo hello`
//	edit, write         a Write approval for a demo file (nothing is written)
//
// Anything else gets an echo and a hint. In plan mode every prompt but a
// question first becomes a plan to review; once the plan is approved the
// demo goes on under the mode the approval chose.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/leashd/leashd/engine/agent"

	"github.com/leashd/leashd/interactions"
)

// Agent is the demo agent; it implements agent.Agent and agent.Helper.
// Create it with New.
type Agent struct {
	delay time.Duration

	mu  sync.Mutex
	seq int
}

// Option configures an Agent.
type Option func(*Agent)

// WithDelay sets the pause between streamed chunks (default 15ms, so the
// page shows text arriving; 0 streams at once).
func WithDelay(d time.Duration) Option { return func(a *Agent) { a.delay = max(d, 0) } }

// New returns the demo agent.
func New(opts ...Option) *Agent {
	a := &Agent{delay: 15 * time.Millisecond}
	for _, o := range opts {
		o(a)
	}
	return a
}

var (
	_ agent.Agent                = (*Agent)(nil)
	_ agent.SessionRulesByEngine = (*Agent)(nil)
)

// SessionRulesByEngine implements agent.SessionRulesByEngine: the demo
// keeps no permission rules, so the engine applies "allow for the session".
func (a *Agent) SessionRulesByEngine() bool { return true }

// Name implements agent.Agent.
func (a *Agent) Name() string { return "demo" }

// About implements agent.Agent; Help lists the words the demo reacts to.
func (a *Agent) About() agent.About {
	return agent.About{
		Label:       "the built-in demo agent",
		Title:       "demo agent",
		LoginHelp:   "The built-in demo agent needs no login: it runs no model. Set LEASHD_AGENT to claude or acp to run a real agent.",
		NotLoggedIn: "The built-in demo agent needs no login.",
		Help: "This is the built-in demo agent. Put one of these words in a message:\n" +
			"• question — it asks which database (one choice) and which features (several)\n" +
			"• plan — it asks you to review a plan\n" +
			"• bash — it asks to run a command (`echo hello`)\n" +
			"• edit — it asks to write a file (nothing is written)\n" +
			"Anything else is echoed back. In plan mode (/plan) every message but a question gets a plan to review first.",
	}
}

// Ready implements agent.Agent: the demo runs in process, always ready.
func (a *Agent) Ready() error { return nil }

// Open implements agent.Agent. ResumeID resumes a session by name (the
// demo keeps no history, so it only keeps the ID).
func (a *Agent) Open(ctx context.Context, o agent.SessionOptions) (agent.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.seq++
	id := o.ResumeID
	if id == "" {
		id = fmt.Sprintf("demo-%d", a.seq)
	}
	a.mu.Unlock()
	mode := o.Mode
	if mode == "" {
		mode = agent.ModeDefault
	}
	return &Session{
		id:      id,
		workDir: o.WorkDir,
		delay:   a.delay,
		mode:    mode,
		done:    make(chan struct{}),
	}, nil
}

// Session is one demo conversation; it implements agent.Session.
type Session struct {
	id      string
	workDir string
	delay   time.Duration

	mu        sync.Mutex
	mode      agent.Mode
	running   bool
	interrupt context.CancelFunc // the running turn's
	closed    bool
	done      chan struct{}
}

var _ agent.Session = (*Session)(nil)

// ID implements agent.Session.
func (s *Session) ID() string { return s.id }

// Done implements agent.Session.
func (s *Session) Done() <-chan struct{} { return s.done }

// Mode is the session's current permission mode.
func (s *Session) Mode() agent.Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// SetMode implements agent.Session.
func (s *Session) SetMode(_ context.Context, m agent.Mode) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return agent.ErrSessionEnded
	}
	s.mode = m
	return nil
}

// Interrupt implements agent.Session: the running turn stops (a pending
// permission request is withdrawn) and Turn returns an error result.
func (s *Session) Interrupt(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return agent.ErrSessionEnded
	}
	if s.interrupt != nil {
		s.interrupt()
	}
	return nil
}

// Close implements agent.Session: a running turn returns
// agent.ErrSessionEnded.
func (s *Session) Close(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.interrupt != nil {
		s.interrupt()
	}
	close(s.done)
	return nil
}

// interrupted is the cause of a turn stopped by Interrupt.
type interrupted struct{}

func (interrupted) Error() string { return "interrupted" }

// TakesImages implements agent.ImageTaker: the demo agent sees no
// pictures; the engine saves them as files and names their paths.
func (s *Session) TakesImages() bool { return false }

// Turn implements agent.Session.
func (s *Session) Turn(ctx context.Context, p agent.Prompt, h agent.TurnHandler) (agent.Result, error) {
	prompt := p.Text
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return agent.Result{}, agent.ErrSessionEnded
	}
	if s.running {
		s.mu.Unlock()
		return agent.Result{}, fmt.Errorf("demo: a turn is already running in session %s", s.id)
	}
	tctx, cancel := context.WithCancelCause(ctx)
	s.running = true
	s.interrupt = func() { cancel(interrupted{}) }
	s.mu.Unlock()
	start := time.Now()
	defer func() {
		cancel(nil)
		s.mu.Lock()
		s.running = false
		s.interrupt = nil
		s.mu.Unlock()
	}()

	t := &run{s: s, ctx: tctx, h: h, turns: 1}
	text := t.script(prompt)
	res := agent.Result{
		Text: text, SessionID: s.id, NumTurns: t.turns, Subtype: "success",
		DurationMS: time.Since(start).Milliseconds(),
	}
	if tctx.Err() != nil {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		switch {
		case closed:
			return res, agent.ErrSessionEnded
		case ctx.Err() != nil:
			return res, ctx.Err()
		}
		// Interrupted: like Claude Code, the turn ends with an error result.
		res.IsError, res.Subtype, res.Text = true, "error_during_execution", "Interrupted by the user."
	}
	return res, nil
}

// run is one turn's script.
type run struct {
	s     *Session
	ctx   context.Context
	h     agent.TurnHandler
	turns int
	out   []string // paragraphs said, the result text
}

// say streams one paragraph in small chunks.
func (t *run) say(text string) {
	if t.ctx.Err() != nil {
		return
	}
	if len(t.out) > 0 {
		t.h.Text("\n\n")
	}
	t.out = append(t.out, text)
	for _, chunk := range chunks(text) {
		if t.ctx.Err() != nil {
			return
		}
		t.h.Text(chunk)
		if t.s.delay > 0 {
			select {
			case <-t.ctx.Done():
				return
			case <-time.After(t.s.delay):
			}
		}
	}
}

// chunks cuts text after each space, a few words at a time.
func chunks(text string) []string {
	var out []string
	words := strings.SplitAfter(text, " ")
	for i := 0; i < len(words); i += 3 {
		out = append(out, strings.Join(words[i:min(i+3, len(words))], ""))
	}
	return out
}

// words is what the demo reacts to.
type words struct{ question, plan, bash, edit, implement, recovered bool }

func parse(prompt string) words {
	var w words
	if strings.HasPrefix(prompt, agent.RecoveredPromptPrefix) {
		return words{recovered: true} // the engine's words, not the user's
	}
	w.implement = strings.HasPrefix(prompt, "Implement the following plan")
	for _, f := range strings.FieldsFunc(strings.ToLower(prompt), func(r rune) bool { return !unicode.IsLetter(r) }) {
		switch f {
		case "question", "questions", "ask":
			w.question = true
		case "plan":
			w.plan = true
		case "bash", "run":
			w.bash = true
		case "edit", "write":
			w.edit = true
		}
	}
	if w.implement { // the engine's prompt after a clean plan approval
		w = words{implement: true, bash: true, edit: true}
	}
	return w
}

// script runs the turn and returns its result text.
func (t *run) script(prompt string) string {
	w := parse(prompt)
	if w.recovered {
		lines := strings.Split(strings.TrimSpace(prompt), "\n")
		t.say("Got your answer from before leashd restarted: " + lines[len(lines)-1])
		return t.result()
	}
	if w.implement {
		// The engine has said the plan was approved and a fresh session
		// starts: the demo says what it does, not that again.
		t.say("Working through the plan: writing hello.txt, then running `echo hello`.")
	}
	if w.question {
		t.askQuestions()
	}
	// In plan mode everything but a question is planned first, as Claude
	// Code does; "plan" asks for a review in any mode.
	if w.plan || (t.s.Mode() == agent.ModePlan && !w.question) {
		if !t.reviewPlan() {
			return t.result()
		}
		w.plan = true
	}
	if w.edit {
		t.write()
	}
	if w.bash {
		t.bash()
	}
	if w == (words{}) {
		t.say("You said: " + quote(prompt) + ". I am the demo agent: I only pretend to work. Try a message with the word \"question\", \"plan\", \"bash\" or \"edit\" to see how leashd asks you.")
	}
	return t.result()
}

func (t *run) result() string {
	if len(t.out) == 0 {
		return ""
	}
	return t.out[len(t.out)-1]
}

// permission asks the engine like Claude Code would: the tool use is
// reported, then permission is requested.
func (t *run) permission(tool string, input any) (agent.PermissionResponse, json.RawMessage, bool) {
	raw, _ := json.Marshal(input)
	t.turns++
	t.h.ToolUse(tool, raw)
	if t.ctx.Err() != nil {
		return agent.PermissionResponse{}, raw, false
	}
	resp := t.h.Permission(t.ctx, agent.PermissionRequest{
		ToolName: tool, Input: raw, ToolUseID: fmt.Sprintf("toolu_demo_%d", t.turns),
	})
	return resp, raw, t.ctx.Err() == nil
}

// The questions, pinned: tests and docs rely on them.
var questions = []map[string]any{
	{
		"question": "Which database?", "header": "Database", "multiSelect": false,
		"options": []map[string]string{
			{"label": "Postgres", "description": "A server, for many users"},
			{"label": "SQLite", "description": "A file, nothing to run"},
		},
	},
	{
		"question": "Which features?", "header": "Features", "multiSelect": true,
		"options": []map[string]string{
			{"label": "Auth", "description": "Sign-in and sessions"},
			{"label": "Search", "description": "Full-text search"},
			{"label": "Billing", "description": "Plans and invoices"},
		},
	},
}

func (t *run) askQuestions() {
	t.say("I have two questions before I start.")
	resp, _, ok := t.permission(agent.ToolAskUserQuestion, map[string]any{"questions": questions})
	if !ok {
		return
	}
	if !resp.Allow {
		t.say("You did not answer my questions: " + resp.Message)
		return
	}
	var in struct {
		Answers map[string]string `json:"answers"`
	}
	if err := json.Unmarshal(resp.UpdatedInput, &in); err != nil || len(in.Answers) == 0 {
		t.say("The questions were allowed but no answers came back.")
		return
	}
	// Each question with its answer, in question order, as a person
	// reads them back (Claude Code gives the model "question"="answer").
	var parts []string
	for _, q := range questions {
		text := q["question"].(string)
		if a, ok := in.Answers[text]; ok {
			parts = append(parts, text+" "+a)
		}
	}
	t.say("Thanks. Your answers: " + strings.Join(parts, "; "))
}

// Plan is the demo's plan, pinned.
const Plan = "# Plan: add a greeting\n\n" +
	"1. Write `hello.txt` with a greeting.\n" +
	"2. Run a command to check it:\n\n" +
	"```bash\necho hello\n```\n\n" +
	"- Nothing outside the working directory changes.\n" +
	"- **Risk:** none, it is a demo.\n"

// reviewPlan asks for a plan review and reports the decision; it returns
// whether the plan was approved.
func (t *run) reviewPlan() bool {
	t.say("Here is my plan; please review it.")
	resp, _, ok := t.permission(agent.ToolExitPlanMode, map[string]any{"plan": Plan})
	mode, clean := agent.ModeAcceptEdits, true
	if resp.Allow {
		// An approval takes effect even when the turn is interrupted the
		// moment it is given (the engine does so after a clean approval,
		// and may do it before this turn reads the answer).
		for _, u := range resp.UpdatedPermissions {
			if u.Type == "setMode" {
				mode, clean = u.Mode, false
			}
		}
		t.s.mu.Lock()
		t.s.mode = mode
		t.s.mu.Unlock()
	}
	if !ok {
		return false
	}
	if !resp.Allow {
		t.say(planDenied(resp))
		return false
	}
	if clean {
		// Approved with a clear context: as with Claude Code, the engine
		// interrupts this turn and a fresh session implements the plan.
		// Until then this one says nothing (a sentence begun here was cut
		// off by the interrupt: "Plan approved (decision:").
		<-t.ctx.Done()
		return false
	}
	// The engine has told the chat the plan was approved and in which
	// mode; the demo does not say it again.
	t.say("Going ahead with the plan. (The demo changes nothing; put \"edit\" or \"bash\" in a message to see what real work would ask.)")
	return true
}

// The engine's deny messages for a plan review nobody approved (an agent
// sees only the message): adjust sends the person's feedback as written;
// these are its fixed texts for the other outcomes.
const (
	noAnswerMessage = "No answer was given."
	expiredPrefix   = "No answer came within " // "… 10m0s; the user did not respond."
)

// cancelledPrefixes start the reasons the engine gives when it cancels a
// pending request (/stop, /clear, a turn that ended or timed out).
var cancelledPrefixes = []string{"Cancelled by ", "The turn was stopped", "The agent turn timed out", "The agent could not start", "The agent stopped"}

// planDenied reports a plan review that was not approved, naming the
// decision: adjust with its feedback, a rejection, an expired, cancelled or
// interrupted review.
func planDenied(resp agent.PermissionResponse) string {
	msg := resp.Message
	switch {
	case resp.Interrupt:
		return fmt.Sprintf("Plan review interrupted (%q), so I stop here.", msg)
	case msg == interactions.RejectedText || strings.HasPrefix(msg, agent.RejectedBecause):
		return fmt.Sprintf("Plan rejected (%q), so I stop here and change nothing.", msg)
	case msg == noAnswerMessage || strings.HasPrefix(msg, expiredPrefix):
		return fmt.Sprintf("Plan review expired (%q), so I stay in plan mode and change nothing.", msg)
	}
	for _, p := range cancelledPrefixes {
		if strings.HasPrefix(msg, p) {
			return fmt.Sprintf("Plan review cancelled (%q), so I stay in plan mode and change nothing.", msg)
		}
	}
	return "Plan not approved, so I stay in plan mode. Your feedback: " + quote(msg)
}

// quote puts a person's text in quotes as they wrote it: line breaks stay
// line breaks (Go's %q would show them as a literal \n).
func quote(s string) string { return `"` + s + `"` }

func (t *run) write() {
	path := "hello.txt"
	if t.s.workDir != "" {
		path = strings.TrimRight(t.s.workDir, "/") + "/hello.txt"
	}
	resp, _, ok := t.permission("Write", map[string]any{"file_path": path, "content": "Hello from the leashd demo!\n"})
	if !ok {
		return
	}
	if !resp.Allow {
		t.say("Write of " + path + " denied: " + resp.Message)
		return
	}
	t.say("Write of " + path + " allowed" + how(resp) + ". (The demo writes nothing to disk.)")
}

func (t *run) bash() {
	resp, _, ok := t.permission("Bash", map[string]any{"command": "echo hello", "description": "Print hello"})
	if !ok {
		return
	}
	if !resp.Allow {
		t.say("Bash `echo hello` denied: " + resp.Message)
		return
	}
	t.say("Bash `echo hello` allowed" + how(resp) + ". Output: hello")
}

// how says whether an allow came with rules for the rest of the session.
func how(resp agent.PermissionResponse) string {
	for _, u := range resp.UpdatedPermissions {
		if u.Type == "addRules" {
			return " for the session"
		}
	}
	return ""
}
