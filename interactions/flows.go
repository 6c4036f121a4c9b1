package interactions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// AskResult is the outcome of a set of questions.
type AskResult struct {
	// Answers maps each answered question's exact text to its answer.
	Answers map[string]string
	// Last is how the last question asked ended: StatusAnswered when all
	// were answered, otherwise the status that stopped the flow.
	Last Resolution
	// Asked are the interactions asked, in order.
	Asked []Interaction
}

// Complete reports whether every question was answered.
func (r AskResult) Complete() bool { return r.Last.Status == StatusAnswered }

// Ask asks questions in a chat one at a time, each its own interaction with
// its position (Index of Total); the next only after the previous is
// answered. The first one not answered (rejected, expired, cancelled) stops
// the flow.
func (c *Coordinator) Ask(ctx context.Context, chatID string, qs []Question) (AskResult, error) {
	if len(qs) == 0 {
		return AskResult{}, fmt.Errorf("%w: no questions to ask", ErrInvalidReply)
	}
	out := AskResult{Answers: make(map[string]string, len(qs))}
	for i, q := range qs {
		it, res, err := c.Request(ctx, Interaction{
			ChatID: chatID, Kind: KindQuestion,
			Header: q.Header, Question: q.Question, Options: q.Options, MultiSelect: q.MultiSelect,
			Index: i + 1, Total: len(qs), AgentRef: agentRef(ctx),
		})
		if err != nil {
			return out, err
		}
		out.Asked = append(out.Asked, it)
		out.Last = res
		if res.Status != StatusAnswered {
			return out, nil
		}
		out.Answers[q.Question] = res.Answer
	}
	return out, nil
}

// ReviewPlan asks for a decision on a plan: DecisionCleanEdit, DecisionEdit,
// DecisionDefault (answered) or DecisionAdjust with feedback in Text
// (rejected).
func (c *Coordinator) ReviewPlan(ctx context.Context, chatID, plan string) (Interaction, Resolution, error) {
	return c.Request(ctx, Interaction{ChatID: chatID, Kind: KindPlanReview, Plan: plan, AgentRef: agentRef(ctx)})
}

// ApproveTool asks whether a tool may run: DecisionAllow,
// DecisionAllowSession (answered) or DecisionDeny with a reason in Text
// (rejected).
func (c *Coordinator) ApproveTool(ctx context.Context, chatID, tool string, input json.RawMessage, summary string) (Interaction, Resolution, error) {
	return c.Request(ctx, Interaction{ChatID: chatID, Kind: KindToolApproval, ToolName: tool, ToolInput: input, ToolSummary: summary, AgentRef: agentRef(ctx)})
}

// InputRequest asks a person for input through InputHandler: no options is
// free text, two options an approval, more a choice.
type InputRequest struct {
	ChatID      string
	Header      string
	Prompt      string
	Options     []Choice
	MultiSelect bool
}

// InputResponse is what the person said.
type InputResponse struct {
	// Value is the chosen label (labels joined with ", " for multi-select)
	// or the free text.
	Value    string
	Rejected bool   // the person declined; Reason may say why
	Reason   string // rejection reason, if any
	By       string
}

// Errors RequestInput returns when nobody answered.
var (
	ErrExpired   = errors.New("no answer came in time")
	ErrCancelled = errors.New("the request was cancelled")
)

// InputHandler is the Go API any agent can call to ask a person for input.
type InputHandler interface {
	RequestInput(ctx context.Context, req InputRequest) (InputResponse, error)
}

var _ InputHandler = (*Coordinator)(nil)

// RequestInput asks one question and blocks until it is answered or
// rejected (nil error), expires (ErrExpired), or is cancelled or ctx is done
// (ErrCancelled, wrapping ctx's error when that was the cause).
func (c *Coordinator) RequestInput(ctx context.Context, req InputRequest) (InputResponse, error) {
	_, res, err := c.Request(ctx, Interaction{
		ChatID: req.ChatID, Kind: KindQuestion,
		Header: req.Header, Question: req.Prompt, Options: req.Options, MultiSelect: req.MultiSelect,
		Index: 1, Total: 1, Approval: len(req.Options) == 2 && !req.MultiSelect,
	})
	if err != nil {
		return InputResponse{}, err
	}
	switch res.Status {
	case StatusAnswered:
		return InputResponse{Value: res.Answer, By: res.By}, nil
	case StatusRejected:
		return InputResponse{Rejected: true, Reason: res.Text, By: res.By}, nil
	case StatusExpired:
		return InputResponse{}, fmt.Errorf("%w: %s", ErrExpired, res.Text)
	default:
		if ctx.Err() != nil {
			return InputResponse{}, fmt.Errorf("%w: %w", ErrCancelled, ctx.Err())
		}
		return InputResponse{}, fmt.Errorf("%w: %s", ErrCancelled, res.Text)
	}
}
