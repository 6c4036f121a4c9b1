package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leashd/leashd/engine/agent"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/leashd/leashd/engine/agent/internal/agentproc"
	"github.com/leashd/leashd/interactions"
)

// session is one agent process with one ACP session in it.
type session struct {
	a      *Agent
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	conn   *sdk.Connection
	log    *slog.Logger
	stderr tail
	done   chan struct{}

	turnMu sync.Mutex // one turn at a time

	mu        sync.Mutex
	id        string
	canLoad   bool
	canResume bool
	modes     []sdk.SessionMode
	current   string        // the agent's current mode ID
	modeMoved chan struct{} // closed (and replaced) when current changes
	note      string        // said at the start of the next turn
	h         agent.TurnHandler
	text      strings.Builder // this turn's agent text
	plan      string          // the last plan checklist shown
	replaying bool            // session/load replays history: not shown
	stopped   bool            // Interrupt was called during this turn
	stopping  chan struct{}   // closed by Interrupt during this turn
	stopOnce  *sync.Once
	feedback  []string // people's reasons the agent has not read yet
	urls      map[string]*urlWait
	tools     map[string]string // tool call ID -> tool name
	exitErr   error
	closing   string
}

// Interrupt implements agent.Session: session/cancel. The agent answers
// the running session/prompt with stopReason "cancelled"; the engine has
// already cancelled what was pending, so every open request is answered
// "cancelled".
func (s *session) Interrupt(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true
	id := s.id
	stopping, once := s.stopping, s.stopOnce
	s.mu.Unlock()
	if s.ended() {
		return s.endedErr()
	}
	err := s.conn.SendNotification(ctx, sdk.AgentMethodSessionCancel, sdk.CancelNotification{SessionId: sdk.SessionId(id)})
	if stopping != nil {
		once.Do(func() { close(stopping) })
	}
	return err
}

// cancelGrace is how long a permission that ended unanswered waits before
// it is answered "cancelled": /stop and /clear cancel what is pending just
// before they interrupt the turn, and the agent must read session/cancel
// first, or it takes the cancelled answer for a failed tool and goes on.
const cancelGrace = 250 * time.Millisecond

// awaitStop waits for Interrupt, at most cancelGrace.
func (s *session) awaitStop() {
	s.mu.Lock()
	ch, stopped := s.stopping, s.stopped
	s.mu.Unlock()
	if ch == nil || stopped {
		return
	}
	t := time.NewTimer(cancelGrace)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-s.done:
	}
}

// modeAliases are the ACP mode IDs (lower case) that mean each engine
// mode, the agent's own names first: Claude's adapter uses Claude Code's
// names; Gemini CLI calls accept-edits autoEdit and bypass yolo.
var modeAliases = map[agent.Mode][]string{
	agent.ModeDefault:     {"default", "ask", "read-only"},
	agent.ModeAcceptEdits: {"acceptedits", "autoedit", "auto_edit", "auto-edit", "accept-edits"},
	agent.ModePlan:        {"plan", "planning"},
	agent.ModeBypass:      {"bypasspermissions", "yolo", "full-access", "bypass"},
}

// modeID finds the agent's mode for an engine mode: by ID, then by name.
func (s *session) modeIDLocked(m agent.Mode) (string, bool) {
	for _, alias := range modeAliases[m] {
		for _, am := range s.modes {
			if strings.ToLower(string(am.Id)) == alias || strings.ToLower(am.Name) == alias {
				return string(am.Id), true
			}
		}
	}
	for _, am := range s.modes {
		if strings.EqualFold(string(am.Id), string(m)) {
			return string(am.Id), true
		}
	}
	return "", false
}

// ModeName implements agent.ModeNamer.
func (s *session) ModeName(m agent.Mode) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.modeIDLocked(m)
	if !ok {
		return ""
	}
	return s.modeNameLocked(id)
}

func (s *session) modeName(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modeNameLocked(id)
}

func (s *session) modeNameLocked(id string) string {
	for _, am := range s.modes {
		if string(am.Id) == id {
			return am.Name
		}
	}
	return id
}

