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
//
// A replay is read from what is kept one event at a time (replayNext), as
// the client takes it: a stream holds no copy of the replay, so memory does
// not grow with streams whose clients read slowly or not at all. The
// number of open streams is capped (maxStreams).
type hub struct {
	boot       string // changes with every process: IDs of another run do not match
	maxKeep    int
	maxBytes   int
	maxStreams int // 0: no cap

	mu     sync.Mutex
	seq    uint64
	kept   []event // oldest first, seq increasing (not contiguous)
	bytes  int
	subs   map[*stream]struct{}
	open   int  // streams subscribed and not yet unsubscribed (dropped ones too)
	closed bool // no new streams: shutting down
	shut   bool // close was called: the streams are ending
	// ended is closed once the hub is shut and every stream has ended.
	ended chan struct{}
}

// stream is one open event stream.
type stream struct {
	chat string // "" for every chat
	ch   chan event
	// The replay: kept events with after < seq <= until; later ones
	// come through ch. after advances as replayNext returns events.
	after, until uint64
	replay       bool
	done         bool // unsubscribed
}

// streamBuffer is how many events a stream may lag behind before it is
// dropped (and replays after reconnecting).
const streamBuffer = 512

var errHubClosed = errors.New("the server is shutting down")

// errTooManyStreams is returned by subscribe when maxStreams are open.
var errTooManyStreams = errors.New("too many event streams open")

func newHub(maxKeep, maxBytes, maxStreams int) *hub {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &hub{boot: hex.EncodeToString(b[:]), maxKeep: maxKeep, maxBytes: maxBytes, maxStreams: maxStreams, subs: make(map[*stream]struct{}), ended: make(chan struct{})}
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
		if s.chat != "" && chat != "" && s.chat != chat {
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

// subscribe opens a stream for chat ("" for all). With replay, the kept
// events after the given position are to be read with replayNext before
// what comes through the stream's channel (a boot other than this
// process's replays all kept events); replay=false gives none. It fails
// when shutting down or when maxStreams streams are open.
func (h *hub) subscribe(chat string, replay bool, boot string, after uint64) (*stream, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errHubClosed
	}
	if h.maxStreams > 0 && h.open >= h.maxStreams {
		return nil, errTooManyStreams
	}
	if boot != "" && boot != h.boot {
		after = 0
	}
	s := &stream{chat: chat, ch: make(chan event, streamBuffer), replay: replay, after: after, until: h.seq}
	h.subs[s] = struct{}{}
	h.open++
	return s, nil
}

// replayNext returns the stream's next replayed event: the oldest kept
// event for its chat after the last one returned and published before it
// subscribed. ok is false when the replay is over. Events dropped from
// what is kept meanwhile are skipped (the client sees a gap, as after any
// reconnect that comes too late).
func (h *hub) replayNext(s *stream) (ev event, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !s.replay {
		return event{}, false
	}
	i, _ := slices.BinarySearchFunc(h.kept, s.after+1, func(e event, seq uint64) int { return cmp.Compare(e.seq, seq) })
	for ; i < len(h.kept) && h.kept[i].seq <= s.until; i++ {
		if s.chat == "" || h.kept[i].chat == "" || h.kept[i].chat == s.chat {
			s.after = h.kept[i].seq
			return h.kept[i], true
		}
	}
	s.replay = false
	return event{}, false
}

// streams is the number of open streams.
func (h *hub) streams() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open
}

func (h *hub) unsubscribe(s *stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !s.done {
		s.done = true
		h.open--
	}
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.ch)
	}
	h.checkEndedLocked()
}

// refuse refuses new streams; the open ones go on (shutdown, until close).
func (h *hub) refuse() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
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
	h.shut = true
	h.checkEndedLocked()
}

// checkEndedLocked closes ended once the hub is shut and no stream is
// open.
func (h *hub) checkEndedLocked() {
	if h.shut && h.open == 0 {
		select {
		case <-h.ended:
		default:
			close(h.ended)
		}
	}
}
