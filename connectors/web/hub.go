package web

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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
// up is closed, and its client reconnects and replays from the ring.
type hub struct {
	boot string // changes with every process: IDs of another run do not match

	mu     sync.Mutex
	seq    uint64
	ring   []event // the last len(ring) events, oldest at next when full
	next   int
	full   bool
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

func newHub(size int) *hub {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &hub{boot: hex.EncodeToString(b[:]), ring: make([]event, size), subs: make(map[*stream]struct{})}
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

func (h *hub) publish(name, chat string, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	ev := event{seq: h.seq, name: name, chat: chat, data: data}
	h.ring[h.next] = ev
	h.next = (h.next + 1) % len(h.ring)
	if h.next == 0 {
		h.full = true
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
	var out []event
	add := func(evs []event) {
		for _, ev := range evs {
			if ev.seq > after && (chat == "" || ev.chat == chat) {
				out = append(out, ev)
			}
		}
	}
	if h.full {
		add(h.ring[h.next:])
	}
	add(h.ring[:h.next])
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
