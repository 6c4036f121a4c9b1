// Package agent is the contract between the engine and the agents it runs:
// an Agent opens Sessions, a Session runs turns and streams them to a
// TurnHandler, and asks the TurnHandler for permission to use tools. The
// drivers live in the folders below (claude, acp, demo); they import this
// package and nothing of the engine, so the engine can change how it shows a
// request to people without touching an agent, and an agent can change its
// wire format without touching the engine.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/leashd/leashd/interactions"
)

// Mode is an agent permission mode. The names are the ones most agents
// share; a driver maps them to its agent's own (ModeNamer).
type Mode string

// Permission modes.
const (
	ModeDefault     Mode = "default"
	ModePlan        Mode = "plan"
	ModeAcceptEdits Mode = "acceptEdits"
	ModeBypass      Mode = "bypassPermissions"
)

// Agent starts agent sessions. Each driver (engine/agent/claude, acp, demo)
// implements it and says who it is, so nothing outside the driver needs to
// know which agent runs.
type Agent interface {
	// Name is a short name for logs and metrics: "claude", "acp", "demo".
	Name() string
	// About is how the agent presents itself to people.
	About() About
	// Ready reports whether the agent can start sessions now (its program
	// is there and runnable); /readyz shows the error. It must be quick.
	Ready() error
	// Open starts (or resumes, with ResumeID) a session. It may start a
	// process; the session lives until Close or until it dies.
	Open(ctx context.Context, opts SessionOptions) (Session, error)
}

// About is what people are told about an agent: in /start, /status, /help
// and /login, and when it is missing or cannot log in.
type About struct {
	// Label names the agent in sentences ("I run <Label> for you").
	Label string
	// Title is a short name for headings, such as the web page's.
	Title string
	// InstallHint says how to install the agent when its program is missing.
	InstallHint string
	// LoginHelp answers /login: how to give the agent its credentials.
	LoginHelp string
	// NotLoggedIn is said after a turn that failed for want of credentials
	// (Result.AuthFailed).
	NotLoggedIn string
	// Help is extra help text for /help ("" for none).
	Help string
}

// SessionRulesByEngine is implemented by agents that do not apply the
// "allow for the session" rules sent with an allow (PermissionResponse's
// addRules) themselves, such as the demo agent, and returns true: the
// engine then remembers those rules and allows matching calls without
// asking again. Every other agent — one that keeps session rules and
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
	// MCPServers are given to the agent for the session (leashd's own,
	// with send_file).
	MCPServers []MCPServer
	// Notice, when set, receives what the agent reports outside a turn's
	// text, in or between turns (Notice); it must not block long.
	Notice func(Notice)
}

// Notice is something the agent reports that people should see and
// the audit log should keep.
type Notice struct {
	Kind string // NoticeDenied, NoticeWritesLost, NoticeReset or NoticeLost
	Text string // for people
}

// Notice kinds.
const (
	// NoticeDenied: the agent denied a tool call itself, asking nobody (a
	// deny rule, its mode, its classifier).
	NoticeDenied = "permission_denied"
	// NoticeWritesLost: the agent could not save its transcript or
	// settings (disk full); resuming may miss part of the conversation.
	NoticeWritesLost = "session_writes_lost"
	// NoticeReset: the agent discarded its conversation (its own /clear, a
	// plan approved with a fresh context); the chat's earlier messages are
	// no longer in its context.
	NoticeReset = "conversation_reset"
	// NoticeLost: the session ended between turns because leashd lost its
	// connection to the agent (the agent's process was ended); the next
	// prompt starts it again.
	NoticeLost = "session_lost"
)

