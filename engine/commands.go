package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Command is a chat command, for help texts and Telegram's setMyCommands.
type Command struct {
	Name        string // without the slash
	Description string
}

// Commands lists every chat command, in help order.
var Commands = []Command{
	{"start", "Greeting and your user ID"},
	{"help", "What leashd can do"},
	{"status", "Mode, session, pending questions"},
	{"stop", "Interrupt the running turn"},
	{"clear", "Cancel everything and start a fresh session"},
	{"plan", "Plan mode: the agent plans before editing [text]"},
	{"edit", "Auto-accept edits [text]"},
	{"default", "Ask before each edit [text]"},
	{"login", "How to give the agent its credentials"},
	{"worktree", "This chat's git worktree: path, branch, changes"},
	{"merge", "Commit this chat's worktree and merge it into its base branch"},
	{"discard", "Remove this chat's worktree and branch (asks first)"},
	{"sessions", "This chat's earlier sessions: start, first prompt, cost"},
	{"resume", "Go back to an earlier session [N from /sessions]"},
	{"cost", "Tokens and cost of this session and of today"},
	{"away", "Away from the desk: your terminal's agent asks here"},
	{"back", "Back at the desk: the terminal asks again"},
	{"runner", "Where this chat's agent runs [name | labels a,b | any]"},
}

// command runs a /command. "/cmd@botname args" (Telegram groups) works too.
func (e *Engine) command(ctx context.Context, in connectors.Incoming, text string) {
	name, args, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	if at := strings.IndexByte(name, '@'); at >= 0 {
		name = name[:at]
	}
	name = strings.ToLower(name)
	args = strings.TrimSpace(args)
	chatID := in.ChatID
	switch name {
	case "start":
		e.say(ctx, chatID, fmt.Sprintf("Hi! I'm leashd: I run %s for you in %s, and bring its questions, plans and tool requests here as buttons.\nYour user ID is %s.\n\n%s",
			e.agentLabel(), e.workDir(ctx, chatID), in.UserID, e.helpText()))
	case "help":
		e.say(ctx, chatID, e.helpText())
	case "status":
		e.say(ctx, chatID, e.status(ctx, chatID))
	case "runner":
		e.say(ctx, chatID, e.runnerCommand(chatID, args))
	case "stop":
		e.say(ctx, chatID, e.stop(ctx, chatID))
	case "clear":
		e.clear(ctx, chatID)
		msg := "Cleared. Pending questions were cancelled; your next message starts a fresh session."
		if e.opts.worktrees != nil {
			msg += " This chat's worktree and its changes are kept (/discard removes them)."
		}
		e.say(ctx, chatID, msg)
	case "login":
		e.say(ctx, chatID, e.agent.About().LoginHelp)
	case "plan", "edit", "default":
		mode := map[string]agent.Mode{"plan": agent.ModePlan, "edit": agent.ModeAcceptEdits, "default": agent.ModeDefault}[name]
		if err := e.setMode(ctx, chatID, mode); err != nil {
			e.say(ctx, chatID, "Mode not changed: "+err.Error())
			return
		}
		e.say(ctx, chatID, "Mode: "+string(mode)+e.agentModeName(ctx, chatID, mode)+" — "+modeMeaning(mode))
		if args != "" {
			e.prompt(ctx, chatID, args)
		}
	case "worktree", "merge":
		// git may take a while in a large repository: not on the
		// connector's handler.
		e.wg.Go(func() {
			ctx := e.agentCtx
			if name == "merge" {
				e.say(ctx, chatID, e.mergeCommand(ctx, chatID))
			} else {
				e.say(ctx, chatID, e.worktreeCommand(ctx, chatID))
			}
		})
	case "discard":
		e.discardCommand(ctx, chatID)
	case "sessions":
		e.say(ctx, chatID, e.sessionsCommand(ctx, chatID))
	case "resume":
		e.say(ctx, chatID, e.resumeCommand(ctx, chatID, args))
	case "cost":
		e.say(ctx, chatID, e.costCommand(ctx, chatID))
	case "away", "back":
		e.awayCommand(ctx, chatID, name == "away")
	default:
		e.say(ctx, chatID, fmt.Sprintf("Unknown command /%s — try /help", name))
	}
}

func modeMeaning(m agent.Mode) string {
	switch m {
	case agent.ModePlan:
		return "the agent plans first and asks you to review the plan before it edits anything."
	case agent.ModeAcceptEdits:
		return "file edits are applied without asking; other tools still ask."
	default:
		return "the agent asks before each edit and each command that changes something."
	}
}

func (e *Engine) agentLabel() string { return e.agent.About().Label }

func (e *Engine) helpText() string {
	var b strings.Builder
	b.WriteString("Send a message and the agent works on it. When it asks a question, wants its plan reviewed or needs permission for a tool, tap a button — or type: typed text answers a question, gives plan feedback, or denies a tool with your reason.\n\nCommands:\n")
	for _, c := range Commands {
		fmt.Fprintf(&b, "/%s — %s\n", c.Name, c.Description)
	}
	if h := e.agent.About().Help; h != "" {
		b.WriteString("\n" + h)
	}
	return strings.TrimRight(b.String(), "\n")
}

func (e *Engine) workDir(ctx context.Context, chatID string) string {
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	defer e.mu.Unlock()
	return c.workDir
}

