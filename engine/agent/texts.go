package agent

import "fmt"

// Tools the engine treats specially.
const (
	ToolAskUserQuestion = "AskUserQuestion"
	ToolExitPlanMode    = "ExitPlanMode"
)

// RejectedBecause starts what the agent reads when a person rejects a
// request outright and says why; the reason follows. Without a reason it
// reads interactions.RejectedText.
const RejectedBecause = "The user rejected this request: "

// RecoveredPromptPrefix starts the prompt that carries an answer given
// after a restart to the agent; agents may recognise it.
const RecoveredPromptPrefix = "[leashd: answer recovered after restart]"

// TruncatedNote ends text cut to a limit (an agent message over
// LEASHD_MAX_AGENT_MESSAGE_BYTES, a turn's output over
// LEASHD_MAX_TURN_OUTPUT_BYTES): "… truncated (N bytes)", N being the bytes
// left out.
func TruncatedNote(n int) string { return fmt.Sprintf("… truncated (%d bytes)", n) }

// Prewarmer is implemented by agents whose sessions are worth starting
// before anyone asks (a CLI process that takes most of a second to start
// and initialize): with LEASHD_PREWARM, the engine keeps that many spare sessions
// open, and a new chat's first prompt goes to a spare instead of waiting
// for a start. Agents whose sessions cost nothing to open (the demo agent)
// do not implement it.
type Prewarmer interface {
	Prewarm() bool
}
