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
	"unicode/utf8"

	"github.com/leashd/leashd/connectors/web/wire"
	"github.com/leashd/leashd/interactions"
)

// Asker is implemented by a Handler that lets programs ask people (the
// engine): a deploy script, a CI job or an agent leashd did not start
// creates an interaction with POST /api/interactions, shown in its chat
// like any other, and collects the answer with GET /api/interactions/{id}.
type Asker interface {
	// Ask shows it in its chat and returns at once with its ID; timeout
	// 0 means the default. interactions.ErrNoPresenter: no such chat.
	Ask(ctx context.Context, it interactions.Interaction, timeout time.Duration) (interactions.Interaction, error)
	// Outcome waits until ctx is done for how id ended, and returns what
	// was asked; resolved is false while it is pending.
	Outcome(ctx context.Context, id string) (it interactions.Interaction, res interactions.Resolution, resolved bool, err error)
	// CancelAsk cancels a pending interaction.
	CancelAsk(id, reason string) error
}

// AskRequest is the body of POST /api/interactions.
type AskRequest struct {
	ChatID string `json:"chat_id"`
	// Kind is "question" (the default: options to choose from, or free
	// text without options), "text" (free text), "approval" (two options:
	// the first approves, the second rejects; "Approve"/"Reject" when none
	// are given), "plan_review" (plan) or "tool_approval" (tool_name,
	// tool_input, tool_summary).
	Kind        string                `json:"kind"`
	Question    string                `json:"question"`
	Header      string                `json:"header"`
	Options     []interactions.Option `json:"options"`
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
}

// AskResponse is the body of 201 from POST /api/interactions.
type AskResponse struct {
	ID       string     `json:"interaction_id"`
	Deadline *time.Time `json:"deadline,omitempty"`
}

// Outcome is the body of GET /api/interactions/{id}; its wire type is the
// wire package's, which the Go client reads too.
type Outcome = wire.Outcome

// Limits of POST /api/interactions.
const (
	MaxAskOptions     = 10
	MaxAskQuestion    = 4000 // bytes
	MaxAskLabel       = 200
	MaxAskDescription = 500
	MaxAskHeader      = 100
	MaxAskTimeout     = 604800 // seconds, as LEASHD_APPROVAL_TIMEOUT_SECONDS
	MaxAskWait        = 600    // seconds a GET may wait
)

// Default options of an approval without options of its own.
var approvalOptions = []interactions.Option{{Label: "Approve"}, {Label: "Reject"}}

const acceptedAsk = `{"chat_id","kind":"question"|"text"|"approval"|"plan_review"|"tool_approval","question","header","options":[{"label","description"}],"multi_select","timeout_seconds"}`

// ParseAsk checks a POST /api/interactions body and returns the
// interaction it asks for and its timeout; the error names the field.
func ParseAsk(b []byte) (interactions.Interaction, time.Duration, error) {
	var req AskRequest
	if _, err := decodeJSON(strings.NewReader(string(b)), &req, acceptedAsk, false); err != nil {
		return interactions.Interaction{}, 0, err
	}
	return req.Interaction()
}

