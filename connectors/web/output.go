package web

// Output: what the engine says, as events on the streams.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

type messageEvent struct {
	ChatID    string `json:"chat_id"`
	MessageID string `json:"message_id"`
	Text      string `json:"text"`
	// At is when the message was first shown (an update keeps it).
	At time.Time `json:"at"`
}

type userEvent struct {
	ChatID string    `json:"chat_id"`
	Text   string    `json:"text"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
}

type doneEvent struct {
	ChatID     string    `json:"chat_id"`
	Result     string    `json:"result"`
	IsError    bool      `json:"is_error"`
	CostUSD    float64   `json:"cost_usd"`
	NumTurns   int       `json:"num_turns"`
	Tools      []string  `json:"tools"`
	DurationMS int64     `json:"duration_ms"`
	Summary    string    `json:"summary"`
	At         time.Time `json:"at"`
}

// interactionView is an interaction as the API shows it: every field is
// present whatever the kind (zero when unused), so clients need no guessing.
type interactionView struct {
	ID          string            `json:"interaction_id"`
	ChatID      string            `json:"chat_id"`
	Kind        interactions.Kind `json:"kind"`
	Header      string            `json:"header"`
	Question    string            `json:"question"`
	Options     []optionView      `json:"options"`
	MultiSelect bool              `json:"multi_select"`
	// Approval: a yes/no approval, its first option approves and the
	// second refuses (styled so or not).
	Approval  bool            `json:"approval"`
	Index     int             `json:"index"` // 1-based, of Total
	Total     int             `json:"total"`
	Plan      string          `json:"plan"`
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"` // the tool's JSON object; null when none
	// ToolSummary is the tool call for people: the command, or the file
	// and an excerpt of the change.
	ToolSummary string `json:"tool_summary"`
	// Diff is a file change as a unified diff ("" when none).
	Diff string `json:"diff,omitempty"`
	// What the agent said about a tool approval: why it asks, the MCP
	// server, whether Deny comes first (no quick approval), whether "allow
	// for this session" is left out, whether the whole input must be
	// shown. Notes are those facts as lines for people.
	Reason          string     `json:"reason"`
	MCPServer       string     `json:"mcp_server"`
	DefaultToNo     bool       `json:"default_to_no"`
	NoSessionAllow  bool       `json:"no_session_allow"`
	RequiresDetails bool       `json:"requires_details"`
	Notes           []string   `json:"notes"`
	AskedAt         time.Time  `json:"asked_at"`
	Deadline        *time.Time `json:"deadline,omitempty"`
	// ToolAction is a tool approval's heading in plain words ("The agent
	// wants to run a command"), as the chat apps show it.
	ToolAction string `json:"tool_action,omitempty"`
	// OptionTexts are the buttons' texts, by option ("Allow for this
	// session" for allow_session).
	OptionTexts      []string `json:"option_texts"`
	Selected         []string `json:"selected"`
	AwaitingFeedback bool     `json:"awaiting_feedback"`
	// Interrupted is set on a request a restart interrupted (pending
	// again since the start-up): it is no longer waiting in the agent,
	// but it is answered as before and the answer is sent to the agent as
	// its next prompt. Notice says so.
	Interrupted bool   `json:"interrupted,omitempty"`
	Notice      string `json:"notice,omitempty"`
	// Quorum is how many distinct approvers it needs (0: one); QuorumText
	// the approvals so far, "1 of 2 approvals — U1" (the page and the API
	// each count as one approver, "web").
	Quorum     int                     `json:"quorum,omitempty"`
	Approvals  []interactions.Approver `json:"approvals,omitempty"`
	QuorumText string                  `json:"quorum_text,omitempty"`
}

type optionView struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	// Style is how the page colours it: "approve" green, "deny" and
	// "destructive" red, "" plain.
	Style interactions.Style `json:"style"`
}

type updatedEvent struct {
	ID               string            `json:"interaction_id"`
	ChatID           string            `json:"chat_id"`
	Kind             interactions.Kind `json:"kind"`
	Selected         []string          `json:"selected"`
	AwaitingFeedback bool              `json:"awaiting_feedback"`
	// Approvals so far of one that needs a quorum, and as people read it.
	Approvals  []interactions.Approver `json:"approvals,omitempty"`
	QuorumText string                  `json:"quorum_text,omitempty"`
}

