package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/leashd/leashd/engine/agent"
	"slices"
	"time"

	"github.com/leashd/leashd/interactions"
)

// allowedAgain is a tool call a person allowed after a restart. The agent
// learns of the answer from a prompt ("The user allowed it. Run it again to
// continue.") and re-issues the call; that identical call (same tool, same
// input, same chat, within the turn carrying the answer) is allowed once
// without asking the person a second time.
type allowedAgain struct {
	from  string // the interaction the person answered
	tool  string
	input json.RawMessage
	res   interactions.Resolution
}

// allowAgain is the call a recovered answer allows again: nil unless it is
// a tool approval the person allowed.
func allowAgain(it interactions.Interaction, res interactions.Resolution) *allowedAgain {
	if it.Kind != interactions.KindToolApproval || res.Status != interactions.StatusAnswered ||
		(res.Decision != interactions.DecisionAllow && res.Decision != interactions.DecisionAllowSession) {
		return nil
	}
	return &allowedAgain{from: it.ID, tool: it.ToolName, input: it.ToolInput, res: res}
}

// sameInput reports whether two tool inputs are the same JSON value (key
// order and spacing aside).
func sameInput(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x) // maps marshal with sorted keys
	yb, _ := json.Marshal(y)
	return bytes.Equal(xa, yb)
}

// allowedAgain allows req without asking when it is the call a person
// allowed after the restart, once per answer, and records it in the audit
// log linked to that answer.
func (t *turn) allowedAgain(ctx context.Context, req agent.PermissionRequest) (agent.PermissionResponse, bool) {
	t.mu.Lock()
	a := t.again
	if a == nil || a.tool != req.ToolName || !sameInput(a.input, req.Input) {
		t.mu.Unlock()
		return agent.PermissionResponse{}, false
	}
	t.again = nil
	t.mu.Unlock()

	id := a.from + ".again"
	t.e.log.Info("tool call allowed again: the user allowed it after the restart", "chat", t.c.id, "tool", req.ToolName, "id", id, "recovered_from", a.from)
	if r, ok := t.e.opts.recovery.(AllowedAgainRecorder); ok {
		now := time.Now()
		it := interactions.Interaction{ID: id, ChatID: t.c.id, Kind: interactions.KindToolApproval,
			Options: slices.Clone(interactions.ToolOptions), ToolName: req.ToolName, ToolInput: req.Input,
			ToolSummary: ToolSummary(req.ToolName, req.Input), AskedAt: now}
		res := a.res
		res.At = now
		res.Text = "allowed after the restart (interaction " + a.from + ")"
		if err := r.AllowedAgain(ctx, it, res, a.from); err != nil {
			t.e.log.Error("recording a tool call allowed after the restart", "id", id, "err", err)
		}
	}
	if a.res.Decision == interactions.DecisionAllowSession {
		rules := sessionRules(req)
		t.rules.add(rules)
		return allow(req, agent.PermissionUpdate{Type: "addRules", Rules: rules, Behavior: "allow", Destination: "session"}), true
	}
	return allowedBy(agent.ClassUserTemporary, req), true
}
