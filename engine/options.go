package engine

import (
	"context"
	"fmt"
	"github.com/leashd/leashd/engine/agent"
	"strings"

	"github.com/leashd/leashd/interactions"
)

// ToolApprovalHeader heads a tool approval asked with the agent's own
// options.
const ToolApprovalHeader = "Tool approval"

// optionMeaning says what an ACP option kind does, shown under its name.
var optionMeaning = map[string]string{
	"allow_once":    "Allow this call",
	"allow_always":  "Allow, and do not ask again for calls like it",
	"reject_once":   "Reject; typed text is sent as the reason",
	"reject_always": "Reject, and reject calls like it from now on",
}

// chooseOption asks a person to pick one of the agent's own options for a
// tool call (PermissionRequest.Options). The options are shown by their
// names, so the request is asked as a single-select question headed "Tool
// approval": every connector shows a question's options as they are,
// whereas a tool approval's buttons are leashd's own three decisions.
// Typed text rejects with the text as the reason.
func (t *turn) chooseOption(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	opts := make([]interactions.Option, len(req.Options))
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
		opts[i] = interactions.Option{Label: label, Description: optionMeaning[o.Kind]}
	}
	// A question, since the options are the agent's, but one that decides
	// what the agent may do: only approvers answer it (ForApprovers).
	_, last, err := t.e.coord.Request(ctx, interactions.Interaction{
		ChatID: t.c.id, Kind: interactions.KindQuestion, ForApprovers: true,
		Header: ToolApprovalHeader, Question: ToolApprovalText(req), Options: opts, Index: 1, Total: 1,
	})
	if err != nil {
		return deny("The approval could not be asked: " + err.Error())
	}
	switch last.Status {
	case interactions.StatusAnswered:
		if o, ok := byLabel[last.Answer]; ok {
			if o.Allows() {
				r := allow(req)
				r.OptionID = o.ID
				return r
			}
			return agent.PermissionResponse{Message: interactions.RejectedText, OptionID: o.ID}
		}
		// Typed text: a rejection whose reason the agent reads.
		r := deny(agent.RejectedBecause + last.Answer)
		r.OptionID, r.Reason = rejectOption(req.Options), last.Answer
		return r
	case interactions.StatusRejected:
		r := notAnswered(last)
		r.OptionID = rejectOption(req.Options)
		return r
	default:
		return notAnswered(last) // no option: the agent reads "cancelled"
	}
}

// rejectOption is the option a rejection picks: the first reject_once,
// else the first reject_always, else none.
// pickOption is the agent's option for a decision nobody was asked about
// (an approval policy's): allow_once for an allow (never "always": the
// policy, not the agent, keeps deciding), else rejectOption.
func pickOption(opts []agent.PermissionOption, allow bool) string {
	if !allow {
		return rejectOption(opts)
	}
	for _, o := range opts {
		if o.Kind == "allow_once" {
			return o.ID
		}
	}
	return ""
}

func rejectOption(opts []agent.PermissionOption) string {
	for _, kind := range []string{"reject_once", "reject_always"} {
		for _, o := range opts {
			if o.Kind == kind {
				return o.ID
			}
		}
	}
	return ""
}

// ToolApprovalText is the question a tool approval with the agent's own
// options asks: the agent's title, the tool, and what it would do.
func ToolApprovalText(req agent.PermissionRequest) string {
	var b strings.Builder
	b.WriteString("The agent wants to use ")
	name := req.ToolName
	if name == "" {
		name = "a tool"
	}
	b.WriteString(name)
	if title := strings.TrimSpace(req.Title); title != "" && title != req.ToolName {
		b.WriteString(": " + title)
	}
	if s := strings.TrimSpace(ToolSummary(req.ToolName, req.Input)); s != "" && s != "null" && s != "{}" {
		b.WriteString("\n" + s)
	}
	return b.String()
}
