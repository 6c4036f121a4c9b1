package claude

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/leashd/leashd/engine/agent"
)

// typeRateLimitEvent is the CLI's report of the account's usage-limit
// standing (2.1.197 and newer, when signed in with a subscription): before
// a turn's result that a limit stopped it says
//
//	{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1795613698,"rateLimitType":"five_hour",…},…}
//
// and the result's text is the CLI's own line ("You've hit your 5-hour
// limit · resets 1:34pm (UTC)"). status is also "allowed" or
// "allowed_warning" (nothing stopped).
const typeRateLimitEvent = "rate_limit_event"

// rateLimitInfo is the rate_limit_info of a rate_limit_event.
type rateLimitInfo struct {
	Status        string   `json:"status"`
	ResetsAt      *float64 `json:"resetsAt"` // Unix seconds
	RateLimitType string   `json:"rateLimitType"`
}

// parseRateLimit reads a rate_limit_event line: the usage limit it reports,
// or nil when the limit did not stop anything (status allowed or
// allowed_warning). An event without a usable reset time is an error.
func parseRateLimit(raw []byte) (*agent.UsageLimit, error) {
	var ev struct {
		Info *rateLimitInfo `json:"rate_limit_info"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, fmt.Errorf("rate_limit_event: %w", err)
	}
	if ev.Info == nil {
		return nil, fmt.Errorf(`rate_limit_event without "rate_limit_info": %s`, quote(raw))
	}
	if ev.Info.Status != "rejected" {
		return nil, nil
	}
	if ev.Info.ResetsAt == nil {
		return nil, fmt.Errorf(`rate_limit_event "rejected" without "resetsAt" (Unix seconds): %s`, quote(raw))
	}
	secs := *ev.Info.ResetsAt
	if math.IsNaN(secs) || secs < 1 || secs > 1<<40 {
		return nil, fmt.Errorf(`rate_limit_event: "resetsAt" %v is not a time in Unix seconds`, secs)
	}
	return &agent.UsageLimit{ResetsAt: time.Unix(int64(secs), 0).UTC(), Kind: ev.Info.RateLimitType}, nil
}

// rateLimit remembers a usage limit that stopped the running turn, for its
// result.
func (s *session) rateLimit(raw []byte) {
	lim, err := parseRateLimit(raw)
	if err != nil {
		s.log.Warn("unreadable rate_limit_event from claude", "err", err)
		return
	}
	if lim == nil {
		return
	}
	s.log.Info("claude reports a usage limit", "resets_at", lim.ResetsAt, "kind", lim.Kind)
	s.mu.Lock()
	if s.turn != nil {
		s.turn.limit = lim
	}
	s.mu.Unlock()
}

// withLimit is a turn's result with the usage limit that stopped it, if any.
func (s *session) withLimit(ts *turnState, res agent.Result) agent.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts.limit != nil && res.IsError {
		res.UsageLimit = ts.limit
	}
	return res
}