type resolvedEvent struct {
	ID       string              `json:"interaction_id"`
	ChatID   string              `json:"chat_id"`
	Kind     interactions.Kind   `json:"kind"`
	Status   interactions.Status `json:"status"`
	Answer   string              `json:"answer"`
	Decision string              `json:"decision"`
	Text     string              `json:"text"`
	By       string              `json:"by"`
	At       time.Time           `json:"at"`
	// Approvals: every approval counted towards its quorum.
	Approvals []interactions.Approver `json:"approvals,omitempty"`
}

// maxStreamMessage starts a new message when streamed text grows past it.
const maxStreamMessage = 64 << 10

// publishLocked sends an event and notes the chat's activity; replaces is
// the seq of an event this one makes obsolete (0: none). It returns the
// event's seq.
func (c *Connector) publishLocked(name, chat string, v any, last string, replaces uint64) uint64 {
	data, err := json.Marshal(v)
	if err != nil { // only plain structs are published
		c.log.Error("web: encoding event", "event", name, "err", err)
		return 0
	}
	c.noteChatLocked(chat, last)
	return c.hub.publish(name, chat, data, replaces)
}

func (c *Connector) newMessageIDLocked() string {
	c.msgSeq++
	return fmt.Sprintf("m%d", c.msgSeq)
}

// Say implements connectors.Output.
func (c *Connector) Say(_ context.Context, chatID, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, chatID) // later agent text goes below this
	c.publishLocked("message", chatID, messageEvent{chatID, c.newMessageIDLocked(), text, time.Now()}, text, 0)
	return nil
}

// StreamText implements connectors.Output: the first text of a run is a
// message, each later one an update carrying the whole text so far.
func (c *Connector) StreamText(_ context.Context, chatID, text string) error {
	if text == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streams[chatID]
	if s == nil || len(s.text)+len(text) > maxStreamMessage {
		// A new message does not start with the blank lines that
		// separated it from what came before.
		text = strings.TrimLeft(text, " \t\r\n")
		if text == "" {
			return nil
		}
		s = &streaming{id: c.newMessageIDLocked(), at: time.Now()}
		c.streams[chatID] = s
		s.text = append(s.text, text...)
		c.publishLocked("message", chatID, messageEvent{chatID, s.id, string(s.text), s.at}, string(s.text), 0)
		return nil
	}
	s.text = append(s.text, text...)
	s.last = c.publishLocked("message.updated", chatID, messageEvent{chatID, s.id, string(s.text), s.at}, string(s.text), s.last)
	return nil
}

// Done implements connectors.Output.
func (c *Connector) Done(_ context.Context, chatID string, s connectors.Summary) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, chatID)
	tools := s.Tools
	if tools == nil {
		tools = []string{}
	}
	c.publishLocked("agent.done", chatID, doneEvent{
		ChatID: chatID, Result: s.Result, IsError: s.IsError, CostUSD: s.CostUSD, NumTurns: s.NumTurns,
		Tools: tools, DurationMS: s.Duration.Milliseconds(), Summary: s.Line(), At: time.Now(),
	}, s.Line(), 0)
	return nil
}

func (c *Connector) viewLocked(it interactions.Interaction) interactionView {
	v := interactionView{
		ID: it.ID, ChatID: it.ChatID, Kind: it.Kind, Header: it.Header, Question: it.Question,
		Options: make([]optionView, len(it.Options)), MultiSelect: it.MultiSelect, Approval: it.IsYesNo(), Index: it.Index, Total: it.Total,
		Plan: it.Plan, ToolName: it.ToolName, ToolInput: it.ToolInput, ToolSummary: it.ToolSummary, Diff: it.Diff, AskedAt: it.AskedAt,
		Reason: it.Reason, MCPServer: it.MCPServer, DefaultToNo: it.DefaultToNo, NoSessionAllow: it.NoSessionAllow,
		RequiresDetails: it.RequiresDetails, Notes: connectors.ToolNotes(it), Quorum: it.Quorum,
		OptionTexts: make([]string, len(it.Options)), Selected: c.selected[it.ID], AwaitingFeedback: c.awaiting[it.ID],
	}
	if it.Kind == interactions.KindToolApproval {
		v.ToolAction = connectors.ToolAction(it.ToolName)
	}
	if len(v.ToolInput) > 0 && !json.Valid(v.ToolInput) {
		v.ToolInput = nil // never break the event's JSON
	}
	if !it.Deadline.IsZero() {
		d := it.Deadline
		v.Deadline = &d
	}
	for i, o := range it.Options {
		v.Options[i] = optionView{o.Label, o.Description, o.Style}
		v.OptionTexts[i] = connectors.OptionText(it, o.Label)
	}
	if v.Selected == nil {
		v.Selected = []string{}
	}
	if v.Notes == nil {
		v.Notes = []string{}
	}
	if it.NeedsQuorum() {
		v.Quorum, v.Approvals = it.Quorum, c.approvals[it.ID]
		v.QuorumText = interactions.QuorumText(it, v.Approvals, nil)
	}
	if in, ok := c.interrupted[it.ID]; ok {
		v.Interrupted, v.Notice = true, in.notice
	} else if it.Restored {
		v.Interrupted, v.Notice = true, interactions.InterruptedNotice
	}
	return v
}