// SetMode implements agent.Session: session/set_mode with the agent's own
// mode for m. A mode the agent lacks is refused, naming the agent's modes.
func (s *session) SetMode(ctx context.Context, m agent.Mode) error {
	s.mu.Lock()
	id, ok := s.modeIDLocked(m)
	cur := s.current
	var names []string
	for _, am := range s.modes {
		names = append(names, fmt.Sprintf("%s (%s)", am.Name, am.Id))
	}
	sid := s.id
	s.mu.Unlock()
	if len(names) == 0 {
		return fmt.Errorf("%w: the agent offers no modes", agent.ErrModeUnsupported)
	}
	if !ok {
		return fmt.Errorf("%w: the agent has no %s mode; its modes are %s", agent.ErrModeUnsupported, m, strings.Join(names, ", "))
	}
	if id == cur {
		return nil
	}
	if _, err := call[sdk.SetSessionModeResponse](ctx, s, sdk.AgentMethodSessionSetMode, sdk.SetSessionModeRequest{SessionId: sdk.SessionId(sid), ModeId: sdk.SessionModeId(id)}); err != nil {
		return err
	}
	s.mu.Lock()
	s.setCurrentLocked(id)
	s.mu.Unlock()
	return nil
}

func (s *session) setCurrentLocked(id string) {
	s.current = id
	if s.modeMoved != nil {
		close(s.modeMoved)
	}
	s.modeMoved = make(chan struct{})
}

// awaitModeChange waits (up to d) until the agent reports a mode other
// than from.
func (s *session) awaitModeChange(from string, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		s.mu.Lock()
		if s.current != from {
			s.mu.Unlock()
			return
		}
		if s.modeMoved == nil {
			s.modeMoved = make(chan struct{})
		}
		ch := s.modeMoved
		s.mu.Unlock()
		select {
		case <-ch:
		case <-t.C:
			return
		case <-s.done:
			return
		}
	}
}

// ID implements agent.Session.
func (s *session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Done implements agent.Session.
func (s *session) Done() <-chan struct{} { return s.done }

// lost reports whether the agent's side of the connection is gone, waiting
// a little for the process itself to be reaped so that the error can say
// how it ended.
func (s *session) lost() bool {
	select {
	case <-s.conn.Done():
	default:
		return s.ended()
	}
	t := time.NewTimer(s.a.closeTimeout)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
	}
	return true
}

func (s *session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// endedErr says why the process ended, with the end of its stderr.
func (s *session) endedErr() error {
	<-s.done
	s.mu.Lock()
	why := s.closing
	exit := s.exitErr
	s.mu.Unlock()
	if why == "" {
		why = "the agent exited"
		if exit != nil {
			why += " (" + exit.Error() + ")"
		}
	}
	if t := s.stderr.String(); t != "" && s.closing == "" {
		why += ": " + lastLines(t, 3)
	}
	return fmt.Errorf("%w: %s", agent.ErrSessionEnded, why)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// Close implements agent.Session: close stdin, then SIGTERM, then SIGKILL
// the process group, each step after the close timeout.
func (s *session) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closing == "" {
		s.closing = "closed by leashd"
	}
	s.mu.Unlock()
	wait := func() bool {
		t := time.NewTimer(s.a.closeTimeout)
		defer t.Stop()
		select {
		case <-s.done:
			return true
		case <-t.C:
		case <-ctx.Done():
		}
		return false
	}
	_ = s.stdin.Close()
	if wait() {
		return nil
	}
	if s.cmd == nil {
		<-s.done
		return nil
	}
	if s.cmd.Process != nil {
		_ = agentproc.Signal(s.cmd.Process, syscall.SIGTERM)
	}
	if wait() {
		return nil
	}
	if s.cmd.Process != nil {
		_ = agentproc.Signal(s.cmd.Process, syscall.SIGKILL)
	}
	<-s.done
	return nil
}

// Turn implements agent.Session: session/prompt, streaming the agent's
// updates to h. Reasons people gave when rejecting (which ACP v1 has no
// field for) are sent as a follow-up prompt when the turn ends, or, if it
// was stopped, before the next prompt.
func (s *session) Turn(ctx context.Context, prompt string, h agent.TurnHandler) (agent.Result, error) {
	s.turnMu.Lock()
	defer s.turnMu.Unlock()
	if s.ended() {
		return agent.Result{}, s.endedErr()
	}
	s.mu.Lock()
	s.h = h
	s.text.Reset()
	s.stopped = false
	s.stopping, s.stopOnce = make(chan struct{}), &sync.Once{}
	note := s.note
	s.note = ""
	earlier := s.takeFeedbackLocked()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.h = nil
		s.mu.Unlock()
	}()
	if note != "" {
		h.Text(note + "\n\n")
	}
	if earlier != "" {
		prompt = earlier + "\n\n" + prompt
	}
	for {
		resp, err := s.prompt(ctx, prompt)
		if err != nil {
			return agent.Result{}, err
		}
		s.mu.Lock()
		more := ""
		if !s.stopped {
			more = s.takeFeedbackLocked()
		}
		text := s.text.String()
		id := s.id
		s.mu.Unlock()
		if more == "" {
			return agent.Result{
				Text: strings.TrimSpace(text), SessionID: id, Subtype: string(resp.StopReason),
				IsError: resp.StopReason == sdk.StopReasonRefusal || resp.StopReason == sdk.StopReasonMaxTokens,
			}, nil
		}
		prompt = more // what people said reaches the agent now
		h.Text("\n\n")
	}
}

