// Package clocktest is a clock for tests (engine.Clock): the time stands
// still and timers fire when the test says.
package clocktest

import (
	"sync"
	"time"
)

// Clock is a fake engine.Clock. Create it with New.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*Timer
}

// Timer is a timer the code under test started.
type Timer struct {
	// D is the duration it was started with.
	D time.Duration

	c       *Clock
	f       func()
	stopped bool
}

// New returns a clock standing at now.
func New(now time.Time) *Clock { return &Clock{now: now} }

// Now implements engine.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc implements engine.Clock: the timer fires only through Fire.
func (c *Clock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &Timer{D: d, c: c, f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// Timers are the timers started so far, stopped ones included.
func (c *Clock) Timers() []*Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Timer(nil), c.timers...)
}

// Stopped reports whether the code under test stopped the timer.
func (t *Timer) Stopped() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.stopped
}

// Fire moves the clock to the timer's end and runs its function on the
// calling goroutine, as a real timer would once its time came, unless it
// was stopped (then it reports false).
func (t *Timer) Fire() bool {
	t.c.mu.Lock()
	if t.stopped {
		t.c.mu.Unlock()
		return false
	}
	t.stopped = true
	t.c.now = t.c.now.Add(t.D)
	t.c.mu.Unlock()
	t.f()
	return true
}
