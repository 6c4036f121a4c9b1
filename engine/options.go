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
		base := optionLabel(o, i)
		label := base
		for n := 2; ; n++ { // labels must be unique to mean one option
			if _, taken := byLabel[label]; !taken {
				break
			}
			label = fmt.Sprintf("%s (%d)", base, n)
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
		t.e.say(ctx, t.c.id, "The agent asked for a tool approval leashd could not show ("+err.Error()+"); it was refused.")
		r := approval.Deny("The approval could not be asked: " + err.Error())
		r.OptionID = approval.RejectOption(req.Options)
		return r
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

// optionLabel is the label of the agent's i-th option: its name, else its
// ID, else "Option i+1" (never a blank button), cut to fit
// interactions.MaxLabelBytes with room for a " (n)" that tells repeated
// names apart. The answer is mapped back by this label, so the cut keeps
// it meaning one option.
func optionLabel(o agent.PermissionOption, i int) string {
	label := strings.TrimSpace(o.Name)
	if label == "" {
		label = strings.TrimSpace(o.ID)
	}
	if label == "" {
		label = fmt.Sprintf("Option %d", i+1)
	}
	const room = interactions.MaxLabelBytes - len(" (10)") - len("…")
	if part, cut := approval.CapText(label, room); cut > 0 {
		label = part + "…"
	}
	return label
}
