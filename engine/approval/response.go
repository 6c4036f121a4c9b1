package approval

import (
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/interactions"
)

func Allow(req agent.PermissionRequest, updates ...agent.PermissionUpdate) agent.PermissionResponse {
	return agent.PermissionResponse{Allow: true, UpdatedInput: req.Input, UpdatedPermissions: updates}
}

// AllowedBy is an allow a person gave: once (ClassUserTemporary) or by a
// rule they made (ClassUserPermanent).
func AllowedBy(class string, req agent.PermissionRequest, updates ...agent.PermissionUpdate) agent.PermissionResponse {
	r := Allow(req, updates...)
	r.Classification = class
	return r
}

func Deny(msg string) agent.PermissionResponse { return agent.PermissionResponse{Message: msg} }

// Rejected is a denial a person gave.
func Rejected(msg string) agent.PermissionResponse {
	return agent.PermissionResponse{Message: msg, Classification: agent.ClassUserReject}
}

// NotAnswered is what the agent reads when nobody answered.
func NotAnswered(res interactions.Resolution) agent.PermissionResponse {
	switch res.Status {
	case interactions.StatusRejected:
		if res.Decision == interactions.DecisionReject && res.Text != "" && res.Text != interactions.RejectedText {
			r := Rejected(agent.RejectedBecause + res.Text) // a rejection with the person's reason
			r.Reason = res.Text
			return r
		}
		if res.Decision == interactions.DecisionDeny && res.Text != "" && res.Text != "The user denied this tool call." {
			r := Rejected(res.Text)
			r.Reason = res.Text
			return r
		}
		return Rejected(OrDefault(res.Text, interactions.RejectedText))
	case interactions.StatusInterrupted:
		// res.Text is the notice for people; the agent is told what happens.
		return agent.PermissionResponse{Message: "leashd is restarting; if the user answers after the restart, the answer arrives as a new prompt.", Interrupt: true, NoAnswer: true}
	default:
		return agent.PermissionResponse{Message: OrDefault(res.Text, "No answer was given."), NoAnswer: true}
	}
}

func OrDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
