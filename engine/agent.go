package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Mode is an agent permission mode, as Claude Code names them.
type Mode string

// Permission modes.
const (
	ModeDefault     Mode = "default"
	ModePlan        Mode = "plan"
	ModeAcceptEdits Mode = "acceptEdits"
	ModeBypass      Mode = "bypassPermissions"
)

// Agent starts agent sessions. Two backends implement it: the Claude Code
// CLI driver (engine/claude) and the built-in demo agent (engine/demo).
type Agent interface {
	// Name is "claude" or "demo": shown to people and in logs.
	Name() string
	// Open starts (or resumes, with ResumeID) a session. It may start a
	// process; the session lives until Close or until it dies.
	Open(ctx context.Context, opts SessionOptions) (Session, error)
}

// SessionRulesByEngine is implemented by agents that do not apply the
// "allow for the session" rules sent with an allow (PermissionResponse's
// addRules) themselves, such as the demo agent, and returns true: the
// engine then remembers those rules and allows matching calls without
// asking again. Every other agent — Claude Code keeps session rules and
// decides what they cover, asking about each part of a compound shell
// command — gets no engine-side matching at all, so the engine never
// approves a call that the agent put to a person.
type SessionRulesByEngine interface {
	SessionRulesByEngine() bool
}

// SessionOptions say how to open a session.
type SessionOptions struct {
	ChatID   string
	ResumeID string // the agent's session ID to resume; "" starts fresh
	Mode     Mode
	WorkDir  string
	Model    string
}

// Session is one live agent conversation (for Claude: one CLI process).
type Session interface {
	// Turn sends a prompt and blocks until the agent's final result,
	// streaming what it says and does to h and asking h for permissions.
	// Only one turn runs at a time. An error means the turn could not
	// finish (the process died, ctx ended); Result.IsError means the agent
	// itself reported an error.
	Turn(ctx context.Context, prompt string, h TurnHandler) (Result, error)
	// Interrupt stops the running turn; Turn then returns.
	Interrupt(ctx context.Context) error
	// SetMode changes the permission mode for the rest of the session.
	SetMode(ctx context.Context, m Mode) error
	// ID is the agent's session ID once known ("" before), for resuming.
	ID() string
	// Done is closed when the session has ended (closed or died).
	Done() <-chan struct{}
	// Close ends the session cleanly, forcibly once ctx is done.
	Close(ctx context.Context) error
}

// TurnHandler receives a turn's stream. Methods may be called from several
// goroutines; Permission calls may run concurrently and block for as long as
// a person takes.
type TurnHandler interface {
	// Text is assistant text, in order.
	Text(text string)
	// ToolUse reports that the agent used a tool.
	ToolUse(name string, input json.RawMessage)
	// Permission decides whether the agent may use a tool (including
	// AskUserQuestion and ExitPlanMode). ctx is cancelled if the agent
	// withdraws the request or the session ends.
	Permission(ctx context.Context, req PermissionRequest) PermissionResponse
}

// PermissionRequest is the agent asking to use a tool.
type PermissionRequest struct {
	ToolName    string
	Input       json.RawMessage // the tool's input object
	ToolUseID   string
	Suggestions json.RawMessage // the agent's permission_suggestions, if any
	// The agent's own word that a person must decide (Claude Code's
	// can_use_tool requires_user_interaction and matched_ask_rule): an
	// approval policy's allow rule then asks instead, and the mode does
	// not allow it without asking.
	RequiresUserInteraction bool
	MatchedAskRule          bool
}

// PermissionResponse is the decision on a PermissionRequest.
type PermissionResponse struct {
	Allow bool
	// UpdatedInput is required when allowing: the input to run the tool
	// with (the original input when unchanged).
	UpdatedInput       json.RawMessage
	UpdatedPermissions []PermissionUpdate
	// Message is the reason the agent reads when denied.
	Message string
	// Interrupt stops the turn along with the denial.
	Interrupt bool
}

// PermissionUpdate changes the session's permissions along with an allow.
// Destination is always "session": other destinations write settings files.
type PermissionUpdate struct {
	Type        string `json:"type"` // "addRules" or "setMode"
	Rules       []Rule `json:"rules,omitempty"`
	Behavior    string `json:"behavior,omitempty"` // "allow" for addRules
	Mode        Mode   `json:"mode,omitempty"`     // for setMode
	Destination string `json:"destination"`
}

// Rule is a permission rule such as Bash(npm test:*).
type Rule struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// Result is how a turn ended.
type Result struct {
	Text       string  `json:"result"`
	SessionID  string  `json:"session_id"`
	CostUSD    float64 `json:"total_cost_usd"`
	NumTurns   int     `json:"num_turns"`
	IsError    bool    `json:"is_error"`
	Subtype    string  `json:"subtype"` // e.g. success, error_during_execution
	DurationMS int64   `json:"duration_ms"`
	// UsageLimit is set when the account's usage limit stopped the turn.
	UsageLimit *UsageLimit `json:"-"`
}

// UsageLimit is an account usage limit that stopped a turn: nothing runs
// until ResetsAt.
type UsageLimit struct {
	ResetsAt time.Time
	Kind     string // the agent's name for it, e.g. five_hour, seven_day ("" if unknown)
}

// ErrSessionEnded is returned by a Session whose process has gone.
var ErrSessionEnded = errors.New("agent session ended")

// ErrAgentNotFound is returned by Open when the agent program is missing.
var ErrAgentNotFound = errors.New("agent program not found")
