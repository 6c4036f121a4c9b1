//go:build !race

package interactions_test

import "testing"

// maxPendingBytes is the most one pending interaction with its waiting
// goroutine may cost: 6 KiB, so a million people waiting fit in 6 GiB.
const maxPendingBytes = 6 << 10

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
