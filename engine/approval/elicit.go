package approval

import (
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/interactions"
)

// ElicitAction maps how a question ended to the elicitation's action.
func ElicitAction(res interactions.Resolution, content map[string]any) agent.ElicitationResponse {
	switch res.Status {
	case interactions.StatusAnswered:
		return agent.ElicitationResponse{Action: agent.ElicitAccept, Content: content}
	case interactions.StatusRejected:
		return agent.ElicitationResponse{Action: agent.ElicitDecline}
	}
	return agent.ElicitationResponse{Action: agent.ElicitCancel}
}
