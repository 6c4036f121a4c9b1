package discordfake

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// limits are the fake's rate limits: a bucket per route and major
// parameter, a global limit, and scripted 429s.
type limits struct {
	bucketLimit, globalLimit   int
	bucketWindow, globalWindow time.Duration
	buckets                    map[string]*window
	global                     window
	scripted                   []scripted
	blocked                    map[string]time.Time // bucket or "global" → end of its 429's retry_after
	violations                 []string
	served                     int
}

type window struct {
	start time.Time
	used  int
}

type scripted struct {
	route      string // "" matches any
	retryAfter time.Duration
	global     bool
}

func newLimits() limits {
	return limits{bucketLimit: 1000, bucketWindow: time.Second, globalLimit: 1000, globalWindow: time.Second,
		buckets: map[string]*window{}, blocked: map[string]time.Time{}}
}

// SetBucket sets each route bucket's limit: n requests per window
// (default 1000 a second). Discord's own for messages is 5 per 5 s per
// channel.
func (s *Server) SetBucket(n int, per time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits.bucketLimit, s.limits.bucketWindow = n, per
}

// SetGlobal sets the global limit: n requests per window for the bot
// (Discord's is 50 a second).
func (s *Server) SetGlobal(n int, per time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits.globalLimit, s.limits.globalWindow = n, per
}

// RateLimit makes the next request of route ("POST channels/{id}/messages";
// "" for any) answer 429 with retryAfter, global or for the route's
// bucket; call it again for more.
func (s *Server) RateLimit(route string, retryAfter time.Duration, global bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits.scripted = append(s.limits.scripted, scripted{route, retryAfter, global})
}

// Violations lists the requests sent while a 429's retry_after had not
// passed (for their bucket, or any while global), each with how early it
// came: Discord bans clients that do this.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.limits.violations)
}

// Served429 counts the 429s answered.
func (s *Server) Served429() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limits.served
}

// routeOf is a request's route ("PATCH channels/{id}/messages/{id}") and
// its bucket (the route and its major parameter, the first ID).
func routeOf(method, path string) (route, bucket string) {
	segs := strings.Split(path, "/")
	major := ""
	for i, s := range segs {
		if s != "" && strings.Trim(s, "0123456789") == "" || strings.HasPrefix(s, "itok-") {
			if major == "" {
				major = s
			}
			segs[i] = "{id}"
		}
	}
	route = method + " " + strings.Join(segs, "/")
	sum := sha256.Sum256([]byte(route + "|" + major))
	return route, hex.EncodeToString(sum[:8])
}

// limit decides whether a request is rate limited now: it sets the
// X-RateLimit headers and returns the retry_after of a 429 (0: go on).
// Callers hold s.mu.
func (s *Server) limit(h http.Header, route, bucket string, now time.Time) (time.Duration, bool) {
	l := &s.limits
	const slack = 5 * time.Millisecond // clocks read at slightly different moments
	for _, key := range []string{"global", bucket} {
		if until, ok := l.blocked[key]; ok && now.Add(slack).Before(until) {
			l.violations = append(l.violations, fmt.Sprintf("%s: %v before the %s retry_after passed", route, until.Sub(now).Round(time.Millisecond), key))
			break
		}
	}
	for i, sc := range l.scripted {
		if sc.route == "" || sc.route == route {
			l.scripted = append(l.scripted[:i:i], l.scripted[i+1:]...)
			return s.limited(h, bucket, sc.retryAfter, sc.global, now), sc.global
		}
	}
	if wait := l.global.take(l.globalLimit, l.globalWindow, now); wait > 0 {
		return s.limited(h, bucket, wait, true, now), true
	}
	b := l.buckets[bucket]
	if b == nil {
		b = &window{}
		l.buckets[bucket] = b
	}
	wait := b.take(l.bucketLimit, l.bucketWindow, now)
	reset := b.start.Add(l.bucketWindow).Sub(now)
	h.Set("X-RateLimit-Bucket", bucket)
	h.Set("X-RateLimit-Limit", strconv.Itoa(l.bucketLimit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(l.bucketLimit-b.used, 0)))
	h.Set("X-RateLimit-Reset-After", seconds(reset))
	if wait > 0 {
		return s.limited(h, bucket, wait, false, now), false
	}
	return 0, false
}

// take counts a request in the window and returns how long to wait when
// it is over n.
func (w *window) take(n int, per time.Duration, now time.Time) time.Duration {
	if now.Sub(w.start) >= per {
		w.start, w.used = now, 0
	}
	w.used++
	if w.used > n {
		return w.start.Add(per).Sub(now)
	}
	return 0
}

// limited records a 429 and sets its headers.
func (s *Server) limited(h http.Header, bucket string, wait time.Duration, global bool, now time.Time) time.Duration {
	s.limits.served++
	key := bucket
	h.Set("X-RateLimit-Scope", "user")
	if global {
		key = "global"
		h.Set("X-RateLimit-Global", "true")
		h.Set("X-RateLimit-Scope", "global")
	}
	if now.Add(wait).After(s.limits.blocked[key]) {
		s.limits.blocked[key] = now.Add(wait)
	}
	h.Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
	h.Set("X-RateLimit-Bucket", bucket)
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset-After", seconds(wait))
	return wait
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(max(d.Seconds(), 0), 'f', 3, 64)
}
