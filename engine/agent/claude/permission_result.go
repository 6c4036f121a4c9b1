package claude

import (
	"encoding/json"

	"github.com/leashd/leashd/engine/agent"
)

// PermissionResult renders a decision on a tool call with the given input
// as Claude Code reads it — {"behavior":"allow","updatedInput":…} or
// {"behavior":"deny","message":…} — for its control protocol and for a
// --permission-prompt-tool's result alike.
func PermissionResult(input json.RawMessage, resp agent.PermissionResponse) any {
	return permissionBody(controlRequest{Input: input}, resp)
}
