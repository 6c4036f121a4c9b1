// Package client asks people through a running leashd over its HTTP API
// (POST /api/interactions, GET /api/interactions/{id}?wait=…): another Go
// program or agent gets interactions.InputHandler — RequestInput — and the
// question, plan review and tool approval flows, answered from whatever
// chat leashd shows them in (a phone in Telegram, a Slack channel, the web
// page).
//
//	c := client.New("http://127.0.0.1:8080", os.Getenv("LEASHD_WEB_TOKEN"))
//	resp, err := c.RequestInput(ctx, interactions.InputRequest{
//		ChatID: "telegram:42", Prompt: "Deploy v2?",
//		Options: []interactions.Choice{{Label: "Deploy"}, {Label: "Wait"}},
//	})
//
// Cancelling ctx cancels the interaction in leashd. A long-poll that loses
// its connection (leashd restarting) reconnects until ctx is done, and gets
// the answer given after the restart.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/leashd/leashd/interactions"
	"github.com/leashd/leashd/interactions/wire"
)

// Client talks to one leashd. Its zero value is not usable; use New.
type Client struct {
	base    string
	token   string
	http    *http.Client
	timeout time.Duration
	poll    time.Duration
	retry   time.Duration
	source  *interactions.Source
}

// An Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (default: one without a timeout, as
// long-polls take a while).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithTimeout sets how long each interaction waits for an answer before it
// expires (default: leashd's LEASHD_APPROVAL_TIMEOUT_SECONDS).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithPoll sets how long each long-poll waits before asking again
// (default 60s, at most 600s).
func WithPoll(d time.Duration) Option { return func(c *Client) { c.poll = d } }

// WithRetry sets the pause before reconnecting after a network error
// (default 1s).
func WithRetry(d time.Duration) Option { return func(c *Client) { c.retry = d } }

// New returns a client of the leashd at baseURL ("http://127.0.0.1:8080";
// a bare host:port gets http://), sending token as a bearer token when it
// is not empty.
func New(baseURL, token string, opts ...Option) *Client {
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), token: token, http: &http.Client{}, poll: 60 * time.Second, retry: time.Second}
	for _, o := range opts {
		o(c)
	}
	if c.poll < time.Second {
		c.poll = time.Second
	}
	if c.poll > 600*time.Second {
		c.poll = 600 * time.Second
	}
	return c
}

var (
	_ interactions.InputHandler = (*Client)(nil)
)

// Request is what to ask (the body of POST /api/interactions).
type Request struct {
	ChatID string `json:"chat_id"`
	// Kind: "question" (options, or free text without), "text",
	// "approval" (two options, the first approves), "plan_review",
	// "tool_approval".
	Kind           string                `json:"kind,omitempty"`
	Question       string                `json:"question,omitempty"`
	Header         string                `json:"header,omitempty"`
	Options        []interactions.Choice `json:"options,omitempty"`
	MultiSelect    bool                  `json:"multi_select,omitempty"`
	TimeoutSeconds int                   `json:"timeout_seconds,omitempty"`
	Index          int                   `json:"index,omitempty"`
	Total          int                   `json:"total,omitempty"`
	Plan           string                `json:"plan,omitempty"`
	ToolName       string                `json:"tool_name,omitempty"`
	ToolInput      json.RawMessage       `json:"tool_input,omitempty"`
	ToolSummary    string                `json:"tool_summary,omitempty"`
	// Source marks a request relayed by an agent's hook (leashd hook).
	Source *interactions.Source `json:"source,omitempty"`
}

// Outcome is how an interaction ended: the body of GET
// /api/interactions/{id}. The type is the server's (interactions/wire).
type Outcome = wire.Outcome

// Error is an error leashd answered with.
type Error struct {
	Status  int    // HTTP status
	Message string // leashd's message
}

func (e *Error) Error() string { return fmt.Sprintf("leashd answered %d: %s", e.Status, e.Message) }

