package sqlite

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SinceForms names what ParseSince accepts, for error and help texts.
const SinceForms = "an RFC 3339 time (2026-11-22T08:00:00Z), a date (2026-11-22, from midnight local time) " +
	"or a duration back from now (90m, 24h, 7d)"

// maxSinceDays bounds "Nd" so that now-N days stays a real date.
const maxSinceDays = 100 * 366

// ParseSince reads a --since value relative to now: an RFC 3339 timestamp,
// a date (midnight in now's location), or a positive duration back from
// now — Go's units (90m, 1h30m, 24h) or whole days (7d). A bad value gets an
// error naming it and what is accepted.
func ParseSince(s string, now time.Time) (time.Time, error) {
	v := strings.TrimSpace(s)
	if v == "" {
		return time.Time{}, fmt.Errorf("--since is empty: use %s", SinceForms)
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, v, now.Location()); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok && days != "" && !strings.ContainsAny(days, "+-") {
		n, err := strconv.Atoi(days)
		if err == nil {
			if n < 1 || n > maxSinceDays {
				return time.Time{}, fmt.Errorf("--since %q: use from 1 to %d days", s, maxSinceDays)
			}
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("--since %q: a duration counts back from now and must be positive (e.g. 24h)", s)
		}
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q is not understood: use %s", s, SinceForms)
}
