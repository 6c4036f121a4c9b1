package interactions

// chats indexes pending interactions by chat, oldest first, for typed text
// and /clear. A chat's queue is kept, empty, once its last interaction ends,
// so that a chat asking again (the usual case: one question after another)
// costs one map lookup and no allocation; empty queues are dropped once
// they are more than half of all and over a few thousand, so memory stays
// bounded by the chats that asked lately. Under c.mu.
type chats struct {
	m    map[string]*chatQueue
	idle int // queues in m with nothing pending
}

type chatQueue struct {
	ps []*pending // oldest first
}

// keepIdle is how many empty queues are kept at least.
const keepIdle = 4096

// add appends p to its chat's queue.
func (cs *chats) add(p *pending) {
	q := cs.m[p.it.ChatID]
	if q == nil {
		if cs.m == nil {
			cs.m = make(map[string]*chatQueue)
		}
		q = &chatQueue{}
		cs.m[p.it.ChatID] = q
	} else if len(q.ps) == 0 {
		cs.idle--
	}
	q.ps = append(q.ps, p)
	p.chat = q
}

// remove takes p out of its chat's queue.
func (cs *chats) remove(p *pending) {
	q := p.chat
	if q == nil {
		return
	}
	p.chat = nil
	for i, x := range q.ps {
		if x == p {
			q.ps = append(q.ps[:i], q.ps[i+1:]...)
			q.ps[len(q.ps):cap(q.ps)][0] = nil // no reference to an ended one
			break
		}
	}
	if len(q.ps) == 0 {
		cs.idle++
		if cs.idle > keepIdle && cs.idle > len(cs.m)/2 {
			cs.dropIdle()
		}
	}
}

func (cs *chats) dropIdle() {
	for id, q := range cs.m {
		if len(q.ps) == 0 {
			delete(cs.m, id)
		}
	}
	cs.idle = 0
}

// pending is what is pending in chat, oldest first; the caller must not
// keep it past c.mu.
func (cs *chats) pending(chat string) []*pending {
	if q := cs.m[chat]; q != nil {
		return q.ps
	}
	return nil
}
