package acp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/interactions"
)

// requestPermission asks about a tool call with the agent's own options;
// the Claude adapter's ExitPlanMode is a plan review.
func (s *session) requestPermission(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	var p sdk.RequestPermissionRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	cancelled := sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}
	h := s.handler()
	if h == nil || len(p.Options) == 0 {
		return cancelled, nil // nobody to ask: no turn is running
	}
	req := s.permissionRequest(p)
	resp := h.Permission(ctx, req)
	if resp.NoAnswer && !resp.Allow {
		s.awaitStop(resp.StopFollows)
	}
	return s.permissionOutcome(ctx, p, req, resp), nil
}

func (s *session) permissionRequest(p sdk.RequestPermissionRequest) agent.PermissionRequest {
	tc := p.ToolCall
	kind, title := "", ""
	if tc.Kind != nil {
		kind = string(*tc.Kind)
	}
	if tc.Title != nil {
		title = *tc.Title
	}
	s.mu.Lock()
	name := s.tools[string(tc.ToolCallId)]
	s.mu.Unlock()
	if n := toolName(tc.Meta, kind, title, tc.RawInput); name == "" || n != kind && n != title && n != "tool" {
		name = n
	}
	input := rawJSON(tc.RawInput)
	if tc.RawInput == nil {
		input = json.RawMessage("{}")
	}
	// A diff the agent shows with the call, when its raw input does not
	// already carry the change, is shown as an Edit.
	if name != "Edit" && name != "Write" && name != "MultiEdit" {
		for _, c := range tc.Content {
			if d := c.Diff; d != nil {
				old := ""
				if d.OldText != nil {
					old = *d.OldText
				}
				name = "Edit"
				input = rawJSON(map[string]string{"file_path": d.Path, "old_string": old, "new_string": d.NewText})
				break
			}
		}
	}
	var plan struct {
		Plan *string `json:"plan"`
	}
	_ = json.Unmarshal(input, &plan)
	if plan.Plan != nil && (name == agent.ToolExitPlanMode || slices.ContainsFunc(p.Options, func(o sdk.PermissionOption) bool {
		return strings.HasPrefix(string(o.OptionId), "exit-plan")
	})) {
		name = agent.ToolExitPlanMode
	}
	opts := make([]agent.PermissionOption, len(p.Options))
	for i, o := range p.Options {
		opts[i] = agent.PermissionOption{ID: string(o.OptionId), Name: o.Name, Kind: string(o.Kind)}
	}
	return agent.PermissionRequest{ToolName: name, Input: input, ToolUseID: string(tc.ToolCallId), Options: opts, Title: title}
}

// permissionOutcome turns the engine's decision into the agent's option.
func (s *session) permissionOutcome(ctx context.Context, p sdk.RequestPermissionRequest, req agent.PermissionRequest, resp agent.PermissionResponse) sdk.RequestPermissionResponse {
	selected := func(id string, meta map[string]any) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Meta: meta, Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(id)}}}
	}
	cancelled := sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}
	if req.ToolName == agent.ToolExitPlanMode && resp.OptionID == "" {
		resp.OptionID = s.planOption(ctx, req, resp)
	}
	if resp.OptionID == "" || resp.NoAnswer && !resp.Allow {
		return cancelled
	}
	var meta map[string]any
	if !resp.Allow {
		what := req.ToolName
		if req.Title != "" && req.Title != what {
			what += " (" + req.Title + ")"
		}
		switch {
		case resp.Reason != "" && req.ToolName == agent.ToolExitPlanMode:
			meta = map[string]any{"leashd": map[string]any{"reason": resp.Reason}}
			s.addFeedback("The user reviewed your plan and wants changes before you go on:\n" + resp.Reason)
		case resp.Reason != "":
			meta = map[string]any{"leashd": map[string]any{"reason": resp.Reason}}
			s.addFeedback("The user rejected your " + what + " call, saying: " + resp.Reason)
		case req.ToolName == agent.ToolExitPlanMode && resp.Message != "" && resp.Message != interactions.RejectedText:
			// leashd could not show the plan (e.g. it was empty): the agent
			// is told why, or it would only read "keep planning".
			meta = map[string]any{"leashd": map[string]any{"reason": resp.Message}}
			s.addFeedback("Your plan was not shown to the user: " + resp.Message)
		}
	}
	return selected(resp.OptionID, meta)
}

// planOption maps a plan review's decision onto the Claude adapter's
// ExitPlanMode options: approve with auto-accept edits, approve with
// manual edits, keep planning. A clean approval (fresh context) is the
// engine's to carry out — it stops this session and starts a new one with
// the plan — so the agent is told plain "approved".
func (s *session) planOption(ctx context.Context, req agent.PermissionRequest, resp agent.PermissionResponse) string {
	byID := func(ids ...string) string {
		for _, id := range ids {
			for _, o := range req.Options {
				if o.ID == id {
					return o.ID
				}
			}
		}
		return ""
	}
	firstKind := func(kinds ...string) string {
		for _, k := range kinds {
			for _, o := range req.Options {
				if o.Kind == k && !strings.Contains(strings.ToLower(o.Name), "clear") {
					return o.ID
				}
			}
		}
		return ""
	}
	if !resp.Allow {
		if resp.NoAnswer {
			return ""
		}
		return firstKind("reject_once", "reject_always")
	}
	mode := agent.ModeDefault
	for _, u := range resp.UpdatedPermissions {
		if u.Type == "setMode" {
			mode = u.Mode
		}
	}
	if mode == agent.ModeAcceptEdits {
		if id := byID("exit-plan-accept-edits"); id != "" {
			return id
		}
		for _, o := range req.Options {
			n := strings.ToLower(o.Name)
			if o.Allows() && strings.Contains(n, "accept") && !strings.Contains(n, "clear") {
				return o.ID
			}
		}
		// No such option: approve with manual edits, then — once the agent
		// has left plan mode for its default — switch to accept-edits.
		s.mu.Lock()
		from := s.current
		s.mu.Unlock()
		go func() {
			s.awaitModeChange(from, 10*time.Second)
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if err := s.SetMode(sctx, agent.ModeAcceptEdits); err != nil {
				s.log.Warn("switching to acceptEdits after the plan was approved", "err", err)
			}
		}()
	}
	if id := byID("exit-plan-default"); id != "" {
		return id
	}
	return firstKind("allow_once", "allow_always")
}
