package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/leashd/leashd/interactions"
	"github.com/leashd/leashd/interactions/wire"
)

// programAsker is implemented by a Handler that lets programs ask people (the
// engine): a deploy script, a CI job or an agent leashd did not start
// creates an interaction with POST /api/interactions, shown in its chat
// like any other, and collects the answer with GET /api/interactions/{id}.
type programAsker interface {
	// Ask shows it in its chat and returns at once with its ID; timeout
	// 0 means the default. interactions.ErrNoPresenter: no such chat.
	Ask(ctx context.Context, it interactions.Interaction, timeout time.Duration) (interactions.Interaction, error)
	// Outcome waits until ctx is done for how id ended, and returns what
	// was asked; resolved is false while it is pending.
	Outcome(ctx context.Context, id string) (it interactions.Interaction, res interactions.Resolution, resolved bool, err error)
	// CancelAsk cancels a pending interaction.
	CancelAsk(id, reason string) error
}

// askRequest is the body of POST /api/interactions.
type askRequest struct {
	ChatID string `json:"chat_id"`
	// Kind is "question" (the default: options to choose from, or free
	// text without options), "text" (free text), "approval" (two options:
	// the first approves, the second rejects; "Approve"/"Reject" when none
	// are given), "plan_review" (plan) or "tool_approval" (tool_name,
	// tool_input, tool_summary).
	Kind        string                `json:"kind"`
	Question    string                `json:"question"`
	Header      string                `json:"header"`
	Options     []interactions.Choice `json:"options"`
	MultiSelect bool                  `json:"multi_select"`
	// TimeoutSeconds bounds the wait for an answer (0: the default,
	// LEASHD_APPROVAL_TIMEOUT_SECONDS; at most 604800).
	TimeoutSeconds int `json:"timeout_seconds"`
	// Index and Total place a question in a flow of several ("2 of 3").
	Index       int             `json:"index"`
	Total       int             `json:"total"`
	Plan        string          `json:"plan"`
	ToolName    string          `json:"tool_name"`
	ToolInput   json.RawMessage `json:"tool_input"`
	ToolSummary string          `json:"tool_summary"`
	// Source: a request relayed by an agent's hook (away.go).
	Source *interactions.Source `json:"source"`
}

// askResponse is the body of 201 from POST /api/interactions.
type askResponse struct {
	ID       string     `json:"interaction_id"`
	Deadline *time.Time `json:"deadline,omitempty"`
}

// Outcome is the body of GET /api/interactions/{id}; its wire type is the
// wire package's, which the Go client reads too.
type Outcome = wire.Outcome

// Limits of POST /api/interactions and GET /api/interactions/{id}. What
// a program may ask (options, text lengths) is limited by the coordinator
// for every way of asking: interactions.CheckProgramRequest.
const (
	maxAskTimeout = 604800 // seconds, as LEASHD_APPROVAL_TIMEOUT_SECONDS
	maxAskWait    = 600    // seconds a GET may wait
)

// approvalOptions are the options of an approval that brings none.
var approvalOptions = []interactions.Choice{{Label: "Approve"}, {Label: "Reject"}}

const acceptedAsk = `{"chat_id","kind":"question"|"text"|"approval"|"plan_review"|"tool_approval","question","header","options":[{"label","description"}],"multi_select","timeout_seconds","source":{"kind":"hook","session_id","cwd"}}`

// parseAsk checks a POST /api/interactions body and returns the
// interaction it asks for and its timeout; the error names the field.
func parseAsk(b []byte) (interactions.Interaction, time.Duration, error) {
	var req askRequest
	if _, err := decodeJSON(strings.NewReader(string(b)), &req, acceptedAsk, false); err != nil {
		return interactions.Interaction{}, 0, err
	}
	return req.Interaction()
}

