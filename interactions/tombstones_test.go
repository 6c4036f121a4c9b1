package interactions

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Tombstones remember how the last settled interactions ended, for our IDs
// and any other, and know nothing of IDs never settled.
func TestTombstonesRememberTheRecentlySettled(t *testing.T) {
	tb := newTombstones()
	assert.Equal(t, Status(""), tb.status("AAAAAAAA"), "empty")
	ids := make([]string, 2000)
	for i := range ids {
		ids[i] = newID()
		tb.add(ids[i], tombStatus[1+i%(len(tombStatus)-1)])
	}
	tb.add("restored-q1", StatusExpired) // not one of ours: hashed
	missing := 0
	for i, id := range ids {
		switch got := tb.status(id); got {
		case "":
			missing++ // evicted from a full set: rare at 2,000 of 32,768
		default:
			assert.Equal(t, tombStatus[1+i%(len(tombStatus)-1)], got, id)
		}
	}
	assert.Less(t, missing, 20)
	assert.Equal(t, StatusExpired, tb.status("restored-q1"))
	assert.Equal(t, Status(""), tb.status("restored-q2"))
	assert.Equal(t, Status(""), tb.status(newID()))
}
