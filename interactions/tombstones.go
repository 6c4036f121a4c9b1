package interactions

// tombstones remembers how the most recently settled interactions ended, so
// that a late tap on one (a message tapped after it expired, say) is told
// "it was expired" rather than "no such interaction". It keeps the last
// maxTombstones: a map from ID to status, and the IDs in the order they
// were added, so that the oldest is forgotten when a new one comes. Under
// the coordinator's mu.
type tombstones struct {
	byID  map[string]Status
	order []string // a ring: next is the oldest once it is full
	next  int
}

// maxTombstones bounds the memory kept for late taps (a megabyte or two): at a
// few interactions a second, hours' worth.
const maxTombstones = 16384

// add remembers that id ended with st.
func (t *tombstones) add(id string, st Status) {
	if t.byID == nil {
		t.byID = make(map[string]Status)
		t.order = make([]string, 0, maxTombstones)
	}
	if _, ok := t.byID[id]; ok {
		t.byID[id] = st // remembered already: keep its place
		return
	}
	if len(t.order) < maxTombstones {
		t.order = append(t.order, id)
	} else {
		delete(t.byID, t.order[t.next])
		t.order[t.next] = id
		t.next = (t.next + 1) % maxTombstones
	}
	t.byID[id] = st
}

// status is how id ended, or "" when it is not remembered.
func (t *tombstones) status(id string) Status { return t.byID[id] }
