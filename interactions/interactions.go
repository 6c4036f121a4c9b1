// Package interactions holds the moments when an agent needs a human — a
// question, a plan review, a tool approval — and the Coordinator that shows
// them through a Presenter, waits for a tap or typed text, and hands the
// answer back.
//
// It knows nothing of chat apps or of any particular agent: chats are opaque
// string IDs and answers are option labels or text.
package interactions

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Kind is what an interaction asks for.
type Kind string

// The kinds of interaction.
const (
	KindQuestion     Kind = "question"
	KindPlanReview   Kind = "plan_review"
	KindToolApproval Kind = "tool_approval"
)

// Status is how an interaction ended.
type Status string

// The ways an interaction ends. Allow-like outcomes are answered, deny-like
// ones (deny, adjust, reject) rejected.
const (
	StatusAnswered    Status = "answered"
	StatusRejected    Status = "rejected"
	StatusExpired     Status = "expired"
	StatusCancelled   Status = "cancelled"
	StatusInterrupted Status = "interrupted" // leashd stopped while it was pending
)

// Plan review decisions.
const (
	DecisionCleanEdit = "clean_edit" // approve, clear context, auto-accept edits
	DecisionEdit      = "edit"       // approve, auto-accept edits
	DecisionDefault   = "default"    // approve, approve edits manually
	DecisionAdjust    = "adjust"     // deny with feedback; stays in plan mode
)

// Tool approval decisions.
const (
	DecisionAllow        = "allow"
	DecisionAllowSession = "allow_session"
	DecisionDeny         = "deny"
)

// RejectedText is a rejection's text when the person gave no reason.
const RejectedText = "The user rejected this request."

// DecisionReject is recorded when a person rejects an interaction outright
// (a question declined, /reject, Ctrl+C in the terminal).
const DecisionReject = "reject"

// PlanOptions are the options of every plan review, in display order.
// The first is recommended (RecommendedPlanOption), as agents offer it
// first: a fresh context keeps the agent on the plan.
var PlanOptions = []Choice{
	{Label: DecisionCleanEdit, Description: "Starts afresh with only the plan; edits files without asking"},
	{Label: DecisionEdit, Description: "Keeps its context; edits files without asking"},
	{Label: DecisionDefault, Description: "Keeps its context; asks you before each file edit"},
	{Label: DecisionAdjust, Description: "Not yet: type what should change and it keeps planning"},
}

// RecommendedPlanOption is the plan decision connectors mark as
// recommended.
const RecommendedPlanOption = DecisionCleanEdit

// ToolOptions are the options of every tool approval, in display order.
var ToolOptions = []Choice{
	{Label: DecisionAllow, Description: "Allow this call", Style: StyleApprove},
	{Label: DecisionAllowSession, Description: "Allow this and similar calls for the rest of the session", Style: StyleApprove},
	{Label: DecisionDeny, Description: "Deny; typed text is sent as the reason", Style: StyleDeny},
}

// ToolOptionsFor are the options of a tool approval in display order: the
// agent's own options when it offered them (OwnOptions), else ToolOptions
// without DecisionAllowSession when it.NoSessionAllow, with DecisionDeny
// first when it.DefaultToNo.
func ToolOptionsFor(it Interaction) []Choice {
	if it.OwnOptions() {
		return slices.Clone(it.Options)
	}
	return toolOptions(it.NoSessionAllow, it.DefaultToNo)
}

// OwnOptions reports whether it is a tool approval asked with the agent's
// own options (an ACP agent's permission request) rather than leashd's
// allow, allow_session and deny: each is an approve (StyleApprove) or a
// refusal (StyleDeny), and the answer is the chosen option's label.
func (it Interaction) OwnOptions() bool {
	if it.Kind != KindToolApproval || len(it.Options) == 0 {
		return false
	}
	for _, o := range it.Options {
		if !hasOption(ToolOptions, o.Label) {
			return true
		}
	}
	return false
}

// Styled reports whether its options say which approves and which refuses
// (Choice.Style): connectors show it as an approval — approve and deny
// buttons, no "Other" answer and no separate Decline.
func (it Interaction) Styled() bool {
	return slices.ContainsFunc(it.Options, func(o Choice) bool { return o.Style != "" })
}

// StyleOf is the style of its option label ("" for none or no such option).
func (it Interaction) StyleOf(label string) Style {
	if i := slices.IndexFunc(it.Options, func(o Choice) bool { return o.Label == label }); i >= 0 {
		return it.Options[i].Style
	}
	return ""
}

