package tgfake

import (
	"fmt"
	"slices"
	"time"
)

// SetLimits changes the enforced rates.
func (s *Server) SetLimits(l Limits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.PerChatWindow == 0 {
		l.PerChatWindow = time.Second
	}
	if l.GlobalWindow == 0 {
		l.GlobalWindow = time.Second
	}
	if l.RetryAfter == 0 {
		l.RetryAfter = 1
	}
	s.limits = l
}

// ExhaustChat counts chatID's PerChat window as used up now, under the
// limits set: its next request is answered 429 with RetryAfter, whichever
// request that is. (Hits are not kept while no limit is set, so a window
// starts empty when SetLimits turns one on.)
func (s *Server) ExhaustChat(chatID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.chatHits[chatID] = slices.Repeat([]time.Time{now}, max(s.limits.PerChat, 1))
}

// rateLocked applies the limits to a request for chatID (0: none).
func (s *Server) rateLocked(chatID int64) *apiError {
	now := s.now()
	if chatID != 0 {
		if until, ok := s.penalty[chatID]; ok && now.Before(until) {
			s.violations = append(s.violations, fmt.Sprintf("chat %d: request %s before retry_after elapsed", chatID, until.Sub(now)))
			return &apiError{429, fmt.Sprintf("Too Many Requests: retry after %d", int(until.Sub(now).Seconds())+1), int(until.Sub(now).Seconds()) + 1}
		}
	}
	limited := func(hits []time.Time, n int, win time.Duration) ([]time.Time, bool) {
		if n <= 0 {
			// Not enforced: keeping every hit of the window would make
			// each request cost more, under the lock, the busier the fake.
			return nil, false
		}
		hits = slices.DeleteFunc(hits, func(t time.Time) bool { return now.Sub(t) >= win })
		if n > 0 && len(hits) >= n {
			return hits, true
		}
		return append(hits, now), false
	}
	var over bool
	s.globalHits, over = limited(s.globalHits, s.limits.Global, s.limits.GlobalWindow)
	if !over && chatID != 0 {
		s.chatHits[chatID], over = limited(s.chatHits[chatID], s.limits.PerChat, s.limits.PerChatWindow)
	}
	if over {
		wait := s.limits.RetryAfter
		if chatID != 0 {
			s.penalty[chatID] = now.Add(time.Duration(wait) * time.Second)
		}
		return &apiError{429, fmt.Sprintf("Too Many Requests: retry after %d", wait), wait}
	}
	return nil
}