// Session is one live agent conversation (often one agent process).
type Session interface {
	// Turn sends a prompt and blocks until the agent's final result,
	// streaming what it says and does to h and asking h for permissions.
	// Only one turn runs at a time. An error means the turn could not
	// finish (the process died, ctx ended); Result.IsError means the agent
	// itself reported an error.
	Turn(ctx context.Context, prompt Prompt, h TurnHandler) (Result, error)
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

// Prompt is what a person sends the agent in one turn: text and, when the
// person sent pictures, images. A driver whose agent takes no images gets
// none: the engine asks ImageTaker first and saves them as files instead.
type Prompt struct {
	Text   string
	Images []Image
}

// Text is a prompt of text only.
func Text(s string) Prompt { return Prompt{Text: s} }

// Image is a picture in a prompt: JPEG, PNG, GIF or WebP bytes, already
// made small enough for the model.
type Image struct {
	MediaType string // image/jpeg, image/png, image/gif or image/webp
	Data      []byte
}

// ImageTaker is implemented by sessions that can say whether their agent
// takes images in a prompt (an ACP agent tells at start-up); a session that
// does not implement it takes them.
type ImageTaker interface {
	TakesImages() bool
}

// MCPServer is an MCP server a session's agent is given besides its own:
// leashd's, with the send_file tool. Headers carry its credential.
type MCPServer struct {
	Name    string
	URL     string // streamable HTTP
	Headers map[string]string
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
	Suggestions []PermissionUpdate // the rules the agent suggests for "allow for this session", if any

	// What the agent says about the request, for the person deciding.
	Reason      string // why it asks, in the agent's words
	BlockedPath string // the path that made it ask, if any
	// MCPServer and MCPSource name the MCP server serving the tool and
	// where its definition came from (e.g. "user", "project", "plugin").
	MCPServer, MCPSource string
	// DefaultToNo: the request must not be approvable by one stray tap;
	// Deny comes first.
	DefaultToNo bool
	// NoSessionAllow: do not offer "allow for this session".
	NoSessionAllow bool
	// RequiresDetails: the person must see the whole request; no compact
	// one-tap approval.
	RequiresDetails bool
	// AskRule is the person's own rule (e.g. "Bash(rm:*)") that forced
	// this prompt: the request is never approved without a person, not by
	// a mode nor by a session rule.
	AskRule string
	// Options, when set, are the agent's own choices (ACP's permission
	// options): the person picks one of them by its name instead of
	// leashd's allow / allow_session / deny, and PermissionResponse.OptionID
	// says which. Typed text picks the first reject option, with the text
	// as the reason.
	Options []PermissionOption
	// Title is the agent's own title for the call, shown with it.
	Title string
	// PlanDir is where the agent keeps its plan files, set by a driver that
	// knows (its own agent's configuration): an ExitPlanMode whose plan is
	// only a planFilePath is read from a regular file inside it, never from
	// anywhere else. "" reads no file: the plan must come inline.
	PlanDir string
	// Ref is the agent's own ID for the request, set only by a session
	// that may outlive a restart of leashd (Adopter): after the restart
	// the same process asks again with the same Ref, and the engine
	// matches it to the interaction people already see.
	Ref string
}

// MustAsk reports whether the agent itself says a person must decide: no
// policy, mode or session rule may decide the request alone.
func (r PermissionRequest) MustAsk() bool { return r.RequiresDetails || r.AskRule != "" }

// PermissionOption is one of the agent's own choices for a permission.
type PermissionOption struct {
	ID   string
	Name string // shown as the option's label
	Kind string // allow_once, allow_always, reject_once or reject_always
}

// Allows reports whether choosing the option lets the call run.
func (o PermissionOption) Allows() bool { return strings.HasPrefix(o.Kind, "allow") }

// Decision classifications: how a person decided, for agents that record
// it. Empty when no person decided.
const (
	ClassUserTemporary = "user_temporary" // allowed once
	ClassUserPermanent = "user_permanent" // allowed by a rule a person made ("allow for this session")
	ClassUserReject    = "user_reject"    // denied by a person
)

// ErrRequestWithdrawn is the cause a Session cancels a Permission's
// context with when the agent withdrew the request: the person's buttons
// are taken away with interactions.WithdrawnText.
var ErrRequestWithdrawn = interactions.ErrWithdrawn

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
	// Classification says how a person decided (ClassUser…); empty when
	// no person did (a mode, a timeout, a cancellation).
	Classification string
	// OptionID is the agent's option chosen (PermissionRequest.Options);
	// "" when nobody chose one (expired, cancelled).
	OptionID string
	// NoAnswer: nobody decided (the request expired, was cancelled or
	// leashd is stopping); a denial without it is a person's.
	NoAnswer bool
	// StopFollows: the request was cancelled because the turn is being
	// stopped (/stop, /clear): an Interrupt or Close of the session
	// follows. A driver whose agent must read the stop before this answer
	// waits for it, however busy the machine.
	StopFollows bool
	// Reason is the person's own words with a denial (a rejection's
	// reason, plan feedback); "" when they gave none.
	Reason string
}

