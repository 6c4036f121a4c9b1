package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/approval"

	"github.com/leashd/leashd/interactions"
)

// chooseOption asks a person to pick one of the agent's own options for a
// tool call (PermissionRequest.Options). The options are shown by their
// names, so the request is asked as a single-select question headed "Tool
// approval": every connector shows a question's options as they are,
// whereas a tool approval's buttons are leashd's own three decisions.
// Typed text rejects with the text as the reason.
func (t *turn) chooseOption(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	opts := make([]interactions.Choice, len(req.Options))
	byLabel := make(map[string]agent.PermissionOption, len(req.Options))
	for i, o := range req.Options {
		label := strings.TrimSpace(o.Name)
		if label == "" {
			label = o.ID
		}
		for n := 2; ; n++ { // labels must be unique to mean one option
			if _, taken := byLabel[label]; !taken {
				break
			}
			label = fmt.Sprintf("%s (%d)", strings.TrimSpace(o.Name), n)
		}
		byLabel[label] = o
		opts[i] = interactions.Choice{Label: label, Description: approval.OptionMeaning[o.Kind]}
	}
	// A question, since the options are the agent's, but one that decides
	// what the agent may do: only approvers answer it (ForApprovers).
	_, last, err := t.e.coord.Request(ctx, interactions.Interaction{
		ChatID: t.c.id, Kind: interactions.KindQuestion, ForApprovers: true,
		Header: approval.ToolApprovalHeader, Question: approval.ToolApprovalText(req), Options: opts, Index: 1, Total: 1,
	})
	if err != nil {
		return approval.Deny("The approval could not be asked: " + err.Error())
	}
	switch last.Status {
	case interactions.StatusAnswered:
		if o, ok := byLabel[last.Answer]; ok {
			if o.Allows() {
				r := approval.Allow(req)
				r.OptionID = o.ID
				return r
			}
			return agent.PermissionResponse{Message: interactions.RejectedText, OptionID: o.ID}
		}
		// Typed text: a rejection whose reason the agent reads.
		r := approval.Deny(agent.RejectedBecause + last.Answer)
		r.OptionID, r.Reason = approval.RejectOption(req.Options), last.Answer
		return r
	case interactions.StatusRejected:
		r := approval.NotAnswered(last)
		r.OptionID = approval.RejectOption(req.Options)
		return r
	default:
		return approval.NotAnswered(last) // no option: the agent reads "cancelled"
	}
}
