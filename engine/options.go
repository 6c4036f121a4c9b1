package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/approval"

	"github.com/leashd/leashd/interactions"
)

// chooseOption asks people to pick one of the agent's own options for a
// tool call (PermissionRequest.Options): it is the tool approval it (with
// its quorum, as approveTool built it) whose buttons are the agent's
// options by name, allow-like ones styled Approve and reject-like ones
// Deny. Typed text rejects with the text as the reason.
func (t *turn) chooseOption(ctx context.Context, req agent.PermissionRequest, it interactions.Interaction) agent.PermissionResponse {
	opts, byLabel := ownOptions(req.Options)
	it.Options = opts
	_, last, err := t.e.coord.Request(ctx, it)
	if err != nil {
		t.e.say(ctx, t.c.id, "The agent asked for a tool approval leashd could not show ("+err.Error()+"); it was refused.")
		r := approval.Deny("The approval could not be asked: " + err.Error())
		r.OptionID = approval.RejectOption(req.Options)
		return r
	}
	o, chosen := byLabel[last.Answer]
	switch {
	case last.Status == interactions.StatusAnswered && chosen && o.Allows():
		r := approval.Allow(req)
		r.OptionID = o.ID
		return r
	case last.Status == interactions.StatusAnswered && chosen:
		return agent.PermissionResponse{Message: interactions.RejectedText, OptionID: o.ID}
	case last.Status == interactions.StatusRejected && chosen: // the agent's own reject option
		return agent.PermissionResponse{Message: interactions.RejectedText, OptionID: o.ID}
	case last.Status == interactions.StatusRejected && last.Decision == interactions.DecisionDeny:
		// Typed text: a rejection whose reason the agent reads.
		r := approval.Deny(agent.RejectedBecause + last.Text)
		r.OptionID, r.Reason = approval.RejectOption(req.Options), last.Text
		return r
	case last.Status == interactions.StatusRejected:
		r := approval.NotAnswered(last)
		r.OptionID = approval.RejectOption(req.Options)
		return r
	default:
		return approval.NotAnswered(last) // no option: the agent reads "cancelled"
	}
}

// ownOptions are the agent's options as a tool approval's buttons, each
// with its meaning and style, and the option each label stands for.
// Labels are unique, and never one of leashd's own decisions (allow,
// allow_session, deny), so that the answer maps back to one option.
func ownOptions(in []agent.PermissionOption) ([]interactions.Choice, map[string]agent.PermissionOption) {
	opts := make([]interactions.Choice, len(in))
	byLabel := make(map[string]agent.PermissionOption, len(in))
	taken := func(label string) bool {
		_, dup := byLabel[label]
		return dup || slices.ContainsFunc(interactions.ToolOptions, func(c interactions.Choice) bool { return c.Label == label })
	}
	for i, o := range in {
		base := optionLabel(o, i)
		label := base
		for n := 2; taken(label); n++ {
			label = fmt.Sprintf("%s (%d)", base, n)
		}
		byLabel[label] = o
		style := interactions.StyleDeny
		if o.Allows() {
			style = interactions.StyleApprove
		}
		opts[i] = interactions.Choice{Label: label, Description: approval.OptionMeaning[o.Kind], Style: style}
	}
	return opts, byLabel
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
