package interactions

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The clock's times agree with time.Now's (wall and monotonic), across
// re-anchoring, and never go backwards.
func TestClockAgreesWithTimeNow(t *testing.T) {
	var k clock
	prev := k.now()
	deadline := time.Now().Add(2*reanchor + 200*time.Millisecond)
	for time.Now().Before(deadline) {
		before := time.Now()
		got := k.now()
		after := time.Now()
		assert.False(t, got.Before(prev), "went backwards: %s after %s", got, prev)
		assert.False(t, got.Before(before) || got.After(after), "monotonic: %s not within [%s, %s]", got, before, after)
		// The wall reading (Round(0) drops the monotonic one) too, give or
		// take the wall clock's slew since the anchor.
		wall, slew := got.Round(0), 5*time.Millisecond
		assert.False(t, wall.Before(before.Round(0).Add(-slew)) || wall.After(after.Round(0).Add(slew)),
			"wall: %s not within [%s, %s]", wall, before.Round(0), after.Round(0))
		prev = got
		time.Sleep(10 * time.Millisecond)
	}
}
