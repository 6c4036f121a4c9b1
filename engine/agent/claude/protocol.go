package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/leashd/leashd/engine/agent"
)

// Message types the CLI prints on stdout (stream-json, one JSON object a
// line).
const (
	typeControlRequest    = "control_request"
	typeControlResponse   = "control_response"
	typeControlCancel     = "control_cancel_request"
	typeSystem            = "system"
	typeAssistant         = "assistant"
	typeUser              = "user"
	typeResult            = "result"
	typeStreamEvent       = "stream_event" // with --include-partial-messages
	typeConversationReset = "conversation_reset"
)

// System subtypes leashd acts on besides init.
const (
	subtypeStateChanged     = "session_state_changed" // with CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS
	subtypePermissionDenied = "permission_denied"
	subtypeWritesLost       = "session_writes_lost"
	stateIdle               = "idle"
)

// systemLine is the body of the system messages leashd reads besides
// init, and of conversation_reset.
type systemLine struct {
	State          string   `json:"state"` // session_state_changed
	ToolName       string   `json:"tool_name"`
	DecisionReason string   `json:"decision_reason"`
	Message        string   `json:"message"` // permission_denied: what the model reads
	ErrorCode      string   `json:"error_code"`
	Lost           []string `json:"lost"`
	Trigger        string   `json:"trigger"` // conversation_reset
}

// notice renders a permission_denied, session_writes_lost or
// conversation_reset line for people; ok is false for other lines.
func (sl systemLine) notice(typ, subtype string) (agent.Notice, bool) {
	switch {
	case typ == typeConversationReset:
		why := map[string]string{
			"clear": "after /clear", "plan_mode_exit": "a plan was approved with a fresh context",
			"fresh_session": "a fresh session started", "onboarding": "onboarding ran again",
		}[sl.Trigger]
		text := "The agent started a fresh conversation"
		if why != "" {
			text += " (" + why + ")"
		}
		return agent.Notice{Kind: agent.NoticeReset, Text: text + ": it no longer remembers the messages above."}, true
	case typ == typeSystem && subtype == subtypePermissionDenied:
		tool := sl.ToolName
		if tool == "" {
			tool = "a tool"
		}
		text := "Claude Code denied " + tool + " without asking"
		for _, s := range []string{sl.DecisionReason, sl.Message} {
			if s != "" && !strings.Contains(text, s) {
				text += ": " + s
			}
		}
		return agent.Notice{Kind: agent.NoticeDenied, Text: text}, true
	case typ == typeSystem && subtype == subtypeWritesLost:
		what := map[string]string{"transcript": "the session transcript", "global_config": "its settings (~/.claude.json)"}
		var lost []string
		for _, l := range sl.Lost {
			if w, ok := what[l]; ok {
				lost = append(lost, w)
			} else {
				lost = append(lost, l)
			}
		}
		if len(lost) == 0 {
			lost = []string{"its files"}
		}
		why := map[string]string{"ENOSPC": "the disk is full", "EDQUOT": "the disk quota is used up"}[sl.ErrorCode]
		if why == "" {
			why = "error " + sl.ErrorCode
		}
		return agent.Notice{Kind: agent.NoticeWritesLost, Text: "Claude Code could not save " + strings.Join(lost, " and ") +
			" (" + why + "); resuming this session may miss part of the conversation."}, true
	}
	return agent.Notice{}, false
}

// Control request subtypes.
const (
	subtypeInitialize   = "initialize"
	subtypeCanUseTool   = "can_use_tool"
	subtypeElicitation  = "elicitation"
	subtypeUserDialog   = "request_user_dialog"
	subtypeInterrupt    = "interrupt"
	subtypeSetMode      = "set_permission_mode"
	subtypeSuccess      = "success"
	subtypeError        = "error"
	subtypeInit         = "init"
	permissionAllow     = "allow"
	permissionDeny      = "deny"
	errUnsupportedReply = "unsupported"
)