// PermissionUpdate changes the session's permissions along with an allow.
// Drivers apply them to the session only: an agent's other destinations
// write settings files on the machine.
type PermissionUpdate struct {
	Type        string // "addRules" or "setMode"
	Rules       []Rule
	Behavior    string // "allow" for addRules
	Mode        Mode   // for setMode
	Destination string
}

// Rule is a permission rule such as Bash(npm test:*).
type Rule struct {
	ToolName    string
	RuleContent string
}

// Result is how a turn ended.
type Result struct {
	Text      string
	SessionID string
	CostUSD   float64
	// InputTokens and OutputTokens are the turn's tokens as the agent
	// reports them (input counts cached prompt tokens too); 0 when it
	// reports none.
	InputTokens, OutputTokens int64
	NumTurns                  int
	IsError                   bool
	Subtype                   string // e.g. success, error_during_execution
	DurationMS                int64
	// AuthFailed: the agent could not use its model because it has no
	// valid credentials (not logged in, or its API key was refused). The
	// engine then says how to log it in (About.NotLoggedIn).
	AuthFailed bool
	// UsageLimit is set when the account's usage limit stopped the turn.
	UsageLimit *UsageLimit
}

// UsageLimit is an account usage limit that stopped a turn: nothing runs
// until ResetsAt.
type UsageLimit struct {
	ResetsAt time.Time
	Kind     string // the agent's name for it, e.g. five_hour, seven_day ("" if unknown)
}

// ErrSessionEnded is returned by a Session whose process has gone.
var ErrSessionEnded = errors.New("agent session ended")

// ModeNamer is implemented by sessions whose agent has modes of its own
// (ACP): ModeName is the agent's name for m, "" when it has none.
type ModeNamer interface {
	ModeName(m Mode) string
}

// ErrModeUnsupported is returned (wrapped, naming the agent's modes) by
// Session.SetMode when the agent has no such mode.
var ErrModeUnsupported = errors.New("the agent has no such mode")

// ErrAgentNotFound is returned by Open when the agent program is missing.
var ErrAgentNotFound = errors.New("agent program not found")

// ErrDetached is returned by a turn whose session was let go of at
// shutdown (Detacher): its agent runs on, for the next run to adopt.
var ErrDetached = errors.New("the agent was let go of at shutdown and runs on, for the next leashd to adopt")

// Adopter is an Agent whose sessions may outlive a restart of leashd: their
// processes run on runners, which keep them while leashd is away.
type Adopter interface {
	// Adopt takes over the session an earlier run of leashd let go of for
	// opts.ChatID: the same process, without a new handshake. It reads
	// nothing until its first Turn or Continue. The error wraps
	// sandbox.ErrNotHeld when nothing is held for the chat.
	Adopt(ctx context.Context, opts SessionOptions) (Session, error)
}

// Detacher is a Session that can be let go of at shutdown (Detach reports
// false when it cannot, e.g. a local process): from then on nothing more
// is written to its agent — not the answers of requests the shutdown
// interrupts — and Close leaves the process running instead of ending
// it; what it writes is held for the next run of leashd.
type Detacher interface {
	Detach() bool
}

// Continuer is an adopted Session whose agent was in a turn when the last
// run of leashd let it go: Continue is that turn, from where that run
// left it (its pending requests are asked again), sending no prompt.
type Continuer interface {
	Continue(ctx context.Context, h TurnHandler) (Result, error)
}

// ErrNoRoom is wrapped by an Open that found no room for the chat's agent
// now (its runner is full or away): the engine keeps the prompt and tries
// again when a slot frees or a runner connects.
var ErrNoRoom = errors.New("no room for the agent now")
