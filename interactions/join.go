package interactions

import (
	"context"
	"strconv"
	"time"
)

// An agent on a runner outlives a restart of leashd: the next run adopts
// the same process mid-turn, which reads its pending request again and
// asks again with the same AgentRef. That request is the interaction the
// journal restored (Restore), whose message people may already have
// answered: Request joins it instead of asking a second time, and its
// outcome goes to the process that waits for it, not to the chat as a
// prompt.

// agentRefKey carries the agent's request ID down to Request.
type agentRefKey struct{}

// WithAgentRef returns ctx carrying the agent's own ID for the request
// being decided: every interaction the flows (Ask, ReviewPlan,
// ApproveTool) ask with it gets it as AgentRef. A context, not a
// parameter, because the request passes through code (the approval
// package) that need not know about it. Request itself does not read it:
// a plain request's waiting stack stays as small as it was.
func WithAgentRef(ctx context.Context, ref string) context.Context {
	if ref == "" {
		return ctx
	}
	return context.WithValue(ctx, agentRefKey{}, ref)
}

func agentRef(ctx context.Context) string {
	ref, _ := ctx.Value(agentRefKey{}).(string)
	return ref
}

// joinKey names an agent's request within a chat: one request may ask
// several questions, each its own interaction (Index).
func joinKey(chat, ref string, index int) string {
	return chat + "\x00" + ref + "\x00" + strconv.Itoa(index)
}

// join finds the restored interaction it repeats — same chat, same
// AgentRef, same kind and Index — still pending, or ended less than its JoinWithin
// ago, and marks it joined; nil when there is none.
func (c *Coordinator) join(it *Interaction) *pending {
	if it.AgentRef == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := joinKey(it.ChatID, it.AgentRef, it.Index)
	if p := c.late[key]; p != nil && p.it.Kind == it.Kind {
		delete(c.late, key)
		close(p.joined)
		return p
	}
	for _, p := range c.byChat[it.ChatID] {
		if p.joined != nil && p.it.AgentRef == it.AgentRef && p.it.Kind == it.Kind && p.it.Index == it.Index && !isDone(p.joined) {
			close(p.joined)
			return p
		}
	}
	return nil
}

// requestJoined is Request of an agent's request that repeats a
// restored interaction (nil when there is none to join). It is apart, its outcome
// on the heap, so that every other waiting Request keeps a small stack
// (see requestGated).
//
//go:noinline
func (c *Coordinator) requestJoined(ctx context.Context, it *Interaction) *requested {
	p := c.join(it)
	if p == nil {
		return nil
	}
	return &requested{it: p.it, res: c.waitJoined(ctx, p)}
}

// waitJoined waits for a joined interaction's outcome; ctx ending (the
// agent withdrew its request, its turn ended) cancels it as it would the
// agent's own request. Restore's goroutine records and announces it.
func (c *Coordinator) waitJoined(ctx context.Context, p *pending) Resolution {
	select {
	case <-p.done:
	case <-ctx.Done():
		c.cancelWaiting(ctx, p)
	}
	return p.res
}

// joinedLater reports whether p's agent asked again: before it ended, or
// within the given time after (resolveLocked keeps it for join from the
// moment it ends). One a shutdown interrupted again is not kept: the
// next run restores it.
func (c *Coordinator) joinedLater(p *pending, within time.Duration) bool {
	if p.joined == nil {
		return false
	}
	if !isDone(p.joined) && within > 0 && p.res.Status != StatusInterrupted {
		t := time.NewTimer(within)
		defer t.Stop()
		select {
		case <-p.joined:
		case <-t.C:
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if key := joinKey(p.it.ChatID, p.it.AgentRef, p.it.Index); c.late[key] == p {
		delete(c.late, key)
	}
	return isDone(p.joined)
}

// keepForJoinLocked keeps a restored interaction that just ended for its
// agent to join (joinedLater forgets it).
func (c *Coordinator) keepForJoinLocked(p *pending) {
	if p.joined != nil && !isDone(p.joined) {
		c.late[joinKey(p.it.ChatID, p.it.AgentRef, p.it.Index)] = p
	}
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
