package web

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// event is one server-sent event, numbered in publish order.
type event struct {
	seq  uint64
	name string
	chat string
	data []byte // JSON, one line
}

// hub numbers events, keeps the most recent ones for replay (a page that
// reconnects sends Last-Event-ID and gets what it missed) and fans them out
// to the open streams. Publishing never blocks: a stream that cannot keep
// up is closed, and its client reconnects and replays from what is kept.
//
// What is kept is bounded by count and by bytes; an update of a streamed
// message replaces the previous update of that message, so a long stream
// of text keeps one copy, not one per chunk.
type hub struct {
	boot     string // changes with every process: IDs of another run do not match
	maxKeep  int
	maxBytes int

	mu     sync.Mutex
	seq    uint64
	kept   []event // oldest first, seq increasing (not contiguous)
	bytes  int
	subs   map[*stream]struct{}
	closed bool
}

// stream is one open event stream.
type stream struct {
	chat string // "" for every chat
	ch   chan event
}

// streamBuffer is how many events a stream may lag behind before it is
// dropped (and replays after reconnecting).
const streamBuffer = 512

var errHubClosed = errors.New("the server is shutting down")

func newHub(maxKeep, maxBytes int) *hub {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &hub{boot: hex.EncodeToString(b[:]), maxKeep: maxKeep, maxBytes: maxBytes, subs: make(map[*stream]struct{})}
}

// id renders an event's SSE ID.
func (h *hub) id(seq uint64) string { return h.boot + "-" + strconv.FormatUint(seq, 10) }

// parseEventID reads an event ID as sent in Last-Event-ID or ?after=: a
// boot and a sequence number "<boot>-<seq>", or a bare number (0 means from
// the start of what is kept). ok is false when the ID is malformed.
func parseEventID(s string) (boot string, seq uint64, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", 0, errors.New("empty event ID")
	}
	num := s
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		boot, num = s[:i], s[i+1:]
		if boot == "" || len(boot) > 32 {
			return "", 0, fmt.Errorf("event ID %q: expected <boot>-<number> or a number", s)
		}
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("event ID %q: expected <boot>-<number> or a number", s)
	}
	return boot, n, nil
}

// publish sends an event to the streams and keeps it; replaces, when not
// 0, is the seq of a kept event this one makes obsolete (dropped from what
// is kept). It returns the event's seq.
func (h *hub) publish(name, chat string, data []byte, replaces uint64) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	ev := event{seq: h.seq, name: name, chat: chat, data: data}
	if replaces != 0 {
		if i, ok := slices.BinarySearchFunc(h.kept, replaces, func(e event, s uint64) int { return cmp.Compare(e.seq, s) }); ok {
			h.bytes -= len(h.kept[i].data)
			h.kept = slices.Delete(h.kept, i, i+1)
		}
	}
	h.kept = append(h.kept, ev)
	h.bytes += len(data)
	drop := 0
	for drop < len(h.kept)-1 && (len(h.kept)-drop > h.maxKeep || h.bytes > h.maxBytes) {
		h.bytes -= len(h.kept[drop].data)
		drop++
	}
	if drop > 0 {
		h.kept = slices.Delete(h.kept, 0, drop)
	}
	for s := range h.subs {
		if s.chat != "" && s.chat != chat {
			continue
		}
		select {
		case s.ch <- ev:
		default: // too slow: drop it; it replays after reconnecting
			delete(h.subs, s)
			close(s.ch)
		}
	}
	return ev.seq
}

// subscribe opens a stream for chat ("" for all) and returns, atomically
// with it, the kept events after the given position: replay=false gives
// none; a boot other than this process's gives all kept events.
func (h *hub) subscribe(chat string, replay bool, boot string, after uint64) (*stream, []event, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, errHubClosed
	}
	var past []event
	if replay {
		if boot != "" && boot != h.boot {
			after = 0
		}
		past = h.sinceLocked(chat, after)
	}
	s := &stream{chat: chat, ch: make(chan event, streamBuffer)}
	h.subs[s] = struct{}{}
	return s, past, nil
}

func (h *hub) sinceLocked(chat string, after uint64) []event {
	i, _ := slices.BinarySearchFunc(h.kept, after+1, func(e event, s uint64) int { return cmp.Compare(e.seq, s) })
	var out []event
	for _, ev := range h.kept[i:] {
		if chat == "" || ev.chat == chat {
			out = append(out, ev)
		}
	}
	return out
}

func (h *hub) unsubscribe(s *stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.ch)
	}
}

// close ends every stream and refuses new ones (shutdown).
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		delete(h.subs, s)
		close(s.ch)
	}
}