// Refusal reports whether res refuses what was asked: a tool approval
// denied, a plan rejected, or a styled question (a yes/no approval)
// answered with its StyleDeny option or declined. Connectors show it as
// "Denied" in red.
func Refusal(it Interaction, res Resolution) bool {
	switch res.Status {
	case StatusRejected:
		return true
	case StatusAnswered:
		if it.IsYesNo() && it.Options[0].Style == StyleApprove { // its second option, or a reason typed
			return res.Answer != it.Options[0].Label
		}
		return it.Kind == KindQuestion && it.StyleOf(res.Answer) == StyleDeny
	}
	return false
}

// ActionAndDetails splits an approval's question into the action (its
// first line, shown in bold) and the details beneath it (the rest, "" when
// there is none), so that every connector shows them alike.
func ActionAndDetails(question string) (action, details string) {
	action, details, _ = strings.Cut(strings.TrimSpace(question), "\n")
	return strings.TrimSpace(action), strings.TrimSpace(details)
}

func toolOptions(noSessionAllow, defaultToNo bool) []Choice {
	opts := make([]Choice, 0, len(ToolOptions))
	for _, o := range ToolOptions {
		if !(noSessionAllow && o.Label == DecisionAllowSession) {
			opts = append(opts, o)
		}
	}
	if defaultToNo { // Deny first
		if i := slices.IndexFunc(opts, isDeny); i > 0 {
			deny := opts[i]
			copy(opts[1:i+1], opts[:i])
			opts[0] = deny
		}
	}
	return opts
}

func isDeny(o Choice) bool { return o.Label == DecisionDeny }

// Choice is one option offered to the person: a button, or an entry of a
// list.
type Choice struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	// Style says how connectors show it; "" is a plain option.
	Style Style `json:"style,omitempty"`
}

// Style is how an option is shown, so that a person sees at a glance which
// button lets something happen and which one refuses or destroys.
type Style string

// Styles of an option.
const (
	// StyleApprove lets the agent or program go ahead (green).
	StyleApprove Style = "approve"
	// StyleDeny refuses (red); once chosen it is shown as "Denied".
	StyleDeny Style = "deny"
	// StyleDestructive goes ahead with something that cannot be undone,
	// such as /discard's Discard (red).
	StyleDestructive Style = "destructive"
)

