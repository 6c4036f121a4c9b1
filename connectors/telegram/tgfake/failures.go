package tgfake

import (
	"slices"
)

// SetConflict makes getUpdates answer 409 (another poller) while on.
func (s *Server) SetConflict(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conflict = on
	s.notifyLocked()
	s.notifyPollLocked()
}

// FailNext makes the next n calls of method fail with HTTP status code
// (e.g. 502), before any other check.
func (s *Server) FailNext(method string, code, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fail[method] = append(s.fail[method], code)
	}
	if method == "getUpdates" {
		s.notifyPollLocked()
	}
}

// stall is a hold set with Stall.
type stall struct {
	hold     func(Request) bool
	released chan struct{}
	held     int // requests waiting now
	done     bool
}

// releaseLocked lets the requests the stall holds go, once.
func (st *stall) releaseLocked() {
	if !st.done {
		st.done = true
		close(st.released)
	}
}

// Stall makes the fake hang, as a slow or stuck Telegram would, every
// request (any method but getUpdates) for which hold returns true: it is
// received, then served only once release is called (or the fake closes;
// a client that gives up meanwhile gets no answer). hold sees the request
// as Requests records it, with the ChatID of answerCallbackQuery being
// the chat the button was tapped in. Held reports how many wait now.
func (s *Server) Stall(hold func(Request) bool) (release func()) {
	st := &stall{hold: hold, released: make(chan struct{})}
	s.mu.Lock()
	s.stalls = append(s.stalls, st)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		st.releaseLocked()
		s.stalls = slices.DeleteFunc(s.stalls, func(x *stall) bool { return x == st })
	}
}

// Held is how many requests a Stall holds now.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, st := range s.stalls {
		n += st.held
	}
	return n
}

// stallLocked returns the Stall holding req (nil: none), counting req as
// held; the caller waits for its release and uncounts req.
func (s *Server) stallLocked(req Request) *stall {
	for _, st := range s.stalls {
		if !st.done && st.hold(req) {
			st.held++
			s.notifyLocked()
			return st
		}
	}
	return nil
}
