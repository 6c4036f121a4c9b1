//go:build !unix

package agentproc

import "time"

// EndGroup does nothing where there are no process groups: the agent's
// process alone was waited for.
func EndGroup(int, time.Duration) {}