// Question is one question of an AskUserQuestion-style request.
type Question struct {
	Header      string   `json:"header,omitempty"`
	Question    string   `json:"question"`
	Options     []Choice `json:"options,omitempty"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
}

// Interaction is one pending request for a human. Fields not used by a kind
// are zero.
type Interaction struct {
	ID     string `json:"interaction_id"`
	ChatID string `json:"chat_id"`
	Kind   Kind   `json:"kind"`

	// Question fields; Options is also filled for plan reviews and tool
	// approvals with their decisions (PlanOptions, ToolOptions), or for a
	// tool approval with the agent's own options (OwnOptions), which the
	// asker gives.
	Header      string   `json:"header,omitempty"`
	Question    string   `json:"question,omitempty"`
	Options     []Choice `json:"options"`
	MultiSelect bool     `json:"multi_select"`
	Index       int      `json:"index,omitempty"` // 1-based position among Total questions
	Total       int      `json:"total,omitempty"`
	// Approval marks a two-option request made through RequestInput: the
	// first option approves, the second rejects (a yes/no, not a list).
	Approval bool `json:"approval,omitempty"`

	// Plan review.
	Plan string `json:"plan,omitempty"`

	// Tool approval.
	ToolName    string          `json:"tool_name,omitempty"`
	ToolInput   json.RawMessage `json:"tool_input,omitempty"`
	ToolSummary string          `json:"tool_summary,omitempty"` // readable: the command, or path and diff excerpt
	// Diff is the change a file tool would make, as a unified diff
	// ("--- a/path", "+++ b/path", "@@ … @@" hunks), set by whoever knows
	// the file's current content; "" when there is none to show.
	Diff string `json:"diff,omitempty"`
	// What the agent says about the request, shown with it: why it asks
	// (one or more lines), and the MCP server that serves the tool
	// ("name (source)").
	Reason    string `json:"reason,omitempty"`
	MCPServer string `json:"mcp_server,omitempty"`
	// DefaultToNo puts Deny first: the request must not be approvable by
	// one stray tap or key, so nothing pre-selects an approval.
	DefaultToNo bool `json:"default_to_no,omitempty"`
	// NoSessionAllow leaves DecisionAllowSession out of the options: the
	// agent would not keep such a rule, or it would allow more than this
	// request.
	NoSessionAllow bool `json:"no_session_allow,omitempty"`
	// RequiresDetails asks connectors to show the whole request before
	// its options (no compact one-tap approval).
	RequiresDetails bool `json:"requires_details,omitempty"`

	// ForApprovers marks a question that decides what a program may do
	// (its approval, set by the engine for every program's yes/no
	// approval): like a plan review or a tool approval, only approvers
	// answer it (Decides). An agent's permission with its own options is a
	// tool approval (OwnOptions).
	ForApprovers bool `json:"for_approvers,omitempty"`

	// Asker names who asked when it was not the chat's agent session: a
	// program through the API ("api") or the MCP server ("mcp"). An answer
	// given after a restart goes back to that program, never to the agent.
	Asker string `json:"asker,omitempty"`
	// Source, on a request a program relays from an agent session leashd
	// did not start (an agent's hook in a person's terminal), says where
	// it comes from; the audit log shows it.
	Source *Source `json:"source,omitempty"`
	// AgentRef is the agent's own name for the request (its protocol's
	// request_id), set when the agent's process may outlive a restart of
	// leashd (it runs on a runner): the same process asking again after
	// the restart joins this interaction (Coordinator.Request) instead of
	// asking anew.
	AgentRef string `json:"agent_ref,omitempty"`

	AskedAt  time.Time `json:"asked_at"`
	Deadline time.Time `json:"deadline,omitzero"` // zero: waits forever

	// Restored marks one an earlier run of leashd asked, pending again
	// after a restart (Coordinator.Restore).
	Restored bool `json:"restored,omitempty"`

	// Quorum is how many distinct approvers must choose an approve option
	// of a plan review, tool approval or yes/no approval (IsYesNo) before
	// it is answered; 0 or 1: one. Any approver's deny, adjust or reject
	// (for a yes/no approval: its second option, or a typed reason)
	// decides it at once. Other questions ignore it.
	Quorum int `json:"quorum,omitempty"`
}

// Source is where a relayed request comes from: Kind SourceHook for an
// agent's hook, with the session's ID and working directory.
type Source struct {
	Kind      string `json:"kind"`
	SessionID string `json:"session_id,omitempty"`
	Cwd       string `json:"cwd,omitempty"`
}

// SourceHook is the Source.Kind of a request relayed by an agent's hook
// (`leashd hook permission-request`, `leashd hook stop`).
const SourceHook = "hook"

// FromHook reports whether it was relayed by an agent's hook.
func (it Interaction) FromHook() bool { return it.Source != nil && it.Source.Kind == SourceHook }

// Decides reports whether answering it decides what an agent or a program
// may do — a plan review, a tool approval (with the agent's own options
// too), or a question marked ForApprovers (a program's approval) — so
// that connectors let only approvers answer it.
func (it Interaction) Decides() bool { return it.Kind != KindQuestion || it.ForApprovers }

// NeedsQuorum reports whether it takes more than one approval: a plan
// review, a tool approval or a yes/no approval with a Quorum over one.
func (it Interaction) NeedsQuorum() bool {
	return it.Quorum > 1 && (it.Kind == KindPlanReview || it.Kind == KindToolApproval || it.IsYesNo())
}

// IsYesNo reports whether it is a two-option approval (Approval): the
// first option approves, the second rejects.
func (it Interaction) IsYesNo() bool {
	return it.Kind == KindQuestion && it.Approval && len(it.Options) == 2 && !it.MultiSelect
}

// approves reports whether an answer approves it, so that it counts
// towards its Quorum: any answer of a plan review or tool approval (a
// refusal is a rejection), the first option of a yes/no approval (its
// second option, or a typed reason, refuses at once).
func (it Interaction) approves(res Resolution) bool {
	if it.Kind == KindQuestion {
		return it.IsYesNo() && res.Answer == it.Options[0].Label
	}
	return res.Status == StatusAnswered
}

// Approver is one approval counted towards an interaction's Quorum: who
// chose an approve option and when.
type Approver struct {
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	Decision string    `json:"decision,omitempty"`
}

// AnswerMode is how a person answers: free text, a two-way approval or a
// choice.
type AnswerMode int

// Input modes, after the approval/choice/text modes of terminal prompts.
const (
	AnswerText AnswerMode = iota
	AnswerApproval
	AnswerChoice
)

// AnswerMode reports how the interaction is answered: a tool approval, or a
// two-option single-select request made through RequestInput, is an
// approval; a question without options is free text; other questions and
// plan reviews are a choice from a list (a list of one included).
func (it Interaction) AnswerMode() AnswerMode {
	switch {
	case it.Kind == KindToolApproval, it.Approval && len(it.Options) == 2 && !it.MultiSelect:
		return AnswerApproval
	case len(it.Options) == 0:
		return AnswerText
	default:
		return AnswerChoice
	}
}

// HasOption reports whether label is one of the interaction's options.
func (it Interaction) HasOption(label string) bool { return hasOption(it.Options, label) }

func hasOption(opts []Choice, label string) bool {
	for _, o := range opts {
		if o.Label == label {
			return true
		}
	}
	return false
}

// Resolution is how an interaction ended and what the person said.
type Resolution struct {
	Status Status `json:"status"`
	// Answer is the question's answer: an option label, labels joined with
	// ", " for multi-select, or free text.
	Answer string `json:"answer,omitempty"`
	// Decision is the plan or tool decision (or DecisionReject).
	Decision string `json:"decision,omitempty"`
	// Text is adjust feedback, a deny reason, or the reason it expired or
	// was cancelled.
	Text string    `json:"text,omitempty"`
	By   string    `json:"by,omitempty"` // user ID of who resolved it
	At   time.Time `json:"at"`
	// Approvals are the approvals counted towards the interaction's
	// Quorum, first first (set only when it needed more than one; on a
	// rejection, those given before it).
	Approvals []Approver `json:"approvals,omitempty"`
	// Joined, on what Restore's channel delivers only: the agent's own
	// process asked again and took this outcome (join.go), so it must
	// not also be sent on as a prompt.
	Joined bool `json:"-"`
}

// Approved reports whether the outcome lets the agent go ahead.
func (r Resolution) Approved() bool { return r.Status == StatusAnswered }

// Reply is a person's answer to an interaction: a tap, typed text or both.
type Reply struct {
	// By is the user ID of the person replying (recorded, and passed to
	// Authorize).
	By string
	// Answers are option labels: one for a single-select question, a plan
	// or a tool decision; one or more for a multi-select question.
	Answers []string
	// Text is free text: a question's own answer, adjust feedback or a
	// deny reason.
	Text string
	// Reject declines the interaction outright.
	Reject bool
	// Authorize, when set, is asked under the coordinator's lock, with the
	// interaction as it is, whether By may resolve it; an error refuses the
	// reply with ErrUnauthorized and changes nothing.
	Authorize func(Interaction) error
}

// Outcome says what a successful Reply did.
type Outcome int

// Reply outcomes.
const (
	// Resolved: the interaction is done and the agent has its answer.
	Resolved Outcome = iota + 1
	// AwaitingFeedback: "adjust" was chosen without feedback; the plan
	// review stays pending until text arrives.
	AwaitingFeedback
	// Counted: an approval was counted towards the interaction's Quorum,
	// which it has not reached yet; it stays pending.
	Counted
)

// Errors a Reply or Toggle can return. Connectors tell them apart with
// errors.Is to answer "this question has expired" and the like; none of them
// is ever treated as text for the agent.
var (
	ErrNotFound     = errors.New("no such interaction")
	ErrNotPending   = errors.New("interaction is no longer pending")
	ErrInvalidReply = errors.New("invalid reply")
	ErrUnauthorized = errors.New("not allowed to answer this")
	ErrClosed       = errors.New("coordinator is closed")
	ErrNoPresenter  = errors.New("no presenter for this chat")
	// ErrAlreadyApproved: this person's approval is counted already; a
	// repeat counts once (Interaction.Quorum).
	ErrAlreadyApproved = errors.New("your approval is counted already")
	errEmptyQuestion   = errors.New("a question needs text")
)

// EventType names an Event.
type EventType string

// Event types.
const (
	EventRequested EventType = "interaction.requested"
	EventResolved  EventType = "interaction.resolved"
	EventUpdated   EventType = "interaction.updated" // multi-select toggled, adjust awaiting feedback, or an approval counted
)

// Event tells observers about an interaction's life.
type Event struct {
	Type        EventType
	Interaction Interaction
	// Resolution is set for EventResolved.
	Resolution Resolution
	// Ref is what the Presenter returned for it (e.g. a chat message), so
	// observers can edit that message. Empty until it was shown (a
	// failed Present is retried); kept from before a restart (Restore).
	Ref string
	// Selected is the current multi-select selection (on every event of a
	// multi-select question).
	Selected []string
	// AwaitingFeedback is set on EventUpdated after "adjust" without text.
	AwaitingFeedback bool
	// Approvals are the approvals counted so far towards the
	// interaction's Quorum (on every event of one that needs a quorum).
	Approvals []Approver
}

// QuorumText is the state of an interaction that needs several approvals,
// as every connector shows it: "1 of 2 approvals — alice, bob" (names as
// name gives them; nil: the user IDs).
func QuorumText(it Interaction, approvals []Approver, name func(by string) string) string {
	s := fmt.Sprintf("%d of %d approvals", len(approvals), it.Quorum)
	if len(approvals) == 0 {
		return s
	}
	names := make([]string, len(approvals))
	for i, a := range approvals {
		names[i] = a.By
		if name != nil {
			names[i] = name(a.By)
		}
	}
	return s + " — " + strings.Join(names, ", ")
}
