package engine

import (
	"context"
	"fmt"
	"github.com/leashd/leashd/engine/agent"
	"strings"

	"github.com/leashd/leashd/engine/policy"
	"github.com/leashd/leashd/interactions"
)

// PolicySource gives the approval policy in force (nil: none); it may
// change between calls (a reload). *policy.Holder implements it.
type PolicySource interface {
	Policy() *policy.Policy
}

// WithPolicy decides tool permission requests by an approval policy
// before anyone is asked (LEASHD_POLICY_FILE).
func WithPolicy(p PolicySource) Option { return func(o *options) { o.policy = p } }

// PolicyBy is the "by" of a decision an approval policy made, in the
// audit log.
const PolicyBy = "policy"

// PolicyDeniedPrefix starts what the agent reads when a policy rule denies
// a call: "Denied by leashd policy rule 2 (line 7): <reason>".
const PolicyDeniedPrefix = "Denied by leashd policy "

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
	summary := ToolSummary(req.ToolName, req.Input)
	it := interactions.Interaction{ChatID: t.c.id, Kind: interactions.KindToolApproval,
		ToolName: req.ToolName, ToolInput: req.Input, ToolSummary: summary}
	rec := interactions.Resolution{Status: interactions.StatusAnswered, Decision: interactions.DecisionAllow,
		Text: "allowed by policy " + rule, By: PolicyBy}
	if res.Decision == policy.Deny {
		rec = interactions.Resolution{Status: interactions.StatusRejected, Decision: interactions.DecisionDeny,
			Text: "denied by policy " + rule + ": " + res.Reason, By: PolicyBy}
	}
	t.e.log.Info("tool request decided by policy", "chat", t.c.id, "tool", req.ToolName, "decision", res.Decision, "rule", rule)
	if _, err := t.e.coord.Decided(ctx, it, rec); err != nil {
		t.e.log.Error("recording a policy decision in the audit log", "chat", t.c.id, "tool", req.ToolName, "rule", rule, "err", err)
	}
	if res.Decision != policy.Deny {
		return allow(req)
	}
	t.e.say(ctx, t.c.id, fmt.Sprintf("Denied by policy %s: %s — %s: %s", rule, res.Reason, req.ToolName, oneLine(summary, 200)))
	return deny(PolicyDeniedPrefix + rule + ": " + res.Reason)
}

// oneLine is the first line of s, at most n characters, marked when cut.
func oneLine(s string, n int) string {
	first, _, more := strings.Cut(s, "\n")
	r := []rune(first)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	if more {
		return first + " …"
	}
	return first
}