// prompt runs one session/prompt; ctx ending cancels it (session/cancel)
// and waits a little for the agent to wind down.
func (s *session) prompt(ctx context.Context, text string) (sdk.PromptResponse, error) {
	type res struct {
		v   sdk.PromptResponse
		err error
	}
	ch := make(chan res, 1)
	id := s.ID()
	go func() {
		v, err := sdk.SendRequest[sdk.PromptResponse](s.conn, context.WithoutCancel(ctx), sdk.AgentMethodSessionPrompt,
			sdk.PromptRequest{SessionId: sdk.SessionId(id), Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		ch <- res{v, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			if s.lost() {
				return r.v, s.endedErr()
			}
			return r.v, fmt.Errorf("session/prompt: %w", r.err)
		}
		return r.v, nil
	case <-s.done:
		return sdk.PromptResponse{}, s.endedErr()
	case <-ctx.Done():
		_ = s.Interrupt(context.WithoutCancel(ctx))
		t := time.NewTimer(s.a.closeTimeout)
		defer t.Stop()
		select {
		case <-ch:
		case <-s.done:
		case <-t.C:
			s.log.Warn("the agent did not end its turn after session/cancel")
		}
		return sdk.PromptResponse{}, fmt.Errorf("turn abandoned: %w", context.Cause(ctx))
	}
}

func (s *session) takeFeedbackLocked() string {
	if len(s.feedback) == 0 {
		return ""
	}
	out := strings.Join(s.feedback, "\n\n")
	s.feedback = nil
	return out
}

func (s *session) addFeedback(text string) {
	s.mu.Lock()
	s.feedback = append(s.feedback, text)
	s.mu.Unlock()
}

func (s *session) handler() agent.TurnHandler {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h
}

// handle answers what the agent sends. Requests run on their own
// goroutines (a person may take minutes); notifications in order.
func (s *session) handle(ctx context.Context, method string, params json.RawMessage) (any, *sdk.RequestError) {
	switch method {
	case sdk.ClientMethodSessionUpdate:
		var n sdk.SessionNotification
		if err := json.Unmarshal(params, &n); err != nil {
			s.log.Debug("unreadable session/update", "err", err)
			return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		s.update(n.Update)
		return nil, nil
	case sdk.ClientMethodSessionRequestPermission:
		return s.requestPermission(ctx, params)
	case sdk.ClientMethodElicitationCreate:
		return s.elicit(ctx, params)
	case sdk.ClientMethodElicitationComplete:
		var p struct {
			ElicitationID string `json:"elicitationId"`
		}
		_ = json.Unmarshal(params, &p)
		s.mu.Lock()
		w := s.urls[p.ElicitationID]
		s.mu.Unlock()
		if w != nil {
			w.complete()
		}
		return nil, nil
	case "cursor/ask_question", "_sandboxagent/session/request_question":
		return s.vendorQuestion(ctx, method, params)
	default:
		level := slog.LevelInfo
		if strings.HasPrefix(method, "_") { // extensions: often notifications to ignore
			level = slog.LevelDebug
		}
		s.log.Log(ctx, level, "the agent sent a method leashd does not offer", "method", method)
		return nil, sdk.NewMethodNotFound(method)
	}
}

// update shows a session/update: text streams to the chat, tool calls are
// counted (and named), a plan is shown as a checklist, a mode change noted.
func (s *session) update(u sdk.SessionUpdate) {
	s.mu.Lock()
	if s.replaying {
		s.mu.Unlock()
		return
	}
	h, stopped := s.h, s.stopped
	s.mu.Unlock()
	switch {
	case u.AgentMessageChunk != nil:
		// After /stop (session/cancel) the person wants nothing more of
		// this turn: text the agent still streams before the cancel lands
		// (Claude Code may answer its aborted tool first) is not shown.
		if t := u.AgentMessageChunk.Content.Text; t != nil && h != nil && !stopped {
			s.mu.Lock()
			s.text.WriteString(t.Text)
			s.mu.Unlock()
			h.Text(t.Text)
		}
	case u.ToolCall != nil:
		tc := u.ToolCall
		name := toolName(tc.Meta, string(tc.Kind), tc.Title, tc.RawInput)
		s.mu.Lock()
		s.tools[string(tc.ToolCallId)] = name
		s.mu.Unlock()
		if h != nil {
			h.ToolUse(name, rawJSON(tc.RawInput))
		}
	case u.Plan != nil:
		var b strings.Builder
		b.WriteString("Plan:")
		for _, e := range u.Plan.Entries {
			mark := "☐"
			switch e.Status {
			case sdk.PlanEntryStatusCompleted:
				mark = "☑"
			case sdk.PlanEntryStatusInProgress:
				mark = "▶"
			}
			b.WriteString("\n" + mark + " " + e.Content)
		}
		checklist := b.String()
		s.mu.Lock()
		same := checklist == s.plan
		s.plan = checklist
		s.mu.Unlock()
		if !same && h != nil {
			h.Text("\n\n" + checklist + "\n\n")
		}
	case u.CurrentModeUpdate != nil:
		s.mu.Lock()
		s.setCurrentLocked(string(u.CurrentModeUpdate.CurrentModeId))
		s.mu.Unlock()
		s.log.Debug("agent mode changed", "mode", u.CurrentModeUpdate.CurrentModeId)
	}
}

// toolName names a tool call as Claude Code would: the Claude adapter
// says it in _meta.claudeCode.toolName; otherwise the ACP kind stands in
// (execute with a command is Bash, edit with a path Edit, …).
func toolName(meta map[string]any, kind, title string, rawInput any) string {
	if cc, ok := meta["claudeCode"].(map[string]any); ok {
		if n, ok := cc["toolName"].(string); ok && n != "" {
			return n
		}
	}
	in, _ := rawInput.(map[string]any)
	has := func(k string) bool { _, ok := in[k].(string); return ok }
	switch kind {
	case "execute":
		if has("command") {
			return "Bash"
		}
	case "edit":
		if has("file_path") && has("old_string") {
			return "Edit"
		}
		if has("file_path") && has("content") {
			return "Write"
		}
	case "read":
		if has("file_path") {
			return "Read"
		}
	case "fetch":
		if has("url") {
			return "WebFetch"
		}
	case "switch_mode":
		if has("plan") {
			return agent.ToolExitPlanMode
		}
	}
	if n, ok := kindNames[kind]; ok {
		return n
	}
	if kind != "" && kind != "other" {
		return kind
	}
	if title != "" {
		return title
	}
	return "tool"
}

// kindNames name ACP tool kinds for people when the agent gives no tool
// name leashd knows.
var kindNames = map[string]string{
	"read": "Read", "edit": "Edit", "delete": "Delete", "move": "Move", "search": "Search",
	"execute": "Shell", "think": "Think", "fetch": "Fetch", "switch_mode": "Mode switch",
}

// requestPermission asks about a tool call with the agent's own options;
// the Claude adapter's ExitPlanMode is a plan review.
func (s *session) requestPermission(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	var p sdk.RequestPermissionRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	cancelled := sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}
	h := s.handler()
	if h == nil || len(p.Options) == 0 {
		return cancelled, nil // nobody to ask: no turn is running
	}
	req := s.permissionRequest(p)
	resp := h.Permission(ctx, req)
	if resp.NoAnswer && !resp.Allow {
		s.awaitStop()
	}
	return s.permissionOutcome(ctx, p, req, resp), nil
}

func (s *session) permissionRequest(p sdk.RequestPermissionRequest) agent.PermissionRequest {
	tc := p.ToolCall
	kind, title := "", ""
	if tc.Kind != nil {
		kind = string(*tc.Kind)
	}
	if tc.Title != nil {
		title = *tc.Title
	}
	s.mu.Lock()
	name := s.tools[string(tc.ToolCallId)]
	s.mu.Unlock()
	if n := toolName(tc.Meta, kind, title, tc.RawInput); name == "" || n != kind && n != title && n != "tool" {
		name = n
	}
	input := rawJSON(tc.RawInput)
	if tc.RawInput == nil {
		input = json.RawMessage("{}")
	}
	// A diff the agent shows with the call, when its raw input does not
	// already carry the change, is shown as an Edit.
	if name != "Edit" && name != "Write" && name != "MultiEdit" {
		for _, c := range tc.Content {
			if d := c.Diff; d != nil {
				old := ""
				if d.OldText != nil {
					old = *d.OldText
				}
				name = "Edit"
				input = rawJSON(map[string]string{"file_path": d.Path, "old_string": old, "new_string": d.NewText})
				break
			}
		}
	}
	var plan struct {
		Plan *string `json:"plan"`
	}
	_ = json.Unmarshal(input, &plan)
	if plan.Plan != nil && (name == agent.ToolExitPlanMode || slices.ContainsFunc(p.Options, func(o sdk.PermissionOption) bool {
		return strings.HasPrefix(string(o.OptionId), "exit-plan")
	})) {
		name = agent.ToolExitPlanMode
	}
	opts := make([]agent.PermissionOption, len(p.Options))
	for i, o := range p.Options {
		opts[i] = agent.PermissionOption{ID: string(o.OptionId), Name: o.Name, Kind: string(o.Kind)}
	}
	return agent.PermissionRequest{ToolName: name, Input: input, ToolUseID: string(tc.ToolCallId), Options: opts, Title: title}
}

// permissionOutcome turns the engine's decision into the agent's option.
func (s *session) permissionOutcome(ctx context.Context, p sdk.RequestPermissionRequest, req agent.PermissionRequest, resp agent.PermissionResponse) sdk.RequestPermissionResponse {
	selected := func(id string, meta map[string]any) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Meta: meta, Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(id)}}}
	}
	cancelled := sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}
	if req.ToolName == agent.ToolExitPlanMode && resp.OptionID == "" {
		resp.OptionID = s.planOption(ctx, req, resp)
	}
	if resp.OptionID == "" || resp.NoAnswer && !resp.Allow {
		return cancelled
	}
	var meta map[string]any
	if !resp.Allow {
		what := req.ToolName
		if req.Title != "" && req.Title != what {
			what += " (" + req.Title + ")"
		}
		switch {
		case resp.Reason != "" && req.ToolName == agent.ToolExitPlanMode:
			meta = map[string]any{"leashd": map[string]any{"reason": resp.Reason}}
			s.addFeedback("The user reviewed your plan and wants changes before you go on:\n" + resp.Reason)
		case resp.Reason != "":
			meta = map[string]any{"leashd": map[string]any{"reason": resp.Reason}}
			s.addFeedback("The user rejected your " + what + " call, saying: " + resp.Reason)
		case req.ToolName == agent.ToolExitPlanMode && resp.Message != "" && resp.Message != interactions.RejectedText:
			// leashd could not show the plan (e.g. it was empty): the agent
			// is told why, or it would only read "keep planning".
			meta = map[string]any{"leashd": map[string]any{"reason": resp.Message}}
			s.addFeedback("Your plan was not shown to the user: " + resp.Message)
		}
	}
	return selected(resp.OptionID, meta)
}

