//go:build !race

package interactions_test

import "testing"

// maxPendingBytes is the most one pending interaction with its waiting
// goroutine may cost: 10 KiB, so a million people waiting fit in 10 GiB.
// It was 6 KiB: the waiting goroutine's stack sat just under 4 KiB, and
// the agent's request ID (Interaction.AgentRef, Resolution.Joined, for
// runner agents that outlive a restart) pushed its deepest frame past
// it, so Go doubled it to 8 KiB. Winning it back means passing the
// Interaction by pointer along the asker's path.
const maxPendingBytes = 10 << 10

// TestPendingInteractionMemoryIsBounded guards the memory target of
// BenchmarkPendingMemory: a bigger frame on the asker's path doubles every
// waiting goroutine's stack (Go keeps the deepest stack a goroutine
// reached), which a review does not see. It runs without the race
// detector, which changes every size (.ci/test runs it separately).
func TestPendingInteractionMemoryIsBounded(t *testing.T) {
	const n = 1_000
	warmGoroutines(n)
	heap, stack := pendingCost(t, n)
	t.Logf("%.0f B per pending interaction: %.0f heap + %.0f stack", heap+stack, heap, stack)
	if heap+stack > maxPendingBytes {
		t.Errorf("a pending interaction costs %.0f B (%.0f heap + %.0f stack); at most %d", heap+stack, heap, stack, maxPendingBytes)
	}
}