// line is one message the CLI printed. Only the fields leashd uses are
// decoded; the rest stays in the raw line.
type line struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	// control_request and control_cancel_request
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	// control_response
	Response json.RawMessage `json:"response"`
	// assistant and user
	Message json.RawMessage `json:"message"`
	// stream_event
	Event           json.RawMessage `json:"event"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	// result
	Result     string  `json:"result"`
	IsError    bool    `json:"is_error"`
	CostUSD    float64 `json:"total_cost_usd"`
	NumTurns   int     `json:"num_turns"`
	Usage      *usage  `json:"usage"`
	DurationMS int64   `json:"duration_ms"`
	// APIErrorStatus is the HTTP status of the API error that ended the
	// turn (401: the API key was refused), or null. Kept raw: only 401
	// matters, and an unexpected shape must not lose the result.
	APIErrorStatus json.RawMessage `json:"api_error_status"`
}

// controlRequest is the body of a control_request from the CLI.
type controlRequest struct {
	Subtype     string          `json:"subtype"`
	ToolName    string          `json:"tool_name"`
	Input       json.RawMessage `json:"input"`
	ToolUseID   string          `json:"tool_use_id"`
	Suggestions json.RawMessage `json:"permission_suggestions"`
	// Newer CLIs say more about a can_use_tool (all optional).
	DecisionReason          string          `json:"decision_reason"`
	BlockedPath             string          `json:"blocked_path"`
	MCPServer               json.RawMessage `json:"mcp_server"`       // {name, source}
	MatchedAskRule          json.RawMessage `json:"matched_ask_rule"` // {source, tool_name, rule_content}
	RequiresUserInteraction bool            `json:"requires_user_interaction"`
	SuppressAlwaysAllowRule bool            `json:"suppress_always_allow_rule"`
	DefaultToNo             bool            `json:"default_to_no"`
	// elicitation (an MCP server asking the person)
	MCPServerName   string          `json:"mcp_server_name"`
	Message         string          `json:"message"`
	Mode            string          `json:"mode"` // form (default) or url
	URL             string          `json:"url"`
	RequestedSchema json.RawMessage `json:"requested_schema"`
	PropertyOrder   []string        `json:"property_order"`
}

// elicitationRequest converts an elicitation for the engine.
func (r controlRequest) elicitationRequest() agent.ElicitationRequest {
	er := agent.ElicitationRequest{Server: r.MCPServerName, Message: r.Message, Schema: r.RequestedSchema, PropertyOrder: r.PropertyOrder}
	if r.Mode == "url" {
		er.URL = r.URL
		if er.URL == "" {
			er.URL = "(the server sent no link)"
		}
	}
	return er
}

// elicitationBody is the answer to an elicitation.
type elicitationBody struct {
	Action  string         `json:"action"` // accept, decline or cancel
	Content map[string]any `json:"content,omitempty"`
}

// permissionRequest converts a can_use_tool for the engine. The optional
// objects are read leniently: a matched_ask_rule of another shape still
// marks the request as forced by the person's rule.
func (r controlRequest) permissionRequest() agent.PermissionRequest {
	pr := agent.PermissionRequest{
		ToolName: r.ToolName, Input: r.Input, ToolUseID: r.ToolUseID, Suggestions: suggestions(r.Suggestions),
		Reason: r.DecisionReason, BlockedPath: r.BlockedPath,
		DefaultToNo: r.DefaultToNo, NoSessionAllow: r.SuppressAlwaysAllowRule, RequiresDetails: r.RequiresUserInteraction,
	}
	var srv struct {
		Name   string `json:"name"`
		Source string `json:"source"`
	}
	if isObject(r.MCPServer) && json.Unmarshal(r.MCPServer, &srv) == nil {
		pr.MCPServer, pr.MCPSource = srv.Name, srv.Source
	}
	if raw := bytes.TrimSpace(r.MatchedAskRule); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		var rule struct {
			Source      string `json:"source"`
			ToolName    string `json:"tool_name"`
			RuleContent string `json:"rule_content"`
		}
		pr.AskRule = "(unreadable rule)"
		if json.Unmarshal(raw, &rule) == nil && rule.ToolName != "" {
			pr.AskRule = rule.ToolName
			if rule.RuleContent != "" {
				pr.AskRule += "(" + rule.RuleContent + ")"
			}
			if rule.Source != "" {
				pr.AskRule += " from " + rule.Source
			}
		}
	}
	return pr
}

// controlResponse is the body of a control_response from the CLI.
type controlResponse struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response"`
	Error     string          `json:"error"`
}

type contentBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`
	ID    string          `json:"id"`
	Input json.RawMessage `json:"input"`
}

// maxQuoted bounds how much of a bad line an error quotes.
const maxQuoted = 200

// parseLine decodes one stdout line. Blank lines give (nil, nil). A line
// that is not a JSON object with a "type", or whose known parts have the
// wrong shape, gives an error that quotes the start of the line.
func parseLine(b []byte) (*line, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("not a JSON object (stream-json lines start with '{'): %s", quote(b))
	}
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("invalid JSON (%v): %s", err, quote(b))
	}
	if l.Type == "" {
		return nil, fmt.Errorf(`JSON object without a "type" field: %s`, quote(b))
	}
	switch l.Type {
	case typeControlRequest:
		if l.RequestID == "" {
			return nil, fmt.Errorf(`control_request without "request_id": %s`, quote(b))
		}
		if !isObject(l.Request) {
			return nil, fmt.Errorf(`control_request without a "request" object: %s`, quote(b))
		}
	case typeControlResponse:
		if !isObject(l.Response) {
			return nil, fmt.Errorf(`control_response without a "response" object: %s`, quote(b))
		}
	case typeControlCancel:
		if l.RequestID == "" {
			return nil, fmt.Errorf(`control_cancel_request without "request_id": %s`, quote(b))
		}
	}
	return &l, nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// quote renders the start of a bad line for a log message.
func quote(b []byte) string {
	if len(b) <= maxQuoted {
		return fmt.Sprintf("%q", b)
	}
	cut := b[:maxQuoted]
	for len(cut) > 0 && !utf8.Valid(cut) {
		cut = cut[:len(cut)-1]
	}
	return fmt.Sprintf("%q… (%d bytes)", cut, len(b))
}

// request decodes a control_request's body.
func (l *line) request() (controlRequest, error) {
	var r controlRequest
	err := json.Unmarshal(l.Request, &r)
	return r, err
}

// response decodes a control_response's body.
func (l *line) response() (controlResponse, error) {
	var r controlResponse
	err := json.Unmarshal(l.Response, &r)
	return r, err
}

// blocks decodes an assistant message's ID and content blocks. A message
// whose content is a string gives one text block.
func (l *line) blocks() (string, []contentBlock, error) {
	if len(l.Message) == 0 {
		return "", nil, errors.New(`assistant line without "message"`)
	}
	var m struct {
		ID      string      `json:"id"`
		Content contentList `json:"content"`
	}
	if err := json.Unmarshal(l.Message, &m); err != nil {
		return "", nil, err
	}
	return m.ID, m.Content, nil
}

// streamEvent is the API stream event a stream_event line carries.
type streamEvent struct {
	Type    string `json:"type"`
	Message struct {
		ID string `json:"id"`
	} `json:"message"`
	Delta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
}

func (l *line) streamEvent() (streamEvent, error) {
	var e streamEvent
	err := json.Unmarshal(l.Event, &e)
	return e, err
}

// contentList is message content: a list of blocks, or a string (one text
// block). Decoding it in place keeps a huge message to one pass.
type contentList []contentBlock

func (c *contentList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*c = nil
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = contentList{{Type: "text", Text: s}}
		return nil
	}
	var bs []contentBlock
	if err := json.Unmarshal(b, &bs); err != nil {
		return err
	}
	*c = bs
	return nil
}

// result converts a result line.
func (l *line) result() agent.Result {
	return agent.Result{
		Text:        l.Result,
		SessionID:   l.SessionID,
		CostUSD:     l.CostUSD,
		NumTurns:    l.NumTurns,
		InputTokens: l.Usage.input(), OutputTokens: l.Usage.output(),
		IsError:    l.IsError,
		Subtype:    l.Subtype,
		DurationMS: l.DurationMS,
		AuthFailed: l.authFailed(),
	}
}

// authFailed recognises a result the CLI gave for want of credentials:
// "Not logged in · Please run /login" (no API key, never logged in; no API
// call was made) or "Invalid API key · …" after a 401 (both CLI 2.1.197
// and 2.1.332).
func (l *line) authFailed() bool {
	return l.IsError && (string(bytes.TrimSpace(l.APIErrorStatus)) == "401" || strings.Contains(l.Result, "Please run /login"))
}

// Messages leashd writes to the CLI's stdin.

type outControlRequest struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Request   any    `json:"request"`
}

type outControlResponse struct {
	Type     string `json:"type"`
	Response any    `json:"response"`
}

type outSuccess struct {
	Subtype   string `json:"subtype"`
	RequestID string `json:"request_id"`
	Response  any    `json:"response"`
}

type outError struct {
	Subtype   string `json:"subtype"`
	RequestID string `json:"request_id"`
	Error     string `json:"error"`
}

type outUser struct {
	Type            string     `json:"type"`
	Message         outMessage `json:"message"`
	ParentToolUseID *string    `json:"parent_tool_use_id"`
	SessionID       string     `json:"session_id"`
}

type outMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // text, or blocks with images (userContent)
}

type permissionAllowBody struct {
	Behavior           string             `json:"behavior"`
	UpdatedInput       json.RawMessage    `json:"updatedInput"`
	UpdatedPermissions []permissionUpdate `json:"updatedPermissions,omitempty"`
	// DecisionClassification says how a person decided (user_temporary,
	// user_permanent); the CLI (2.1.197 and later) infers it when absent.
	DecisionClassification string `json:"decisionClassification,omitempty"`
}

type permissionDenyBody struct {
	Behavior               string `json:"behavior"`
	Message                string `json:"message"`
	Interrupt              bool   `json:"interrupt"`
	DecisionClassification string `json:"decisionClassification,omitempty"` // user_reject
}

// permissionBody renders a decision as the CLI expects it. An allow without
// UpdatedInput sends the original input (the CLI denies an allow without
// one); a deny without a message says so (the model needs a reason).
func permissionBody(req controlRequest, resp agent.PermissionResponse) any {
	if resp.Allow {
		in := resp.UpdatedInput
		if len(bytes.TrimSpace(in)) == 0 {
			in = req.Input
		}
		if len(bytes.TrimSpace(in)) == 0 {
			in = json.RawMessage("{}")
		}
		var ups []permissionUpdate
		for _, u := range resp.UpdatedPermissions {
			ups = append(ups, wirePermissionUpdate(u))
		}
		return permissionAllowBody{Behavior: permissionAllow, UpdatedInput: in, UpdatedPermissions: ups, DecisionClassification: classification(resp.Classification)}
	}
	msg := resp.Message
	if msg == "" {
		msg = "The user denied this request."
	}
	return permissionDenyBody{Behavior: permissionDeny, Message: msg, Interrupt: resp.Interrupt, DecisionClassification: classification(resp.Classification)}
}

// classification passes on only the values the CLI accepts: it rejects a
// response with any other.
func classification(c string) string {
	switch c {
	case agent.ClassUserTemporary, agent.ClassUserPermanent, agent.ClassUserReject:
		return c
	}
	return ""
}

// permissionUpdate is agent.PermissionUpdate as the CLI reads it.
type permissionUpdate struct {
	Type        string       `json:"type"` // "addRules" or "setMode"
	Rules       []ruleOnWire `json:"rules,omitempty"`
	Behavior    string       `json:"behavior,omitempty"` // "allow" for addRules
	Mode        agent.Mode   `json:"mode,omitempty"`     // for setMode
	Destination string       `json:"destination"`
}

// ruleOnWire is agent.Rule as the CLI reads it.
type ruleOnWire struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// wirePermissionUpdate always sends destination "session": other
// destinations write settings files on the machine.
func wirePermissionUpdate(u agent.PermissionUpdate) permissionUpdate {
	w := permissionUpdate{Type: u.Type, Behavior: u.Behavior, Mode: u.Mode, Destination: "session"}
	for _, r := range u.Rules {
		w.Rules = append(w.Rules, ruleOnWire(r))
	}
	return w
}

// suggestions reads permission_suggestions; a list of another shape is
// left out (the engine then suggests its own rule).
func suggestions(raw json.RawMessage) []agent.PermissionUpdate {
	var wire []permissionUpdate
	if len(raw) == 0 || json.Unmarshal(raw, &wire) != nil {
		return nil
	}
	out := make([]agent.PermissionUpdate, 0, len(wire))
	for _, w := range wire {
		u := agent.PermissionUpdate{Type: w.Type, Behavior: w.Behavior, Mode: w.Mode, Destination: w.Destination}
		for _, r := range w.Rules {
			u.Rules = append(u.Rules, agent.Rule(r))
		}
		out = append(out, u)
	}
	return out
}
