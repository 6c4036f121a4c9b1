package interactions

import (
	"fmt"
	"time"
)

// expiries times pending interactions out without a timer each: the
// interactions that share a timeout length are in one list, and since each
// joins its list when it is asked, the list is ordered by deadline. One
// timer per list is armed for (at most) its head's deadline. Joining,
// leaving and the timer firing are all under c.mu; a request costs two
// pointer updates instead of a runtime timer's creation, arming and stop.
type expiries struct {
	byTimeout map[time.Duration]*expiryList
	last      *expiryList // the one used last: nearly always the only one
}

type expiryList struct {
	timeout    time.Duration
	head, tail *pending
	timer      *time.Timer // nil until first armed
	armed      bool        // the timer will fire, at or before head's deadline
}

// expiryLinks are a pending interaction's place in its expiry list.
type expiryLinks struct {
	list       *expiryList // nil: not in one (no timeout, or settled)
	prev, next *pending
	expires    time.Time // on the real clock (even WithClock), with its monotonic reading
}

// expireLocked times p out after timeout, counted from now (the real clock).
func (c *Coordinator) expireLocked(p *pending, timeout time.Duration, now time.Time) {
	l := c.expiries.last
	if l == nil || l.timeout != timeout {
		l = c.expiries.byTimeout[timeout]
		if l == nil {
			if c.expiries.byTimeout == nil {
				c.expiries.byTimeout = make(map[time.Duration]*expiryList)
			}
			l = &expiryList{timeout: timeout}
			c.expiries.byTimeout[timeout] = l
		}
		c.expiries.last = l
	}
	p.exp = expiryLinks{list: l, prev: l.tail, expires: now.Add(timeout)}
	if l.tail != nil {
		l.tail.exp.next = p
	} else {
		l.head = p
	}
	l.tail = p
	if !l.armed { // an armed timer fires at or before any later deadline
		l.armed = true
		if l.timer == nil {
			l.timer = time.AfterFunc(timeout, func() { c.expire(l) })
		} else {
			l.timer.Reset(timeout)
		}
	}
}

// unexpireLocked takes p out of its expiry list (it was settled). The
// list's timer stays armed: when it fires it finds the new head not due
// yet and is armed again for it.
func (c *Coordinator) unexpireLocked(p *pending) {
	l := p.exp.list
	if l == nil {
		return
	}
	if p.exp.prev != nil {
		p.exp.prev.exp.next = p.exp.next
	} else {
		l.head = p.exp.next
	}
	if p.exp.next != nil {
		p.exp.next.exp.prev = p.exp.prev
	} else {
		l.tail = p.exp.prev
	}
	p.exp = expiryLinks{}
}

// expire settles every interaction of l whose deadline has passed, as
// expired, and arms l's timer for the next deadline.
func (c *Coordinator) expire(l *expiryList) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for p := l.head; p != nil && !p.exp.expires.After(now); p = l.head {
		c.resolveLocked(p, Resolution{Status: StatusExpired, Text: expiredText(l.timeout)}) // takes p out of l
	}
	if l.head == nil {
		l.armed = false
		return
	}
	l.timer.Reset(l.head.exp.expires.Sub(now))
}

func expiredText(timeout time.Duration) string {
	return fmt.Sprintf("No answer came within %s; the user did not respond.", timeout)
}