// Interaction checks the request and returns the interaction it asks for
// and its timeout; the error names the field.
func (req askRequest) Interaction() (interactions.Interaction, time.Duration, error) {
	if err := req.checkCommon(); err != nil {
		return interactions.Interaction{}, 0, err
	}
	kind := req.Kind
	if kind == "" {
		kind = "question"
	}
	var it interactions.Interaction
	var err error
	switch kind {
	case "question", "text", "approval":
		it, err = req.question(kind)
	case "plan_review":
		it, err = req.planReview(kind)
	case "tool_approval":
		it, err = req.toolApproval(kind)
	default:
		err = askFieldError("kind", "%s is not a kind (accepted: question, text, approval, plan_review, tool_approval)", quoteShort(kind))
	}
	if err == nil {
		it.Source, err = checkSource(req.Source)
	}
	if err == nil {
		err = interactions.CheckProgramRequest(&it)
	}
	if err != nil {
		return interactions.Interaction{}, 0, err
	}
	return it, time.Duration(req.TimeoutSeconds) * time.Second, nil
}

// askFieldError is a problem with a field of POST /api/interactions.
func askFieldError(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
}

// checkCommon checks the fields every kind takes: chat, timeout,
// position and header.
func (req askRequest) checkCommon() error {
	switch {
	case req.ChatID == "":
		return askFieldError("chat_id", "missing: the chat to ask in, e.g. \"telegram:42\", \"slack:C123\" or a web chat name")
	case validChatID(req.ChatID) != nil:
		return askFieldError("chat_id", "%v", validChatID(req.ChatID))
	case req.TimeoutSeconds < 0 || req.TimeoutSeconds > maxAskTimeout:
		return askFieldError("timeout_seconds", "%d is out of range: 0 (the default, LEASHD_APPROVAL_TIMEOUT_SECONDS) to %d", req.TimeoutSeconds, maxAskTimeout)
	case req.Index < 0 || req.Total < 0 || req.Index > req.Total || req.Total > 20 || (req.Total > 0) != (req.Index > 0):
		return askFieldError("index", "%d of %d: index and total go together, 1 ≤ index ≤ total ≤ 20", req.Index, req.Total)
	}
	return nil
}

// given says which kind-specific fields the request carries, less those
// the kind takes.
func (req askRequest) given(takes ...string) map[string]bool {
	given := map[string]bool{
		"question": strings.TrimSpace(req.Question) != "", "options": len(req.Options) > 0, "multi_select": req.MultiSelect,
		"plan": req.Plan != "", "tool_name": req.ToolName != "", "tool_input": len(req.ToolInput) > 0 && string(req.ToolInput) != "null",
		"tool_summary": req.ToolSummary != "",
	}
	for _, f := range takes {
		given[f] = false
	}
	return given
}

// noneOf refuses the first field given that kind does not take.
func noneOf(kind string, given map[string]bool) error {
	for _, f := range []string{"question", "options", "multi_select", "plan", "tool_name", "tool_input", "tool_summary"} {
		if given[f] {
			return fmt.Errorf("%s: not taken by kind %q", f, kind)
		}
	}
	return nil
}

// question is a question, a text question or an approval.
func (req askRequest) question(kind string) (interactions.Interaction, error) {
	it := interactions.Interaction{
		ChatID: req.ChatID, Header: req.Header, Question: strings.TrimSpace(req.Question),
		Options: req.Options, MultiSelect: req.MultiSelect, Index: req.Index, Total: req.Total,
		Kind: interactions.KindQuestion,
	}
	if it.Index == 0 {
		it.Index, it.Total = 1, 1
	}
	if it.Question == "" {
		return it, errors.New("question: missing: the text to ask")
	}
	if err := noneOf(kind, req.given("question", "options", "multi_select")); err != nil {
		return it, err
	}
	if err := checkKindOptions(kind, &it); err != nil {
		return it, err
	}
	if it.MultiSelect && len(it.Options) == 0 {
		return it, askFieldError("multi_select", "needs options to select from")
	}
	it.Options = trimmedLabels(it.Options)
	return it, nil
}

