package engine

import "github.com/leashd/leashd/connectors"

// quorumFor is the quorum of a plan review or tool approval in chatID: the
// configured one in a group chat, else 0 (one approver).
func (e *Engine) quorumFor(chatID string) int {
	if e.opts.quorum < 2 {
		return 0
	}
	if e.isGroupChat(chatID) {
		return e.opts.quorum
	}
	return 0
}

// isGroupChat reports whether the chat's connector says several people
// share it (connectors.GroupTeller); otherwise one person answers there.
func (e *Engine) isGroupChat(chatID string) bool {
	g, ok := e.owner(chatID).(connectors.GroupTeller)
	return ok && g.IsGroupChat(chatID)
}
