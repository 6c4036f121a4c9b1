package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/leashd/leashd/engine"
)

// Message types the CLI prints on stdout (stream-json, one JSON object a
// line).
const (
	typeControlRequest  = "control_request"
	typeControlResponse = "control_response"
	typeControlCancel   = "control_cancel_request"
	typeSystem          = "system"
	typeAssistant       = "assistant"
	typeUser            = "user"
	typeResult          = "result"
	typeStreamEvent     = "stream_event" // with --include-partial-messages
)

// Control request subtypes.
const (
	subtypeInitialize   = "initialize"
	subtypeCanUseTool   = "can_use_tool"
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
	DurationMS int64   `json:"duration_ms"`
}

// controlRequest is the body of a control_request from the CLI.
type controlRequest struct {
	Subtype     string          `json:"subtype"`
	ToolName    string          `json:"tool_name"`
	Input       json.RawMessage `json:"input"`
	ToolUseID   string          `json:"tool_use_id"`
	Suggestions json.RawMessage `json:"permission_suggestions"`
	// Newer CLIs: a person must decide (no policy allow); matched_ask_rule
	// is an object naming the ask rule.
	RequiresUserInteraction bool            `json:"requires_user_interaction"`
	MatchedAskRule          json.RawMessage `json:"matched_ask_rule"`
}

// controlResponse is the body of a control_response from the CLI.
type controlResponse struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response"`
	Error     string          `json:"error"`
}

// assistantMessage is the message of an assistant line.
type assistantMessage struct {
	Content []contentBlock `json:"content"`
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
func (l *line) result() engine.Result {
	return engine.Result{
		Text:       l.Result,
		SessionID:  l.SessionID,
		CostUSD:    l.CostUSD,
		NumTurns:   l.NumTurns,
		IsError:    l.IsError,
		Subtype:    l.Subtype,
		DurationMS: l.DurationMS,
	}
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
	Content string `json:"content"`
}

type permissionAllowBody struct {
	Behavior           string                    `json:"behavior"`
	UpdatedInput       json.RawMessage           `json:"updatedInput"`
	UpdatedPermissions []engine.PermissionUpdate `json:"updatedPermissions,omitempty"`
}

type permissionDenyBody struct {
	Behavior  string `json:"behavior"`
	Message   string `json:"message"`
	Interrupt bool   `json:"interrupt"`
}

// permissionBody renders a decision as the CLI expects it. An allow without
// UpdatedInput sends the original input (the CLI denies an allow without
// one); a deny without a message says so (the model needs a reason).
func permissionBody(req controlRequest, resp engine.PermissionResponse) any {
	if resp.Allow {
		in := resp.UpdatedInput
		if len(bytes.TrimSpace(in)) == 0 {
			in = req.Input
		}
		if len(bytes.TrimSpace(in)) == 0 {
			in = json.RawMessage("{}")
		}
		var ups []engine.PermissionUpdate
		for _, u := range resp.UpdatedPermissions {
			u.Destination = "session" // other destinations write settings files
			ups = append(ups, u)
		}
		return permissionAllowBody{Behavior: permissionAllow, UpdatedInput: in, UpdatedPermissions: ups}
	}
	msg := resp.Message
	if msg == "" {
		msg = "The user denied this request."
	}
	return permissionDenyBody{Behavior: permissionDeny, Message: msg, Interrupt: resp.Interrupt}
}
