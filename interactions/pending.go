package interactions

// What can be asked of the pending interactions, and how they end besides
// an answer.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// CancelPending cancels everything pending for a chat (/clear, /stop, agent
// errors) with the given reason, and returns what it cancelled.
func (c *Coordinator) CancelPending(chatID, reason string) []Interaction {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := slices.Clone(c.byChat[chatID]) // resolving changes the chat's queue
	return c.resolveAllLocked(ps, Resolution{Status: StatusCancelled, Text: reason})
}

// Cancel cancels one pending interaction (the agent withdrew the request).
func (c *Coordinator) Cancel(id, reason string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.byID[id]
	if !ok {
		return false
	}
	return c.resolveLocked(p, Resolution{Status: StatusCancelled, Text: reason})
}

// Interrupt resolves every pending interaction with StatusInterrupted
// (leashd is shutting down), refuses new requests from then on, and returns
// what it interrupted, oldest first.
func (c *Coordinator) Interrupt(reason string) []Interaction {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.resolveAllLocked(c.allLocked(), Resolution{Status: StatusInterrupted, Text: reason})
}

// allLocked is every pending interaction, oldest first.
func (c *Coordinator) allLocked() []*pending {
	ps := make([]*pending, 0, len(c.byID))
	for _, p := range c.byID {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *pending) int {
		if d := a.it.AskedAt.Compare(b.it.AskedAt); d != 0 {
			return d
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return ps
}

// Wait waits, until ctx is done, for every Request call to return. After
// Interrupt (which refuses new requests) that means every interrupted
// interaction's resolved event has been published, so a subscriber that
// stops after Wait misses none of them.
func (c *Coordinator) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		c.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("interactions still being resolved: %w", context.Cause(ctx))
	}
}

// Get returns a pending interaction by ID.
func (c *Coordinator) Get(id string) (Interaction, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.byID[id]
	if !ok {
		return Interaction{}, false
	}
	return p.it, true
}

// Selected returns a pending multi-select question's current selection.
func (c *Coordinator) Selected(id string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.byID[id]; ok {
		return p.selectedLabels()
	}
	return nil
}

// Approvals returns the approvals counted so far towards a pending
// interaction's quorum.
func (c *Coordinator) Approvals(id string) []Approver {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.byID[id]; ok {
		return slices.Clone(p.approvals)
	}
	return nil
}

// Pending lists what is pending in a chat, oldest first; chatID "" lists
// every chat's.
func (c *Coordinator) Pending(chatID string) []Interaction {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := c.byChat[chatID]
	if chatID == "" {
		ps = c.allLocked()
	}
	var out []Interaction
	for _, p := range ps {
		out = append(out, p.it)
	}
	return out
}

// PendingCount is the number of pending interactions in all chats.
func (c *Coordinator) PendingCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byID)
}

// Subscribe delivers every event from now on, in order, without ever
// blocking the coordinator (a slow subscriber's events queue up). Call the
// returned function to stop: events published before that are still
// delivered, then the channel is closed, so read it until it is.
func (c *Coordinator) Subscribe() (<-chan Event, func()) { return c.subs.subscribe() }