// checkKindOptions applies what a text question and an approval ask of
// the options.
func checkKindOptions(kind string, it *interactions.Interaction) error {
	switch kind {
	case "text":
		if len(it.Options) > 0 || it.MultiSelect {
			return askFieldError("options", "a text question takes no options (send kind \"question\" to offer some)")
		}
	case "approval":
		if it.MultiSelect {
			return askFieldError("multi_select", "an approval takes one answer")
		}
		if len(it.Options) == 0 {
			it.Options = approvalOptions
		}
		if len(it.Options) != 2 {
			return askFieldError("options", "an approval has exactly 2 options, the one that approves first (got %d)", len(it.Options))
		}
		it.Approval = true
	}
	return nil
}

// trimmedLabels returns the options with their labels trimmed (the
// coordinator then refuses empty and repeated ones).
func trimmedLabels(opts []interactions.Choice) []interactions.Choice {
	out := make([]interactions.Choice, len(opts))
	for i, o := range opts {
		o.Label = strings.TrimSpace(o.Label)
		out[i] = o
	}
	return out
}

// planReview is a plan to review.
func (req askRequest) planReview(kind string) (interactions.Interaction, error) {
	if strings.TrimSpace(req.Plan) == "" {
		return interactions.Interaction{}, askFieldError("plan", "missing: the plan to review")
	}
	if err := noneOf(kind, req.given("plan")); err != nil {
		return interactions.Interaction{}, err
	}
	return interactions.Interaction{ChatID: req.ChatID, Kind: interactions.KindPlanReview, Plan: req.Plan}, nil
}

// toolApproval is a tool that wants to run; its input defaults to {} and
// its summary to the input.
func (req askRequest) toolApproval(kind string) (interactions.Interaction, error) {
	if strings.TrimSpace(req.ToolName) == "" {
		return interactions.Interaction{}, askFieldError("tool_name", "missing: the tool that wants to run")
	}
	in := req.ToolInput
	if len(in) == 0 || string(in) == "null" {
		in = json.RawMessage("{}")
	} else if t := strings.TrimSpace(string(in)); !strings.HasPrefix(t, "{") {
		return interactions.Interaction{}, askFieldError("tool_input", "must be a JSON object")
	}
	if err := noneOf(kind, req.given("tool_name", "tool_input", "tool_summary")); err != nil {
		return interactions.Interaction{}, err
	}
	sum := req.ToolSummary
	if sum == "" {
		sum = string(in)
	}
	return interactions.Interaction{ChatID: req.ChatID, Kind: interactions.KindToolApproval,
		ToolName: req.ToolName, ToolInput: in, ToolSummary: sum}, nil
}

func (c *Connector) asker(w http.ResponseWriter) (programAsker, bool) {
	h, ok := c.h(w)
	if !ok {
		return nil, false
	}
	a, ok := h.(programAsker)
	if !ok {
		writeError(w, http.StatusNotImplemented, "this leashd takes no requests from programs")
		return nil, false
	}
	return a, true
}

func (c *Connector) ask(w http.ResponseWriter, r *http.Request) {
	a, ok := c.asker(w)
	if !ok {
		return
	}
	var req askRequest
	if status, err := decodeJSON(r.Body, &req, acceptedAsk, false); err != nil {
		writeError(w, status, err.Error())
		return
	}
	it, timeout, err := req.Interaction()
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	cred := credential(r)
	if !cred.MayAsk(it.ChatID) {
		writeError(w, http.StatusForbidden, cred.ScopeError(it.ChatID, "ask"))
		return
	}
	it.Asker = cred.Asker()
	it, err = a.Ask(context.WithoutCancel(r.Context()), it, timeout)
	if errors.Is(err, interactions.ErrTooMany) {
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter.Seconds())))
	}
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	resp := askResponse{ID: it.ID}
	if !it.Deadline.IsZero() {
		d := it.Deadline
		resp.Deadline = &d
	}
	w.Header().Set("Location", "/api/interactions/"+it.ID)
	writeJSON(w, http.StatusCreated, resp)
}

