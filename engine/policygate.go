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

// evalPolicy evaluates the policy in force for a tool request in chatID,
// whose working directory is workDir.
func (e *Engine) evalPolicy(chatID, workDir string, req agent.PermissionRequest) policy.Result {
	if e.opts.policy == nil {
		return policy.Result{Decision: policy.Ask}
	}
	p := e.opts.policy.Policy()
	if p == nil {
		return policy.Result{Decision: policy.Ask}
	}
	r := policy.RequestFor(req.ToolName, req.Input, chatID, workDir)
	r.AgentAsks = req.MustAsk()
	return p.Evaluate(r)
}

// toolPolicy is what applies to a tool request before anyone is asked,
// for an agent's request and a program's alike: decides is true when the
// policy allows or denies it at once (pol says how and by which rule) — a
// quorum rule in a chat of one person is denied, as nobody else could
// approve there — and quorum is how many approvers are needed otherwise:
// the policy's or the group chat's, whichever asks for more.
func (e *Engine) toolPolicy(chatID, workDir string, req agent.PermissionRequest) (pol policy.Result, decides bool, quorum int) {
	pol = e.evalPolicy(chatID, workDir, req)
	if pol.Rule != nil && (pol.Decision == policy.Allow || pol.Decision == policy.Deny) {
		return pol, true, 0
	}
	if pol.Quorum > 1 && !e.isGroupChat(chatID) {
		// Nobody else can approve in a one-person chat (a private chat, the
		// page, the terminal): the policy's requirement stands, at once
		// rather than after the timeout.
		pol.Decision = policy.Deny
		pol.Reason = fmt.Sprintf("it needs %d approvers and this chat has one person; ask in a group chat (a Telegram group or Slack channel) where the approvers are", pol.Quorum)
		return pol, true, 0
	}
	return pol, false, max(pol.Quorum, e.quorumFor(chatID))
}

// policyVerdict is a tool request in chatID a policy rule allowed or
// denied, as it is recorded: the interaction and how it ended, decided by
// "policy" with the rule in the text. The chat is told of a denial.
func (e *Engine) policyVerdict(ctx context.Context, chatID string, req agent.PermissionRequest, res policy.Result) (interactions.Interaction, interactions.Resolution) {
	rule := res.Rule.Ref()
	summary := approval.ToolSummary(req.ToolName, req.Input)
	it := interactions.Interaction{ChatID: chatID, Kind: interactions.KindToolApproval,
		ToolName: req.ToolName, ToolInput: req.Input, ToolSummary: summary}
	rec := interactions.Resolution{Status: interactions.StatusAnswered, Decision: interactions.DecisionAllow,
		Text: "allowed by policy " + rule, By: approval.PolicyBy}
	if res.Decision == policy.Deny {
		rec = interactions.Resolution{Status: interactions.StatusRejected, Decision: interactions.DecisionDeny,
			Text: "denied by policy " + rule + ": " + res.Reason, By: approval.PolicyBy}
		e.say(ctx, chatID, fmt.Sprintf("Denied by policy %s: %s — %s: %s", rule, res.Reason, req.ToolName, approval.OneLine(summary, 200)))
	}
	e.log.Info("tool request decided by policy", "chat", chatID, "tool", req.ToolName, "decision", res.Decision, "rule", rule)
	return it, rec
}

func (t *turn) workDir() string {
	t.e.mu.Lock()
	defer t.e.mu.Unlock()
	return t.c.workDir
}

// diffDir is where a file change's diff reads the file as it is now: the
// chat's working directory, or "" (nothing read; the edit's own text is
// diffed) for an agent on a runner, whose files are on that machine: a
// file at the same path here is another file.
func (t *turn) diffDir() string {
	if t.e.onRunner(t.c.id) {
		return ""
	}
	return t.workDir()
}

// policyDecided answers a request a policy rule allowed or denied, without
// asking anyone: the chat is told of a denial, and both are recorded in
// the audit log as a tool approval decided by "policy", the rule in the
// text.
func (t *turn) policyDecided(ctx context.Context, req agent.PermissionRequest, res policy.Result) agent.PermissionResponse {
	it, rec := t.e.policyVerdict(ctx, t.c.id, req, res)
	if _, err := t.e.coord.Decided(ctx, it, rec); err != nil {
		t.e.log.Error("recording a policy decision in the audit log", "chat", t.c.id, "tool", req.ToolName, "rule", res.Rule.Ref(), "err", err)
	}
	if res.Decision != policy.Deny {
		return approval.Allow(req)
	}
	return approval.Deny(approval.PolicyDeniedPrefix + res.Rule.Ref() + ": " + res.Reason)
}

// programGate is the coordinator's ProgramGate (interactions.ProgramGate):
// a program's tool approval (the API's, MCP permission_prompt) meets the
// policy as an agent's does (toolPolicy), and is decided at once by an
// allow or deny rule, or given the approvers it needs; its plan reviews
// and yes/no approvals (kind approval, request_approval, leashd ask
// --approval) get the chat's quorum, and only approvers decide them.
func (e *Engine) programGate(ctx context.Context, it *interactions.Interaction) (interactions.Resolution, bool, error) {
	switch {
	case it.Kind == interactions.KindPlanReview:
		it.Quorum = max(it.Quorum, e.quorumFor(it.ChatID))
		return interactions.Resolution{}, false, nil
	case it.IsYesNo():
		// A program's approval decides what happens, as a tool approval
		// does: approvers answer it, as many as the chat's quorum.
		it.ForApprovers = true
		it.Quorum = max(it.Quorum, e.quorumFor(it.ChatID))
		return interactions.Resolution{}, false, nil
	case it.Kind != interactions.KindToolApproval:
		return interactions.Resolution{}, false, nil
	}
	req := agent.PermissionRequest{ToolName: it.ToolName, Input: it.ToolInput}
	workDir := e.programWorkDir(it.ChatID)
	if it.FromHook() {
		// A hook's request is the terminal session's: judged where it
		// runs, and with no "allow for this session": the session is not
		// leashd's to keep a rule for, and the agent need not keep one a
		// hook returns (one CLI asked the same command again).
		if it.Source.Cwd != "" {
			workDir = it.Source.Cwd
		}
		it.NoSessionAllow = true
		it.Options = interactions.ToolOptionsFor(*it)
	}
	pol, decides, quorum := e.toolPolicy(it.ChatID, workDir, req)
	if decides {
		_, rec := e.policyVerdict(ctx, it.ChatID, req, pol)
		return rec, true, nil
	}
	it.Quorum = max(it.Quorum, quorum)
	if it.Diff == "" {
		it.Diff = approval.ToolDiff(workDir, it.ToolName, it.ToolInput)
	}
	return interactions.Resolution{}, false, nil
}

// programWorkDir is the working directory a program's request in chatID is
// judged against: the chat's, or the engine's when the chat has none yet.
func (e *Engine) programWorkDir(chatID string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c := e.chats[chatID]; c != nil && c.workDir != "" {
		return c.workDir
	}
	return e.opts.workDir
}
