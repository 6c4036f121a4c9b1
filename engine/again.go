package engine

import (
	"context"
	"slices"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/approval"

	"github.com/leashd/leashd/interactions"
)

// allowedAgain allows req without asking when it is the call a person
// allowed after the restart, once per answer, and records it in the audit
// log linked to that answer.
func (t *turn) allowedAgain(ctx context.Context, req agent.PermissionRequest) (agent.PermissionResponse, bool) {
	t.mu.Lock()
	a := t.again
	if a == nil || a.Tool != req.ToolName || !approval.SameInput(a.Input, req.Input) {
		t.mu.Unlock()
		return agent.PermissionResponse{}, false
	}
	t.again = nil
	t.mu.Unlock()

	id := a.From + ".again"
	t.e.log.Info("tool call allowed again: the user allowed it after the restart", "chat", t.c.id, "tool", req.ToolName, "id", id, "recovered_from", a.From)
	if t.e.opts.persistent {
		now := time.Now()
		it := interactions.Interaction{ID: id, ChatID: t.c.id, Kind: interactions.KindToolApproval,
			Options: slices.Clone(interactions.ToolOptions), ToolName: req.ToolName, ToolInput: req.Input,
			ToolSummary: approval.ToolSummary(req.ToolName, req.Input), AskedAt: now}
		res := a.Res
		res.At = now
		res.Text = "allowed after the restart (interaction " + a.From + ")"
		if err := t.e.store.AllowedAgain(ctx, it, res, a.From); err != nil {
			t.e.log.Error("recording a tool call allowed after the restart", "id", id, "err", err)
		}
	}
	if a.Res.Decision == interactions.DecisionAllowSession {
		rules := approval.SessionRules(req)
		t.rules.Add(rules)
		return approval.Allow(req, agent.PermissionUpdate{Type: "addRules", Rules: rules, Behavior: "allow", Destination: "session"}), true
	}
	return approval.AllowedBy(agent.ClassUserTemporary, req), true
}
