package interactions

import (
	"slices"
	"sync"
	"sync/atomic"
)

// subscribers fans events out to any number of subscribers. Publishing never
// blocks: each subscriber has its own unbounded queue drained by its own
// goroutine, so a slow observer delays only itself and loses nothing.
type subscribers struct {
	mu   sync.Mutex                    // serializes changes to list
	list atomic.Pointer[[]*subscriber] // replaced, never changed: read without mu
}

// any reports whether anyone subscribes, so that an event nobody would
// receive is not even built.
func (s *subscribers) any() bool {
	l := s.list.Load()
	return l != nil && len(*l) > 0
}

type subscriber struct {
	mu    sync.Mutex
	queue []*Event      // shared by every subscriber's queue; never modified
	wake  chan struct{} // capacity 1
	stop  chan struct{}
	out   chan Event
}

func (s *subscribers) subscribe() (<-chan Event, func()) {
	sub := &subscriber{wake: make(chan struct{}, 1), stop: make(chan struct{}), out: make(chan Event, subscriberBuffer)}
	s.mu.Lock()
	s.store(append(s.current(), sub))
	s.mu.Unlock()
	go sub.pump()
	var once sync.Once
	cancel := func() {
		once.Do(func() {
			s.mu.Lock()
			s.store(slices.DeleteFunc(slices.Clone(s.current()), func(x *subscriber) bool { return x == sub }))
			s.mu.Unlock()
			close(sub.stop) // publish no longer sees sub: the queue is final
		})
	}
	return sub.out, cancel
}

// current is the list of subscribers (nil: none yet).
func (s *subscribers) current() []*subscriber {
	if l := s.list.Load(); l != nil {
		return *l
	}
	return nil
}

// store replaces the list; under s.mu.
func (s *subscribers) store(l []*subscriber) {
	l = slices.Clip(l) // the next append copies: a published list never changes
	s.list.Store(&l)
}

func (s *subscribers) publish(e *Event) {
	for _, sub := range s.current() {
		sub.mu.Lock()
		sub.queue = append(sub.queue, e)
		sub.mu.Unlock()
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
}

// pump delivers queued events in order. After the subscription is
// cancelled it still delivers what was queued before, then closes the
// channel: a subscriber reads until the channel is closed.
func (sub *subscriber) pump() {
	defer close(sub.out)
	for {
		stopping := false
		select {
		case <-sub.stop:
			stopping = true
		case <-sub.wake:
		}
		sub.mu.Lock()
		batch := sub.queue
		sub.queue = nil
		sub.mu.Unlock()
		for _, e := range batch {
			sub.out <- *e
		}
		if stopping {
			return
		}
	}
}

// subscriberBuffer is how many events a subscriber's channel holds: its
// pump hands events over in batches, not one goroutine switch per event.
const subscriberBuffer = 32
