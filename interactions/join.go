package interactions

import (
	"context"
	"time"
)

// An agent on a runner outlives a restart of leashd: the next run adopts
// the same process mid-turn, which reads its pending request again and
// asks again with the same AgentRef. That request is the interaction the
// journal restored (Restore), whose message people may already have
// answered: Request joins it instead of asking a second time, and its
// outcome goes to the process that waits for it, not to the chat as a
// prompt.

// joinKey names an agent's request within a chat.
func joinKey(chat, ref string) string { return chat + "\x00" + ref }

// join finds the restored interaction it repeats — same chat, same
// AgentRef, same kind — still pending, or ended less than its JoinWithin
// ago, and marks it joined; nil when there is none.
func (c *Coordinator) join(it *Interaction) *pending {
	if it.AgentRef == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := joinKey(it.ChatID, it.AgentRef)
	if p := c.late[key]; p != nil && p.it.Kind == it.Kind {
		delete(c.late, key)
		close(p.joined)
		return p
	}
	for _, p := range c.byChat[it.ChatID] {
		if p.joined != nil && p.it.AgentRef == it.AgentRef && p.it.Kind == it.Kind && !isDone(p.joined) {
			close(p.joined)
			return p
		}
	}
	return nil
}

// waitJoined waits for a joined interaction's outcome; ctx ending (the
// agent withdrew its request, its turn ended) cancels it as it would the
// agent's own request. Restore's goroutine records and announces it.
func (c *Coordinator) waitJoined(ctx context.Context, p *pending) Resolution {
	select {
	case <-p.done:
	case <-ctx.Done():
		c.resolve(p, Resolution{Status: StatusCancelled, Text: cancelledText(ctx)})
		<-p.done
	}
	return p.res
}

// joinedLater reports whether p's agent asked again: before it ended, or
// within the given time after (it is kept for join meanwhile). One a
// shutdown interrupted again is not kept: the next run restores it.
func (c *Coordinator) joinedLater(p *pending, within time.Duration) bool {
	if p.joined == nil {
		return false
	}
	if isDone(p.joined) {
		return true
	}
	if within <= 0 || p.res.Status == StatusInterrupted {
		return false
	}
	key := joinKey(p.it.ChatID, p.it.AgentRef)
	c.mu.Lock()
	if isDone(p.joined) { // joined as it ended
		c.mu.Unlock()
		return true
	}
	c.late[key] = p
	c.mu.Unlock()
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-p.joined:
		return true
	case <-t.C:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.late[key] == p {
		delete(c.late, key)
	}
	return isDone(p.joined)
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
