package interactions

import (
	"context"
	"fmt"
)

// Decided records an interaction that was decided without asking anyone
// (by an approval policy, say): it is journalled as asked and resolved with
// res at once, so the audit log shows it, but it is not presented, not
// pending and not published to subscribers — the caller tells the chat
// what happened. It returns the interaction with its ID and times.
func (c *Coordinator) Decided(ctx context.Context, it Interaction, res Resolution) (Interaction, error) {
	if err := validate(&it); err != nil {
		return it, err
	}
	if !validDecidedStatus(res.Status) {
		return it, fmt.Errorf("%w: a decided interaction needs status answered or rejected, not %q", ErrInvalidReply, res.Status)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return it, ErrClosed
	}
	it.ID = c.newIDLocked()
	c.gone.add(it.ID, res.Status) // a tap on this ID finds it is over
	c.mu.Unlock()
	it.AskedAt = c.now()
	if res.At.IsZero() {
		res.At = it.AskedAt
	}
	c.log.Info("interaction decided without asking", "id", it.ID, "chat", it.ChatID, "kind", it.Kind,
		"status", res.Status, "by", res.By)
	if c.journal == nil {
		return it, nil
	}
	ctx = context.WithoutCancel(ctx) // the record must be written even if the turn ends
	if err := c.journal.Requested(ctx, it); err != nil {
		return it, fmt.Errorf("recording decided interaction %s: %w", it.ID, err)
	}
	if err := c.journal.Resolved(ctx, it, res); err != nil {
		return it, fmt.Errorf("recording decided interaction %s: %w", it.ID, err)
	}
	return it, nil
}

func validDecidedStatus(s Status) bool { return s == StatusAnswered || s == StatusRejected }
