package interactions

import (
	"sync/atomic"
	"time"
)

// clock is time.Now for a coordinator's timestamps at half the cost: it
// reads only the monotonic clock (time.Since, one vDSO call instead of
// time.Now's two) and adds the elapsed time to an anchor, a time.Now taken
// at most reanchor ago. A change of the wall clock (a step by NTP, a
// resume from suspend) shows within reanchor; within it the times agree
// with time.Now to the slew of the wall clock (microseconds). The zero
// value is ready.
type clock struct {
	anchor atomic.Pointer[time.Time]
}

const reanchor = time.Second

func (k *clock) now() time.Time {
	if a := k.anchor.Load(); a != nil {
		if d := time.Since(*a); d >= 0 && d < reanchor {
			return a.Add(d)
		}
	}
	t := time.Now()
	k.anchor.Store(&t)
	return t
}
