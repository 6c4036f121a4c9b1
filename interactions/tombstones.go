package interactions

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
)

// tombstones remembers how recently settled interactions ended, so a late
// tap gets "expired" rather than "unknown". It is a fixed-size cache (320
// KiB, allocated on first use) of 8,192 sets of four, the oldest of a set
// replaced: of the last 8,192 settled 98% are still there, of the last
// 16,384 86%. An entry is the ID itself when it is one of ours (8 ASCII
// bytes, packed into a word) or, for any other, its 63-bit hash: ours are
// never mistaken for another, others with a chance of 2^-63. Adding one writes
// one set; a map with a ring, before, deleted the oldest and inserted the
// newest: two random probes in a table of 16,384, under the lock that taps
// wait for.
type tombstones struct {
	seed maphash.Seed
	sets []tombSet
}

const (
	tombBits = 13
	tombSets = 1 << tombBits
)

type tombSet struct {
	keys   [4]uint64
	st     [4]uint8 // index in tombStatus
	oldest uint8    // the way to replace next
}

// tombStatus are the statuses a tombstone keeps, by code; 0 is none.
var tombStatus = [...]Status{"", StatusAnswered, StatusRejected, StatusExpired, StatusCancelled, StatusInterrupted}

func newTombstones() tombstones { return tombstones{seed: maphash.MakeSeed()} }

// key is id packed into a word: our 8-character IDs as they are (ASCII:
// the top bit clear), any other by its hash with the top bit set.
func (t *tombstones) key(id string) uint64 {
	if len(id) == 8 {
		return binary.LittleEndian.Uint64([]byte(id)) &^ (1 << 63)
	}
	return maphash.String(t.seed, id) | 1<<63
}

func (t *tombstones) set(k uint64) *tombSet {
	return &t.sets[(k*0x9E3779B97F4A7C15)>>(64-tombBits)] // Fibonacci hashing
}

func (t *tombstones) add(id string, st Status) {
	if t.sets == nil {
		t.sets = make([]tombSet, tombSets)
	}
	code := slices.Index(tombStatus[:], st)
	if code <= 0 { // no other status exists
		code = slices.Index(tombStatus[:], StatusCancelled)
	}
	k := t.key(id)
	s := t.set(k)
	w := s.oldest
	s.keys[w], s.st[w] = k, uint8(code)
	s.oldest = (w + 1) % uint8(len(s.keys))
}

// status is how id ended, or "" when it is not remembered.
func (t *tombstones) status(id string) Status {
	if t.sets == nil {
		return ""
	}
	k := t.key(id)
	s := t.set(k)
	for w, x := range s.keys {
		if x == k && s.st[w] != 0 {
			return tombStatus[s.st[w]]
		}
	}
	return ""
}