func (e *Engine) status(ctx context.Context, chatID string) string {
	c := e.chatFor(ctx, chatID)
	pending := e.coord.Pending(chatID)
	slots := e.slotsStatus()
	e.mu.Lock()
	state := "idle"
	if c.busy {
		state = "busy"
		if n := len(c.queue); n > 0 {
			state += fmt.Sprintf(", %d queued", n)
		}
	}
	session := c.agentID
	if c.sess != nil && c.sess.ID() != "" {
		session = c.sess.ID()
	}
	if session == "" {
		session = "none yet (the next message starts one)"
	}
	process := "not running"
	if c.sess != nil {
		process = "running"
	}
	lines := []string{
		"Agent: " + e.agentLabel() + " (" + process + ")",
		"Mode: " + string(c.mode),
		"Session: " + session,
		"State: " + state,
		"Working directory: " + c.workDir,
	}
	if !c.active.IsZero() {
		lines = append(lines, "Last activity: "+c.active.Format(time.RFC3339))
	}
	if l := e.limitStatus(c); l != "" {
		lines = append(lines, l)
	}
	e.mu.Unlock()
	if w := e.runnerStatus(chatID); w != "" {
		lines = append(lines, w)
	}
	lines = append(lines, slots)
	if len(pending) == 0 {
		lines = append(lines, "Pending: nothing")
	} else {
		lines = append(lines, fmt.Sprintf("Pending: %d", len(pending)))
		for _, it := range pending {
			lines = append(lines, "  • "+describe(it))
		}
	}
	return strings.Join(lines, "\n")
}

// describe is a pending interaction in /status, in plain words: "a
// question: Which database?", "a plan to review: # Plan: …", "a request
// to use a tool: git push" (its summary's first line, else its name).
func describe(it interactions.Interaction) string {
	firstLine := func(s string) string {
		first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
		return first
	}
	switch it.Kind {
	case interactions.KindPlanReview:
		return "a plan to review: " + firstLine(it.Plan)
	case interactions.KindToolApproval:
		what := firstLine(it.ToolSummary)
		if what == "" {
			what = it.ToolName
		}
		return "a request to use a tool: " + what
	}
	return "a question: " + it.Question
}

// stop interrupts the running turn and cancels what is pending and queued.
func (e *Engine) stop(ctx context.Context, chatID string) string {
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	c.markStopping()
	e.mu.Unlock()
	cancelled := e.coord.CancelPending(chatID, "Cancelled by /stop.")
	e.mu.Lock()
	dropped := len(c.queue)
	c.queue = nil
	c.roomWait = false // what waited for room is dropped
	running := c.current != nil
	sess := c.sess
	e.mu.Unlock()
	if !running && len(cancelled) == 0 && dropped == 0 {
		return "Nothing is running."
	}
	if running && sess != nil {
		ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := sess.Interrupt(ictx)
		cancel()
		if err != nil {
			e.log.Warn("interrupting turn", "chat", chatID, "err", err)
			e.mu.Lock()
			if c.cancel != nil {
				c.cancel()
			}
			e.mu.Unlock()
		}
	}
	msg := "Stopped."
	if len(cancelled) > 0 {
		msg += fmt.Sprintf(" %d pending request(s) cancelled.", len(cancelled))
	}
	if dropped > 0 {
		msg += fmt.Sprintf(" %d queued message(s) dropped.", dropped)
	}
	return msg
}

// clear cancels everything and drops the session: the next prompt starts
// a fresh one.
func (e *Engine) clear(ctx context.Context, chatID string) {
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	c.markStopping()
	e.mu.Unlock()
	e.coord.CancelPending(chatID, "Cancelled by /clear.")
	e.mu.Lock()
	c.gen++
	c.queue = nil
	c.roomWait = false
	c.agentID = ""
	c.allowed = nil
	if c.cancel != nil {
		c.cancel()
	}
	sess := c.sess
	e.dropSessionLocked(c)
	c.agentID = ""
	e.mu.Unlock()
	e.save(c)
	if sess != nil {
		go e.closeSession(sess)
	}
}

// agentModeName is " (the agent's Auto Edit mode)" when the chat's live
// session names its modes (ModeNamer) differently from leashd.
func (e *Engine) agentModeName(ctx context.Context, chatID string, m agent.Mode) string {
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	sess := c.sess
	e.mu.Unlock()
	n, ok := sess.(agent.ModeNamer)
	if !ok {
		return ""
	}
	if name := n.ModeName(m); name != "" && !strings.EqualFold(name, string(m)) {
		return " (the agent's " + name + " mode)"
	}
	return ""
}

// setMode changes the chat's mode and its live session's. An agent that
// has no such mode (ErrModeUnsupported) refuses it: the mode stays as it
// was and the error says which modes the agent has.
func (e *Engine) setMode(ctx context.Context, chatID string, m agent.Mode) error {
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	old := c.mode
	c.mode = m
	sess := c.sess
	e.mu.Unlock()
	if sess != nil {
		if err := sess.SetMode(ctx, m); errors.Is(err, agent.ErrModeUnsupported) {
			e.mu.Lock()
			c.mode = old
			e.mu.Unlock()
			return err
		} else if err != nil {
			e.log.Warn("changing agent mode", "chat", chatID, "err", err)
		}
	}
	e.save(c)
	return nil
}