func (c *Connector) outcome(w http.ResponseWriter, r *http.Request) {
	a, ok := c.asker(w)
	if !ok {
		return
	}
	wait := 0
	if s := r.URL.Query().Get("wait"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > maxAskWait {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("wait: %s is not a number of seconds from 0 to %d", quoteShort(s), maxAskWait))
			return
		}
		wait = n
	}
	if wait > 0 {
		if !c.takeWait(w) {
			return
		}
		defer c.waits.Add(-1)
	}
	id := r.PathValue("id")
	if !c.mayRead(w, r, a, id, "read") {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(wait)*time.Second)
	defer cancel()
	defer context.AfterFunc(c.quit, cancel)()
	it, res, done, err := a.Outcome(ctx, id)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	if r.Context().Err() != nil {
		return // the client left
	}
	out := Outcome{ID: id, Status: "pending", Answers: []string{}}
	if done {
		out = outcomeOf(it, res)
		out.ID = id
	}
	writeJSON(w, http.StatusOK, out)
}

// takeWait counts a long-poll in, or answers 503 when maxWaits are
// waiting: the client asks again after Retry-After (interactions/client
// does), and the connections stay free for everything else.
func (c *Connector) takeWait(w http.ResponseWriter) bool {
	if n := c.waits.Add(1); n > int64(c.maxWaits) {
		c.waits.Add(-1)
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many long-polls waiting: at most %d (LEASHD_WEB_MAX_WAITS); ask again in a moment with ?wait, or now without it, or raise LEASHD_WEB_MAX_WAITS", c.maxWaits))
		return false
	}
	return true
}

// outcomeOf renders how an interaction ended.
func outcomeOf(it interactions.Interaction, res interactions.Resolution) Outcome {
	out := Outcome{
		ID: it.ID, Status: string(res.Status), Answer: res.Answer, Answers: []string{}, Decision: res.Decision,
		Text: res.Text, By: res.By, Approved: res.Status == interactions.StatusAnswered,
	}
	if !res.At.IsZero() {
		at := res.At
		out.ResolvedAt = &at
	}
	if res.Answer != "" {
		if labels, ok := splitLabels(it, res.Answer); ok {
			out.Answers = labels
		}
	}
	if it.Approval && len(it.Options) == 2 && out.Approved && res.Answer != it.Options[0].Label {
		out.Approved = false
		if res.Answer != it.Options[1].Label {
			out.Text = res.Answer // typed instead of tapped: the reason
		}
	}
	return out
}

// splitLabels splits an answer into the option labels it joins (", "
// between them, in option order), when it is made of labels.
func splitLabels(it interactions.Interaction, answer string) ([]string, bool) {
	var try func(rest string, from int) ([]string, bool)
	try = func(rest string, from int) ([]string, bool) {
		for i := from; i < len(it.Options); i++ {
			l := it.Options[i].Label
			if rest == l {
				return []string{l}, true
			}
			if it.MultiSelect && strings.HasPrefix(rest, l+", ") {
				if more, ok := try(rest[len(l)+2:], i+1); ok {
					return append([]string{l}, more...), true
				}
			}
		}
		return nil, false
	}
	return try(answer, 0)
}

func (c *Connector) cancelAsk(w http.ResponseWriter, r *http.Request) {
	a, ok := c.asker(w)
	if !ok {
		return
	}
	id, cred := r.PathValue("id"), credential(r)
	if !c.mayRead(w, r, a, id, "withdraw") {
		return
	}
	why := "The program that asked cancelled the request."
	if !cred.page {
		why = fmt.Sprintf("Withdrawn by %s (LEASHD_API_TOKENS).", cred.Name)
	}
	if err := a.CancelAsk(id, why); err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