// Is makes errors.Is(err, interactions.ErrNotFound) and ErrNotPending work.
func (e *Error) Is(target error) bool {
	switch target {
	case interactions.ErrNotFound:
		return e.Status == http.StatusNotFound
	case interactions.ErrNotPending:
		return e.Status == http.StatusConflict
	case interactions.ErrInvalidReply:
		return e.Status == http.StatusBadRequest
	case interactions.ErrTooMany:
		// 429: a cap on pending requests in the chat, or the token's
		// rate; 503 naming a cap: the cap on all chats.
		return e.Status == http.StatusTooManyRequests ||
			e.Status == http.StatusServiceUnavailable && strings.Contains(e.Message, "too many pending requests")
	}
	return false
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var eb struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &eb) != nil || eb.Error == "" {
			eb.Error = strings.TrimSpace(string(b))
		}
		return &Error{Status: resp.StatusCode, Message: eb.Error}
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("reading leashd's answer: %w", err)
		}
	}
	return nil
}

// Start asks and returns the interaction's ID at once.
func (c *Client) Start(ctx context.Context, req Request) (string, error) {
	if req.Source == nil {
		req.Source = c.source
	}
	if req.TimeoutSeconds == 0 && c.timeout > 0 {
		req.TimeoutSeconds = int((c.timeout + time.Second - 1) / time.Second)
	}
	var out struct {
		ID string `json:"interaction_id"`
	}
	if err := c.do(ctx, http.MethodPost, "/api/interactions", req, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// Get returns the outcome, waiting up to wait (whole seconds) while it is
// pending.
func (c *Client) Get(ctx context.Context, id string, wait time.Duration) (Outcome, error) {
	var out Outcome
	err := c.do(ctx, http.MethodGet, "/api/interactions/"+url.PathEscape(id)+fmt.Sprintf("?wait=%d", int(wait/time.Second)), nil, &out)
	return out, err
}

// Cancel cancels a pending interaction.
func (c *Client) Cancel(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/api/interactions/"+url.PathEscape(id), nil, nil)
}

// Wait long-polls until the interaction is settled. A network error (leashd
// restarting) is retried until ctx is done; when ctx is done the
// interaction is cancelled in leashd and the error wraps
// interactions.ErrCancelled and ctx's error.
func (c *Client) Wait(ctx context.Context, id string) (Outcome, error) {
	for {
		o, err := c.Get(ctx, id, c.poll)
		var apiErr *Error
		switch {
		case ctx.Err() != nil:
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			cerr := c.Cancel(cctx, id)
			cancel()
			if cerr != nil && !errors.Is(cerr, interactions.ErrNotPending) {
				return Outcome{}, fmt.Errorf("%w: %w (and cancelling it in leashd failed: %v)", interactions.ErrCancelled, ctx.Err(), cerr)
			}
			return Outcome{}, fmt.Errorf("%w: %w", interactions.ErrCancelled, ctx.Err())
		case errors.As(err, &apiErr) && apiErr.Status != http.StatusServiceUnavailable && apiErr.Status != http.StatusBadGateway:
			return Outcome{}, err
		case err != nil: // leashd restarting or unreachable: try again
			select {
			case <-ctx.Done():
			case <-time.After(c.retry):
			}
			continue
		case o.Status != "pending":
			return o, nil
		}
	}
}

// Ask1 asks one request and waits for its outcome. The request is made
// even when ctx ends meanwhile, so that it is known and can be cancelled
// (Wait does) rather than left pending in the chat.
func (c *Client) Ask1(ctx context.Context, req Request) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, fmt.Errorf("%w: %w", interactions.ErrCancelled, err)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	id, err := c.Start(sctx, req)
	cancel()
	if err != nil {
		return Outcome{}, err
	}
	return c.Wait(ctx, id)
}

// RequestInput implements interactions.InputHandler over the API, as
// Coordinator.RequestInput does in process: no options is free text, two
// (single-select) an approval, more a choice. A rejection is a nil error
// with Rejected set; no answer in time is interactions.ErrExpired; a
// cancellation (or ctx done) interactions.ErrCancelled.
func (c *Client) RequestInput(ctx context.Context, req interactions.InputRequest) (interactions.InputResponse, error) {
	r := Request{ChatID: req.ChatID, Kind: "question", Question: req.Prompt, Header: req.Header, Options: req.Options, MultiSelect: req.MultiSelect}
	switch {
	case len(req.Options) == 0:
		r.Kind = "text"
	case len(req.Options) == 2 && !req.MultiSelect:
		r.Kind = "approval"
	}
	o, err := c.Ask1(ctx, r)
	if err != nil {
		return interactions.InputResponse{}, err
	}
	switch interactions.Status(o.Status) {
	case interactions.StatusAnswered:
		return interactions.InputResponse{Value: o.Answer, By: o.By}, nil
	case interactions.StatusRejected:
		return interactions.InputResponse{Rejected: true, Reason: o.Text, By: o.By}, nil
	case interactions.StatusExpired:
		return interactions.InputResponse{}, fmt.Errorf("%w: %s", interactions.ErrExpired, o.Text)
	default:
		return interactions.InputResponse{}, fmt.Errorf("%w: %s", interactions.ErrCancelled, o.Text)
	}
}

// Ask asks questions one at a time, as Coordinator.Ask does: the first not
// answered stops the flow.
func (c *Client) Ask(ctx context.Context, chatID string, qs []interactions.Question) (interactions.AskResult, error) {
	if len(qs) == 0 {
		return interactions.AskResult{}, fmt.Errorf("%w: no questions to ask", interactions.ErrInvalidReply)
	}
	out := interactions.AskResult{Answers: make(map[string]string, len(qs))}
	for i, q := range qs {
		it := interactions.Interaction{ChatID: chatID, Kind: interactions.KindQuestion, Header: q.Header, Question: q.Question,
			Options: q.Options, MultiSelect: q.MultiSelect, Index: i + 1, Total: len(qs)}
		r := Request{ChatID: chatID, Kind: "question", Question: q.Question, Header: q.Header, Options: q.Options,
			MultiSelect: q.MultiSelect, Index: i + 1, Total: len(qs)}
		if len(qs) == 1 {
			r.Index, r.Total = 0, 0
		}
		o, err := c.Ask1(ctx, r)
		if err != nil {
			return out, err
		}
		it.ID = o.ID
		out.Asked = append(out.Asked, it)
		out.Last = o.Resolution()
		if out.Last.Status != interactions.StatusAnswered {
			return out, nil
		}
		out.Answers[q.Question] = o.Answer
	}
	return out, nil
}

// ReviewPlan asks for a decision on a plan, as Coordinator.ReviewPlan.
func (c *Client) ReviewPlan(ctx context.Context, chatID, plan string) (interactions.Interaction, interactions.Resolution, error) {
	it := interactions.Interaction{ChatID: chatID, Kind: interactions.KindPlanReview, Plan: plan}
	o, err := c.Ask1(ctx, Request{ChatID: chatID, Kind: "plan_review", Plan: plan})
	it.ID = o.ID
	return it, o.Resolution(), err
}

// ApproveTool asks whether a tool may run, as Coordinator.ApproveTool.
func (c *Client) ApproveTool(ctx context.Context, chatID, tool string, input json.RawMessage, summary string) (interactions.Interaction, interactions.Resolution, error) {
	it := interactions.Interaction{ChatID: chatID, Kind: interactions.KindToolApproval, ToolName: tool, ToolInput: input, ToolSummary: summary}
	o, err := c.Ask1(ctx, Request{ChatID: chatID, Kind: "tool_approval", ToolName: tool, ToolInput: input, ToolSummary: summary})
	it.ID = o.ID
	return it, o.Resolution(), err
}