// planOption maps a plan review's decision onto the Claude adapter's
// ExitPlanMode options: approve with auto-accept edits, approve with
// manual edits, keep planning. A clean approval (fresh context) is the
// engine's to carry out — it stops this session and starts a new one with
// the plan — so the agent is told plain "approved".
func (s *session) planOption(ctx context.Context, req agent.PermissionRequest, resp agent.PermissionResponse) string {
	byID := func(ids ...string) string {
		for _, id := range ids {
			for _, o := range req.Options {
				if o.ID == id {
					return o.ID
				}
			}
		}
		return ""
	}
	firstKind := func(kinds ...string) string {
		for _, k := range kinds {
			for _, o := range req.Options {
				if o.Kind == k && !strings.Contains(strings.ToLower(o.Name), "clear") {
					return o.ID
				}
			}
		}
		return ""
	}
	if !resp.Allow {
		if resp.NoAnswer {
			return ""
		}
		return firstKind("reject_once", "reject_always")
	}
	mode := agent.ModeDefault
	for _, u := range resp.UpdatedPermissions {
		if u.Type == "setMode" {
			mode = u.Mode
		}
	}
	if mode == agent.ModeAcceptEdits {
		if id := byID("exit-plan-accept-edits"); id != "" {
			return id
		}
		for _, o := range req.Options {
			n := strings.ToLower(o.Name)
			if o.Allows() && strings.Contains(n, "accept") && !strings.Contains(n, "clear") {
				return o.ID
			}
		}
		// No such option: approve with manual edits, then — once the agent
		// has left plan mode for its default — switch to accept-edits.
		s.mu.Lock()
		from := s.current
		s.mu.Unlock()
		go func() {
			s.awaitModeChange(from, 10*time.Second)
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if err := s.SetMode(sctx, agent.ModeAcceptEdits); err != nil {
				s.log.Warn("switching to acceptEdits after the plan was approved", "err", err)
			}
		}()
	}
	if id := byID("exit-plan-default"); id != "" {
		return id
	}
	return firstKind("allow_once", "allow_always")
}
