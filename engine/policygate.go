package engine

import (
	"context"
	"fmt"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/approval"

	"github.com/leashd/leashd/engine/policy"
	"github.com/leashd/leashd/interactions"
)

// PolicySource gives the approval policy in force (nil: none); it may
// change between calls (a reload). *policy.Holder implements it.
type PolicySource interface {
	Policy() *policy.Policy
}

// policyDecision evaluates the policy in force for a tool request.
func (t *turn) policyDecision(req agent.PermissionRequest) policy.Result {
	if t.e.opts.policy == nil {
		return policy.Result{Decision: policy.Ask}
	}
	p := t.e.opts.policy.Policy()
	if p == nil {
		return policy.Result{Decision: policy.Ask}
	}
	t.e.mu.Lock()
	workDir := t.c.workDir
	t.e.mu.Unlock()
	r := policy.RequestFor(req.ToolName, req.Input, t.c.id, workDir)
	r.AgentAsks = req.MustAsk()
	return p.Evaluate(r)
}

// policyDecided answers a request a policy rule allowed or denied, without
// asking anyone: the chat is told of a denial, and both are recorded in
// the audit log as a tool approval decided by "policy", the rule in the
// text.
func (t *turn) policyDecided(ctx context.Context, req agent.PermissionRequest, res policy.Result) agent.PermissionResponse {
	rule := res.Rule.Ref()
	summary := approval.ToolSummary(req.ToolName, req.Input)
	it := interactions.Interaction{ChatID: t.c.id, Kind: interactions.KindToolApproval,
		ToolName: req.ToolName, ToolInput: req.Input, ToolSummary: summary}
	rec := interactions.Resolution{Status: interactions.StatusAnswered, Decision: interactions.DecisionAllow,
		Text: "allowed by policy " + rule, By: approval.PolicyBy}
	if res.Decision == policy.Deny {
		rec = interactions.Resolution{Status: interactions.StatusRejected, Decision: interactions.DecisionDeny,
			Text: "denied by policy " + rule + ": " + res.Reason, By: approval.PolicyBy}
	}
	t.e.log.Info("tool request decided by policy", "chat", t.c.id, "tool", req.ToolName, "decision", res.Decision, "rule", rule)
	if _, err := t.e.coord.Decided(ctx, it, rec); err != nil {
		t.e.log.Error("recording a policy decision in the audit log", "chat", t.c.id, "tool", req.ToolName, "rule", rule, "err", err)
	}
	if res.Decision != policy.Deny {
		return approval.Allow(req)
	}
	t.e.say(ctx, t.c.id, fmt.Sprintf("Denied by policy %s: %s — %s: %s", rule, res.Reason, req.ToolName, approval.OneLine(summary, 200)))
	return approval.Deny(approval.PolicyDeniedPrefix + rule + ": " + res.Reason)
}
