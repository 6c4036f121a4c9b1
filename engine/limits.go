package engine

import "fmt"

// TruncatedNote ends text cut to a limit (an agent message over
// LEASHD_MAX_AGENT_MESSAGE_BYTES, a turn's output over
// LEASHD_MAX_TURN_OUTPUT_BYTES): "… truncated (N bytes)", N being the bytes
// left out.
func TruncatedNote(n int) string { return fmt.Sprintf("… truncated (%d bytes)", n) }