// Present implements connectors.Output. The reference is the interaction
// ID: the page finds its card by it.
func (c *Connector) Present(_ context.Context, it *interactions.Interaction) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, it.ChatID)
	c.publishLocked("interaction.requested", it.ChatID, c.viewLocked(*it), describe(*it), 0)
	c.notifyLocked(*it)
	return "web:" + it.ID, nil
}

func describe(it interactions.Interaction) string {
	switch it.Kind {
	case interactions.KindPlanReview:
		return "Plan review"
	case interactions.KindToolApproval:
		return "Approve " + it.ToolName + "?"
	}
	return it.Question
}

// Update implements connectors.Output.
func (c *Connector) Update(_ context.Context, ev interactions.Event) error {
	it := ev.Interaction
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ev.Type {
	case interactions.EventUpdated:
		if ev.AwaitingFeedback {
			c.awaiting[it.ID] = true
		}
		sel := slices.Clone(ev.Selected)
		if sel == nil {
			sel = []string{}
		}
		if it.MultiSelect {
			c.selected[it.ID] = sel
		}
		up := updatedEvent{ID: it.ID, ChatID: it.ChatID, Kind: it.Kind, Selected: sel, AwaitingFeedback: c.awaiting[it.ID]}
		if len(ev.Approvals) > 0 {
			c.approvals[it.ID] = slices.Clone(ev.Approvals)
			up.Approvals, up.QuorumText = ev.Approvals, interactions.QuorumText(it, ev.Approvals, nil)
		}
		c.publishLocked("interaction.updated", it.ChatID, up, "", 0)
	case interactions.EventResolved:
		delete(c.selected, it.ID)
		delete(c.awaiting, it.ID)
		r := ev.Resolution
		resolved := resolvedEvent{
			ID: it.ID, ChatID: it.ChatID, Kind: it.Kind, Status: r.Status,
			Answer: r.Answer, Decision: r.Decision, Text: r.Text, By: r.By, At: r.At, Approvals: r.Approvals,
		}
		if r.Status == interactions.StatusInterrupted {
			c.approvals[it.ID] = slices.Clone(ev.Approvals) // shown again with them
		} else {
			delete(c.approvals, it.ID)
		}
		if r.Status == interactions.StatusInterrupted {
			if c.stopping.Load() {
				// Interrupted by this process's shutdown: the open streams
				// see it resolved as interrupted before they end, then the
				// notice below (its buttons work again after the restart).
				c.publishLocked("interaction.resolved", it.ChatID, resolved, "", 0)
			}
			// Interrupted by a restart: with the engine's recovery its
			// buttons keep working, so it is shown (again) as a request,
			// with the selection so far.
			c.interrupted[it.ID] = interrupted{it, r.Text}
			if it.MultiSelect && ev.Selected != nil {
				c.selected[it.ID] = slices.Clone(ev.Selected)
			}
			v := c.viewLocked(it)
			c.publishLocked("interaction.requested", it.ChatID, v, describe(it), 0)
			return nil
		}
		delete(c.interrupted, it.ID)
		c.publishLocked("interaction.resolved", it.ChatID, resolved, "", 0)
	}
	return nil
}

// chatList is the known chats, most recent first, with pending counts. A
// chat forgotten while idle (noteChatLocked) in which requests wait is
// listed from them.
func (c *Connector) chatList(h connectors.Handler) []chatInfo {
	pending := map[string]int{}
	asked := map[string]time.Time{}
	for _, it := range h.Pending("") {
		pending[it.ChatID]++
		if it.AskedAt.After(asked[it.ChatID]) {
			asked[it.ChatID] = it.AskedAt
		}
	}
	c.mu.Lock()
	out := make([]chatInfo, 0, len(c.chats))
	for _, ci := range c.chats {
		x := *ci
		x.Pending = pending[x.ID]
		delete(pending, x.ID)
		out = append(out, x)
	}
	c.mu.Unlock()
	for id, n := range pending {
		out = append(out, chatInfo{ID: id, Updated: asked[id], Pending: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out
}
