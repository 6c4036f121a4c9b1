package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// events streams server-sent events. ?chat= limits them to one chat;
// Last-Event-ID (sent by browsers when they reconnect) or ?after= replays
// what was missed (after=0: everything kept).
func (c *Connector) events(w http.ResponseWriter, r *http.Request) {
	s, ok := c.subscribe(w, r)
	if !ok {
		return
	}
	defer c.hub.unsubscribe(s)
	rc := http.NewResponseController(w)
	// The request has no body: no read deadline may end the stream.
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// Every write has a deadline: a client that stops reading is cut off
	// after writeTimeout instead of holding its stream open.
	deadline := func() { _ = rc.SetWriteDeadline(time.Now().Add(c.writeTimeout)) }
	deadline()
	if _, err := io.WriteString(w, "retry: 1000\n\n"); err != nil {
		return
	}
	if !c.replay(w, r, s, deadline) {
		return
	}
	deadline()
	if rc.Flush() != nil {
		return
	}
	c.live(w, r, rc, s, deadline)
}

// subscribe reads where the stream starts (?chat=, Last-Event-ID or
// ?after=) and opens it on the hub, or answers why not.
func (c *Connector) subscribe(w http.ResponseWriter, r *http.Request) (*stream, bool) {
	chat := r.URL.Query().Get("chat")
	if chat != "" {
		if err := validChatID(chat); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return nil, false
		}
	}
	from := r.Header.Get("Last-Event-ID")
	if from == "" {
		from = r.URL.Query().Get("after")
	}
	var (
		replay bool
		boot   string
		after  uint64
	)
	if from != "" {
		var err error
		if boot, after, err = parseEventID(from); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return nil, false
		}
		replay = true
	}
	s, err := c.hub.subscribe(chat, replay, boot, after)
	if errors.Is(err, errTooManyStreams) {
		w.Header().Set("Retry-After", "30")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many event streams open: at most %d (LEASHD_WEB_MAX_STREAMS); close another page or client of leashd, or raise LEASHD_WEB_MAX_STREAMS", c.hub.maxStreams))
		return nil, false
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return nil, false
	}
	return s, true
}

// replay writes what the stream missed, event by event straight from
// what the hub keeps: the response's own buffer is the only copy. It
// reports whether the stream goes on.
func (c *Connector) replay(w http.ResponseWriter, r *http.Request, s *stream, deadline func()) bool {
	for {
		ev, ok := c.hub.replayNext(s)
		if !ok {
			return true
		}
		if r.Context().Err() != nil {
			return false
		}
		deadline()
		if c.writeEvent(w, ev) != nil {
			return false
		}
	}
}

// live writes events as they are published, and a heartbeat when there
// are none, until the client leaves or the stream ends.
func (c *Connector) live(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, s *stream, deadline func()) {
	tick := time.NewTicker(c.heartbeat)
	defer tick.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			deadline()
			_, err = io.WriteString(w, ": heartbeat\n\n")
		case ev, ok := <-s.ch:
			if !ok {
				return // shutting down, or this stream fell behind: the client reconnects
			}
			deadline()
			err = c.writeEvent(w, ev)
			if err == nil {
				err = c.drainQueued(w, s, deadline)
			}
		}
		if err != nil {
			return
		}
		deadline()
		if rc.Flush() != nil {
			return
		}
	}
}

// drainQueued writes up to 64 more events already queued, so that a burst
// goes out with one flush.
func (c *Connector) drainQueued(w io.Writer, s *stream, deadline func()) error {
	for range 64 {
		select {
		case ev, ok := <-s.ch:
			if !ok {
				return nil
			}
			deadline()
			if err := c.writeEvent(w, ev); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

// writeEvent writes one event (its data is not copied).
func (c *Connector) writeEvent(w io.Writer, ev event) error {
	if _, err := io.WriteString(w, "id: "+c.hub.id(ev.seq)+"\nevent: "+ev.name+"\ndata: "); err != nil {
		return err
	}
	if _, err := w.Write(ev.data); err != nil { // JSON from encoding/json has no raw newlines
		return err
	}
	_, err := io.WriteString(w, "\n\n")
	return err
}
