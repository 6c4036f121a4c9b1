package interactions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// SelectionJournal is a Journal that also keeps a multi-select question's
// selection, so that a restart does not lose the options already ticked
// (Restore takes them back). Toggle calls Selected with the whole selection,
// in option order, before it returns; calls for one interaction are made
// one at a time, the last with the latest selection.
type SelectionJournal interface {
	Selected(ctx context.Context, id string, labels []string) error
}

// Restored is an interaction an earlier run of leashd left pending, as the
// journal kept it.
type Restored struct {
	// Interaction as it was asked: its ID, chat, question, AskedAt.
	Interaction Interaction
	// Ref is the message that shows it (what the Presenter returned then).
	Ref string
	// Selected is a multi-select question's selection so far.
	Selected []string
	// Approvals are the approvals counted so far towards its Quorum.
	Approvals []Approver
	// JoinWithin, for one with an AgentRef, is how long after it ended
	// an agent asking again may still take its outcome (join.go).
	JoinWithin time.Duration
}

// ApprovalJournal is a Journal that also keeps the approvals counted
// towards an interaction's Quorum, so that a restart does not lose them
// (Restore takes them back). Reply calls Approved with every approval so
// far, first first, before it returns; calls for one interaction are made
// one at a time, the last with the latest list.
type ApprovalJournal interface {
	Approved(ctx context.Context, id string, approvals []Approver) error
}

// Restore registers an interaction an earlier run left pending, under its
// own ID and with its selection, without presenting it again (its message
// exists). It returns once it is registered; the channel delivers how it
// ended. From then on it is one pending interaction like any other: Reply,
// ReplyText, Toggle (which is journaled), Confirm, CancelPending, Cancel and
// Interrupt work on it the same way, ctx ending cancels it, and its events
// carry Ref.
//
// Its deadline is a fresh timeout counted from Restore, not from when it was
// first asked: nobody could answer while leashd was down. Its outcome is not
// written to the Journal (which holds it as interrupted already): the
// caller records it. One the agent's own process asked again (same
// AgentRef, join.go) is answered to that process: then the outcome says
// Joined, and the caller must not send the answer on. The error
// is non-nil only when it could not be
// registered (no ID, an invalid interaction, that ID already pending, or the
// coordinator closed).
func (c *Coordinator) Restore(ctx context.Context, r Restored) (<-chan Resolution, error) {
	it := r.Interaction
	if it.ID == "" {
		return nil, fmt.Errorf("%w: the restored interaction has no ID", ErrInvalidReply)
	}
	if err := validate(&it); err != nil {
		return nil, err
	}
	it.Restored = true
	it.Deadline = time.Time{}
	if c.timeout > 0 {
		it.Deadline = c.now().Add(c.timeout)
	}
	p := newPending(&it)
	p.restored, p.ref = true, r.Ref
	if it.AgentRef != "" {
		p.joined = make(chan struct{})
	}
	p.approvals = restoredApprovals(it, r.Approvals)
	for _, l := range r.Selected {
		if i := optionIndex(it, l); i >= 0 && it.MultiSelect {
			p.selected[i] = true
		}
	}

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if _, taken := c.byID[it.ID]; taken {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: interaction %s is already pending", ErrInvalidReply, it.ID)
	}
	c.addLocked(p, c.timeout)
	sel := p.selectedLabels() // a tap may toggle as soon as the lock is let go
	approvals := slices.Clone(p.approvals)
	c.mu.Unlock()

	c.log.Info("interaction left pending by an earlier run is answerable again", "id", it.ID, "chat", it.ChatID, "kind", it.Kind)
	c.subs.publish(&Event{Type: EventRequested, Interaction: it, Ref: r.Ref, Selected: sel, Approvals: approvals})

	out := make(chan Resolution, 1)
	go func() {
		c.wait(ctx, p)
		res := p.res
		res.Joined = c.joinedLater(p, r.JoinWithin)
		out <- res
	}()
	return out, nil
}

// restoredApprovals are the approvals an earlier run counted for it, each
// person once, fewer than its quorum (the last one needed would have
// resolved it).
func restoredApprovals(it Interaction, given []Approver) []Approver {
	if !it.NeedsQuorum() {
		return nil
	}
	var out []Approver
	for _, a := range given {
		if !slices.ContainsFunc(out, func(b Approver) bool { return b.By == a.By }) {
			out = append(out, a)
		}
	}
	if len(out) >= it.Quorum {
		out = out[:it.Quorum-1]
	}
	return out
}

// journalSelection records p's current selection (SelectionJournal), unless
// p has ended: its outcome is recorded then.
func (c *Coordinator) journalSelection(p *pending) {
	sj, ok := c.journal.(SelectionJournal)
	if !ok {
		return
	}
	p.journalMu.Lock()
	defer p.journalMu.Unlock()
	c.mu.Lock()
	settled, sel := p.settled, p.selectedLabels()
	c.mu.Unlock()
	if settled {
		return
	}
	if sel == nil {
		sel = []string{}
	}
	if err := sj.Selected(context.Background(), p.it.ID, sel); err != nil {
		c.log.Error("recording a multi-select selection", "id", p.it.ID, "err", err)
	}
}

// journalApprovals records p's approvals so far (ApprovalJournal).
func (c *Coordinator) journalApprovals(p *pending) {
	aj, ok := c.journal.(ApprovalJournal)
	if !ok {
		return
	}
	p.journalMu.Lock()
	defer p.journalMu.Unlock()
	c.mu.Lock()
	approvals := slices.Clone(p.approvals)
	c.mu.Unlock()
	if err := aj.Approved(context.Background(), p.it.ID, approvals); err != nil {
		c.log.Error("recording an approval", "id", p.it.ID, "err", err)
	}
}

// WithPresentRetry sets the backoff between attempts to show an interaction
// whose Present failed: first the first wait, doubling up to max (defaults
// 2s and 1m).
func WithPresentRetry(first, max time.Duration) Opt {
	return func(c *Coordinator) {
		if first > 0 {
			c.retryFirst = first
		}
		if max >= first {
			c.retryMax = max
		}
	}
}

type attemptKey struct{}

func withAttempt(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, attemptKey{}, n)
}

// PresentAttempt is, inside Presenter.Present, which attempt to show the
// interaction this is: 1 the first, more for a retry after a failure (a
// Presenter showing it in several places may show it again only where it
// failed).
func PresentAttempt(ctx context.Context) int {
	if n, ok := ctx.Value(attemptKey{}).(int); ok {
		return n
	}
	return 1
}

// retryPresent shows p again, with backoff, until it is shown or resolved.
func (c *Coordinator) retryPresent(ctx context.Context, p *pending, presenter Presenter) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	wait := c.retryFirst
	for attempt := 2; ; attempt++ {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		it := &p.it
		ref, err := presenter.Present(withAttempt(ctx, attempt), it)
		if err == nil {
			c.log.Info("interaction shown after earlier attempts failed", "id", it.ID, "chat", it.ChatID, "attempt", attempt)
			c.shown(context.WithoutCancel(ctx), p, ref)
			return
		}
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return // it ended meanwhile
		}
		wait = min(wait*2, c.retryMax)
		c.log.Warn("presenting interaction failed again; it stays pending and answerable elsewhere",
			"id", it.ID, "chat", it.ChatID, "attempt", attempt, "next_in", wait, "err", err)
	}
}
