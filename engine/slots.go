package engine

import (
	"fmt"
	"strings"
)

// slotUse is how the agent slots (LEASHD_MAX_CONCURRENT_AGENTS) are used
// now, for the queue message and /status. An agent waiting for a person's
// answer keeps its process, and so its slot, until the answer comes: four
// unanswered questions fill the default four slots, and a fifth chat
// queues. People are told, so they know answering frees one.
type slotUse struct {
	live, max int // slots held (spares and closing sessions included) of max
	waiting   int // chats whose agent waits for an answer, holding a slot
	queued    int // chats waiting for a slot
	runners   bool
}

// slotUse reads the slots' use. It takes e.mu itself: the coordinator is
// asked first, never under e.mu.
func (e *Engine) slotUse() slotUse {
	asking := map[string]bool{}
	for _, it := range e.coord.Pending("") {
		if it.Asker == "" { // the chat's agent asked, not a program
			asking[it.ChatID] = true
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	u := slotUse{live: e.live, max: e.maxSlotsLocked(), queued: len(e.waiters), runners: e.runners != nil}
	for id, c := range e.chats {
		if c.sess != nil && asking[id] {
			u.waiting++
		}
	}
	return u
}

// waitingNote says how many slots wait on people, e.g. "3 chats are
// waiting for an answer, and each keeps its agent's slot until it
// comes", or "" when none does.
func (u slotUse) waitingNote() string {
	switch u.waiting {
	case 0:
		return ""
	case 1:
		return "1 chat is waiting for an answer, and keeps its agent's slot until it comes"
	}
	return fmt.Sprintf("%d chats are waiting for an answer, and each keeps its agent's slot until it comes", u.waiting)
}

// queueMessage tells a chat that it waits for a slot, at place pos, and
// why the slots are full when people's answers hold them.
func (e *Engine) queueMessage(pos int) string {
	u := e.slotUse()
	msg := fmt.Sprintf("All %d agent slots are busy; you are number %d in the queue. Your prompt runs as soon as one frees up.", u.max, pos)
	switch {
	case u.runners && u.max == 0:
		msg = fmt.Sprintf("No runner is connected to run an agent; you are number %d in the queue. Your prompt runs as soon as one connects.", pos)
	case u.runners:
		msg = fmt.Sprintf("All %d agent slots (on the runners and this server) are busy; you are number %d in the queue. Your prompt runs as soon as one frees up or another runner connects.", u.max, pos)
	}
	if note := u.waitingNote(); note != "" {
		msg += " " + strings.ToUpper(note[:1]) + note[1:] + ": answering one frees a slot."
	}
	return msg
}

// slotsStatus is /status's line on the slots, e.g. "Agent slots: 4 of 4
// in use; 3 chats are waiting for an answer, …; 1 chat in the queue".
func (e *Engine) slotsStatus() string {
	u := e.slotUse()
	line := fmt.Sprintf("Agent slots: %d of %d in use", min(u.live, u.max), u.max)
	if note := u.waitingNote(); note != "" {
		line += "; " + note
	}
	switch u.queued {
	case 0:
	case 1:
		line += "; 1 chat in the queue"
	default:
		line += fmt.Sprintf("; %d chats in the queue", u.queued)
	}
	return line
}
