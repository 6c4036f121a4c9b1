//go:build !race

package interactions_test

import "testing"

// maxPendingBytes is the most one pending interaction with its waiting
// goroutine may cost: 6 KiB, so a million people waiting fit in 6 GiB
// (≈ 5.4 KB measured: 1.4 KB heap, a 4 KiB stack). The stack is the part
// a change moves without anyone noticing: Go doubles it to 8 KiB once the
// asker's deepest call passes ≈ 3.1 KiB, and a GC shrinks it back only
// while the waiting goroutine uses under a quarter of it (2 KiB). A
// Resolution in Request's frame and one big frame in announce did both
// once (≈ 9–10.5 KB); keep big values off the asker's path.
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
