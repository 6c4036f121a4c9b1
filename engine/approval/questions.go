package approval

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/interactions"
)

type askInput struct {
	Questions []interactions.Question `json:"questions"`
}

// Flows asks people: *interactions.Coordinator in process, or
// interactions/client over a running leashd's HTTP API.
type Flows interface {
	Ask(ctx context.Context, chatID string, qs []interactions.Question) (interactions.AskResult, error)
	ReviewPlan(ctx context.Context, chatID, plan string) (interactions.Interaction, interactions.Resolution, error)
	ApproveTool(ctx context.Context, chatID, tool string, input json.RawMessage, summary string) (interactions.Interaction, interactions.Resolution, error)
}

var _ Flows = (*interactions.Coordinator)(nil)

// Questions puts AskUserQuestion's questions to people one at a time
// and allows it with the answers attached; unreadable says why the input
// could not be read or asked as given ("" when it could).
func Questions(ctx context.Context, f Flows, chatID string, req agent.PermissionRequest) (resp agent.PermissionResponse, unreadable string) {
	var in askInput
	if err := json.Unmarshal(req.Input, &in); err != nil || len(in.Questions) == 0 {
		why := "it has no questions"
		if err != nil {
			why = err.Error()
		}
		return Deny("leashd could not read the AskUserQuestion input (" + why + "); expected {\"questions\":[{\"question\",\"header\",\"options\":[{\"label\",\"description\"}],\"multiSelect\"}]}."), why
	}
	res, err := f.Ask(ctx, chatID, in.Questions)
	if errors.Is(err, interactions.ErrInvalid) {
		// Over the limits (e.g. 11 options): the agent may ask again.
		return Deny("The question could not be asked: " + err.Error()), err.Error()
	}
	if err != nil {
		return Deny("The question could not be asked: " + err.Error()), ""
	}
	if !res.Complete() {
		return NotAnswered(res.Last), ""
	}
	updated, err := withAnswers(req.Input, res.Answers)
	if err != nil {
		return Deny("leashd could not attach the answers: " + err.Error()), ""
	}
	return agent.PermissionResponse{Allow: true, UpdatedInput: updated, Classification: agent.ClassUserTemporary}, ""
}

// AskPermission decides a permission request of an agent leashd did not
// start — one run with a --permission-prompt-tool pointing at
// leashd's MCP server — through f in chatID, as for the CLI leashd runs:
// AskUserQuestion becomes questions asked one at a time (allowed with the
// answers attached), ExitPlanMode a plan review (approve sets the mode:
// acceptEdits for the edit decisions, default otherwise; adjust denies with
// the feedback), any other tool a tool approval. There is no session here:
// no rules are kept. Nor is a plan file read: a program's request never
// makes leashd open a file, so an ExitPlanMode needs its plan inline.
func AskPermission(ctx context.Context, f Flows, chatID string, req agent.PermissionRequest) agent.PermissionResponse {
	switch req.ToolName {
	case agent.ToolAskUserQuestion:
		resp, _ := Questions(ctx, f, chatID, req)
		return resp
	case agent.ToolExitPlanMode:
		_, shown, refusal, _ := PlanOf(req.Input, "")
		if refusal != "" {
			return Deny(refusal)
		}
		_, res, err := f.ReviewPlan(ctx, chatID, shown)
		if err != nil {
			return Deny("The plan could not be shown: " + err.Error())
		}
		if res.Status != interactions.StatusAnswered {
			if res.Decision == interactions.DecisionAdjust {
				return Rejected(res.Text) // the feedback, as the person wrote it
			}
			return NotAnswered(res)
		}
		mode := agent.ModeAcceptEdits
		if res.Decision == interactions.DecisionDefault {
			mode = agent.ModeDefault
		}
		return AllowedBy(agent.ClassUserTemporary, req, agent.PermissionUpdate{Type: "setMode", Mode: mode, Destination: "session"})
	default:
		_, res, err := f.ApproveTool(ctx, chatID, req.ToolName, req.Input, ToolSummary(req.ToolName, req.Input))
		if err != nil {
			return Deny("The approval could not be asked: " + err.Error())
		}
		if res.Status != interactions.StatusAnswered {
			return NotAnswered(res)
		}
		if res.Decision == interactions.DecisionAllowSession {
			return AllowedBy(agent.ClassUserPermanent, req, agent.PermissionUpdate{Type: "addRules", Rules: SessionRules(req), Behavior: "allow", Destination: "session"})
		}
		return AllowedBy(agent.ClassUserTemporary, req)
	}
}

// withAnswers returns the tool input with "answers" set, every other field
// kept as the agent sent it.
func withAnswers(input json.RawMessage, answers map[string]string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(input, &m); err != nil {
		return nil, err
	}
	a, err := json.Marshal(answers)
	if err != nil {
		return nil, err
	}
	m["answers"] = a
	return json.Marshal(m)
}
