package interactions

import (
	"sync"
	"sync/atomic"
)

// subscribers fans events out to any number of subscribers. Publishing never
// blocks: each subscriber has its own unbounded queue drained by its own
// goroutine, so a slow observer delays only itself and loses nothing.
type subscribers struct {
	mu   sync.Mutex
	list []*subscriber
	n    atomic.Int32 // len(list), read without mu
}

// any reports whether anyone subscribes, so that an event nobody would
// receive is not even built.
func (s *subscribers) any() bool { return s.n.Load() > 0 }

type subscriber struct {
	mu     sync.Mutex
	queue  []*Event      // shared by every subscriber's queue; never modified
	wake   chan struct{} // capacity 1
	stop   chan struct{}
	out    chan Event
	closed bool
}

func (s *subscribers) subscribe() (<-chan Event, func()) {
	sub := &subscriber{wake: make(chan struct{}, 1), stop: make(chan struct{}), out: make(chan Event)}
	s.mu.Lock()
	s.list = append(s.list, sub)
	s.n.Store(int32(len(s.list)))
	s.mu.Unlock()
	go sub.pump()
	var once sync.Once
	cancel := func() {
		once.Do(func() {
			s.mu.Lock()
			for i, x := range s.list {
				if x == sub {
					s.list = append(s.list[:i:i], s.list[i+1:]...)
					s.n.Store(int32(len(s.list)))
					break
				}
			}
			s.mu.Unlock()
			close(sub.stop) // publish no longer sees sub: the queue is final
		})
	}
	return sub.out, cancel
}

func (s *subscribers) publish(e *Event) {
	s.mu.Lock()
	list := s.list
	s.mu.Unlock()
	for _, sub := range list {
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
