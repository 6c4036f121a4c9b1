package interactions

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Tombstones remember how the last maxTombstones settled interactions
// ended, forget the oldest beyond that, and know nothing of IDs never
// settled.
func TestTombstonesRememberTheRecentlySettled(t *testing.T) {
	var tb tombstones
	assert.Equal(t, Status(""), tb.status("AAAAAAAA"), "empty")
	tb.add("restored-q1", StatusExpired)
	tb.add("restored-q1", StatusAnswered) // again: updated, not twice
	for i := range maxTombstones - 1 {
		tb.add(strconv.Itoa(i), StatusCancelled)
	}
	assert.Equal(t, StatusAnswered, tb.status("restored-q1"))
	assert.Equal(t, StatusCancelled, tb.status("0"))

	tb.add("newest", StatusRejected)
	assert.Equal(t, Status(""), tb.status("restored-q1"), "the oldest is forgotten")
	assert.Equal(t, StatusCancelled, tb.status("0"))
	assert.Equal(t, StatusRejected, tb.status("newest"))
	assert.Len(t, tb.byID, maxTombstones)
	assert.Equal(t, Status(""), tb.status(newID()))
}