// Interaction checks the request and returns the interaction it asks for
// and its timeout; the error names the field.
func (req AskRequest) Interaction() (interactions.Interaction, time.Duration, error) {
	fail := func(field, format string, args ...any) (interactions.Interaction, time.Duration, error) {
		return interactions.Interaction{}, 0, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
	}
	if req.ChatID == "" {
		return fail("chat_id", "missing: the chat to ask in, e.g. \"telegram:42\", \"slack:C123\" or a web chat name")
	}
	if err := validChatID(req.ChatID); err != nil {
		return fail("chat_id", "%v", err)
	}
	if req.TimeoutSeconds < 0 || req.TimeoutSeconds > MaxAskTimeout {
		return fail("timeout_seconds", "%d is out of range: 0 (the default, LEASHD_APPROVAL_TIMEOUT_SECONDS) to %d", req.TimeoutSeconds, MaxAskTimeout)
	}
	if req.Index < 0 || req.Total < 0 || req.Index > req.Total || req.Total > 20 || (req.Total > 0) != (req.Index > 0) {
		return fail("index", "%d of %d: index and total go together, 1 ≤ index ≤ total ≤ 20", req.Index, req.Total)
	}
	if n := utf8.RuneCountInString(req.Header); n > MaxAskHeader || !utf8.ValidString(req.Header) {
		return fail("header", "must be UTF-8 of at most %d characters", MaxAskHeader)
	}
	it := interactions.Interaction{
		ChatID: req.ChatID, Header: req.Header, Question: strings.TrimSpace(req.Question),
		Options: req.Options, MultiSelect: req.MultiSelect, Index: req.Index, Total: req.Total,
	}
	if it.Index == 0 {
		it.Index, it.Total = 1, 1
	}
	timeout := time.Duration(req.TimeoutSeconds) * time.Second
	kind := req.Kind
	if kind == "" {
		kind = "question"
	}
	needQuestion := func() error {
		switch {
		case it.Question == "":
			return errors.New("question: missing: the text to ask")
		case len(it.Question) > MaxAskQuestion || !utf8.ValidString(it.Question):
			return fmt.Errorf("question: must be UTF-8 of at most %d bytes", MaxAskQuestion)
		}
		return nil
	}
	noneOf := func(fields map[string]bool) error {
		for _, f := range []string{"question", "options", "multi_select", "plan", "tool_name", "tool_input", "tool_summary"} {
			if fields[f] {
				return fmt.Errorf("%s: not taken by kind %q", f, kind)
			}
		}
		return nil
	}
	given := map[string]bool{
		"question": it.Question != "", "options": len(req.Options) > 0, "multi_select": req.MultiSelect,
		"plan": req.Plan != "", "tool_name": req.ToolName != "", "tool_input": len(req.ToolInput) > 0 && string(req.ToolInput) != "null",
		"tool_summary": req.ToolSummary != "",
	}
	switch kind {
	case "question", "text", "approval":
		if err := needQuestion(); err != nil {
			return interactions.Interaction{}, 0, err
		}
		given["question"], given["options"], given["multi_select"] = false, false, false
		if err := noneOf(given); err != nil {
			return interactions.Interaction{}, 0, err
		}
		it.Kind = interactions.KindQuestion
	case "plan_review":
		if strings.TrimSpace(req.Plan) == "" {
			return fail("plan", "missing: the plan to review")
		}
		given["plan"] = false
		if err := noneOf(given); err != nil {
			return interactions.Interaction{}, 0, err
		}
		return interactions.Interaction{ChatID: req.ChatID, Kind: interactions.KindPlanReview, Plan: req.Plan}, timeout, nil
	case "tool_approval":
		if strings.TrimSpace(req.ToolName) == "" {
			return fail("tool_name", "missing: the tool that wants to run")
		}
		in := req.ToolInput
		if len(in) == 0 || string(in) == "null" {
			in = json.RawMessage("{}")
		} else if t := strings.TrimSpace(string(in)); !strings.HasPrefix(t, "{") {
			return fail("tool_input", "must be a JSON object")
		}
		given["tool_name"], given["tool_input"], given["tool_summary"] = false, false, false
		if err := noneOf(given); err != nil {
			return interactions.Interaction{}, 0, err
		}
		sum := req.ToolSummary
		if sum == "" {
			sum = string(in)
		}
		return interactions.Interaction{ChatID: req.ChatID, Kind: interactions.KindToolApproval,
			ToolName: req.ToolName, ToolInput: in, ToolSummary: sum}, timeout, nil
	default:
		return fail("kind", "%s is not a kind (accepted: question, text, approval, plan_review, tool_approval)", quoteShort(kind))
	}
	switch kind {
	case "text":
		if len(it.Options) > 0 || it.MultiSelect {
			return fail("options", "a text question takes no options (send kind \"question\" to offer some)")
		}
	case "approval":
		if it.MultiSelect {
			return fail("multi_select", "an approval takes one answer")
		}
		if len(it.Options) == 0 {
			it.Options = approvalOptions
		}
		if len(it.Options) != 2 {
			return fail("options", "an approval has exactly 2 options, the one that approves first (got %d)", len(it.Options))
		}
		it.Approval = true
	}
	if it.MultiSelect && len(it.Options) == 0 {
		return fail("multi_select", "needs options to select from")
	}
	if len(it.Options) > MaxAskOptions {
		return fail("options", "%d options; at most %d", len(it.Options), MaxAskOptions)
	}
	seen := map[string]bool{}
	for i, o := range it.Options {
		o.Label = strings.TrimSpace(o.Label)
		switch {
		case o.Label == "":
			return fail(fmt.Sprintf("options[%d].label", i), "missing")
		case len(o.Label) > MaxAskLabel || !utf8.ValidString(o.Label):
			return fail(fmt.Sprintf("options[%d].label", i), "must be UTF-8 of at most %d bytes", MaxAskLabel)
		case seen[o.Label]:
			return fail(fmt.Sprintf("options[%d].label", i), "%s is given twice; labels must differ", quoteShort(o.Label))
		case len(o.Description) > MaxAskDescription || !utf8.ValidString(o.Description):
			return fail(fmt.Sprintf("options[%d].description", i), "must be UTF-8 of at most %d bytes", MaxAskDescription)
		}
		seen[o.Label] = true
		it.Options[i] = o
	}
	return it, timeout, nil
}

func (c *Connector) asker(w http.ResponseWriter) (Asker, bool) {
	h, ok := c.h(w)
	if !ok {
		return nil, false
	}
	a, ok := h.(Asker)
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
	var req AskRequest
	if status, err := decodeJSON(r.Body, &req, acceptedAsk, false); err != nil {
		writeError(w, status, err.Error())
		return
	}
	it, timeout, err := req.Interaction()
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	it, err = a.Ask(context.WithoutCancel(r.Context()), it, timeout)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	resp := AskResponse{ID: it.ID}
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
		if err != nil || n < 0 || n > MaxAskWait {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("wait: %s is not a number of seconds from 0 to %d", quoteShort(s), MaxAskWait))
			return
		}
		wait = n
	}
	id := r.PathValue("id")
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
		out = OutcomeOf(it, res)
		out.ID = id
	}
	writeJSON(w, http.StatusOK, out)
}

// OutcomeOf renders how an interaction ended.
func OutcomeOf(it interactions.Interaction, res interactions.Resolution) Outcome {
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
	if err := a.CancelAsk(r.PathValue("id"), "The program that asked cancelled the request."); err != nil {
		writeError(w, statusOf(err), err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
