package approval

import (
	"bytes"
	"encoding/json"

	"github.com/leashd/leashd/interactions"
)

// Again is a tool call a person allowed after a restart. The agent
// learns of the answer from a prompt ("The user allowed it. Run it again to
// continue.") and re-issues the call; that identical call (same tool, same
// input, same chat, within the turn carrying the answer) is allowed once
// without asking the person a second time.
type Again struct {
	From  string // the interaction the person answered
	Tool  string
	Input json.RawMessage
	Res   interactions.Resolution
}

// AgainFor is the call a recovered answer allows again: nil unless it is
// a tool approval the person allowed.
func AgainFor(it interactions.Interaction, res interactions.Resolution) *Again {
	if it.Kind != interactions.KindToolApproval || res.Status != interactions.StatusAnswered ||
		(res.Decision != interactions.DecisionAllow && res.Decision != interactions.DecisionAllowSession) {
		return nil
	}
	return &Again{From: it.ID, Tool: it.ToolName, Input: it.ToolInput, Res: res}
}

// SameInput reports whether two tool inputs are the same JSON value (key
// order and spacing aside).
func SameInput(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x) // maps marshal with sorted keys
	yb, _ := json.Marshal(y)
	return bytes.Equal(xa, yb)
}
