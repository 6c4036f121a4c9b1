package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// RecoveredPromptPrefix starts the prompt that carries an answer given
// after a restart to the agent; agents may recognise it.
const RecoveredPromptPrefix = "[leashd: answer recovered after restart]"

// recover answers an interaction that a restart interrupted: the answer
// is recorded once and sent to the chat's (resumed) session as a prompt, so
// the work continues. notFound is returned when id is not such an
// interaction.
func (e *Engine) recover(ctx context.Context, id string, r interactions.Reply, notFound error) (interactions.Outcome, error) {
	in, ok, err := e.opts.recovery.LookupInterrupted(ctx, id)
	if err != nil {
		e.log.Error("looking up interrupted interaction", "id", id, "err", err)
		return 0, notFound
	}
	if !ok {
		return 0, notFound
	}
	it := in.Interaction
	if it.Kind == interactions.KindQuestion && it.Approval && it.Header == DiscardHeader {
		// leashd's own /discard confirmation, not the agent's question: a
		// late tap must not reach the agent as a prompt.
		return 0, fmt.Errorf("%w: this /discard confirmation was interrupted by a restart; send /discard again", interactions.ErrNotPending)
	}
	if r.Authorize != nil {
		if err := r.Authorize(it); err != nil {
			return 0, fmt.Errorf("%w: %w", interactions.ErrUnauthorized, err)
		}
	}
	res, out, err := interactions.Evaluate(it, r)
	if err != nil {
		return 0, err
	}
	if out == interactions.AwaitingFeedback {
		// Nothing is pending to hold the feedback: take the decision now,
		// and let the person's next message carry the feedback.
		res.Status, res.Text = interactions.StatusRejected, "The user wants to adjust the plan; their feedback follows in the next message."
	}
	res.At = time.Now()
	first, err := e.opts.recovery.Recovered(ctx, id, res)
	if err != nil {
		return 0, fmt.Errorf("recording the recovered answer: %w", err)
	}
	if !first {
		return 0, fmt.Errorf("%w: it was already answered after the restart", interactions.ErrNotPending)
	}
	e.log.Info("interaction answered after restart", "id", id, "chat", it.ChatID, "kind", it.Kind, "by", res.By)
	ev := interactions.Event{Type: interactions.EventResolved, Interaction: it, Resolution: res, Ref: in.Ref}
	for _, o := range e.outputs(it.ChatID) {
		if err := o.Update(ctx, ev); err != nil {
			e.log.Warn("updating recovered interaction message", "id", id, "err", err)
		}
	}
	if it.Kind == interactions.KindPlanReview && res.Status == interactions.StatusAnswered {
		switch res.Decision {
		case interactions.DecisionCleanEdit:
			// As when approved live: a fresh session, seeded with the
			// approved plan, edits without asking.
			e.setMode(ctx, it.ChatID, ModeAcceptEdits)
			e.say(ctx, it.ChatID, "Plan approved. Starting a fresh session to implement it (mode: acceptEdits).")
			e.enqueue(ctx, it.ChatID, queued{text: cleanPlanPrompt(it.Plan), fresh: true})
			return interactions.Resolved, nil
		case interactions.DecisionEdit:
			e.setMode(ctx, it.ChatID, ModeAcceptEdits)
		case interactions.DecisionDefault:
			e.setMode(ctx, it.ChatID, ModeDefault)
		}
	}
	e.enqueue(ctx, it.ChatID, queued{text: RecoveredPrompt(it, res), again: allowAgain(it, res)})
	if out == interactions.AwaitingFeedback {
		return interactions.AwaitingFeedback, nil
	}
	return interactions.Resolved, nil
}

// markInterrupted runs at start-up: interactions a crash left pending are
// marked interrupted, and their chats' messages say so once the owning
// connector is ready (their buttons keep working through recover).
func (e *Engine) markInterrupted(ctx context.Context) {
	if e.opts.recovery == nil {
		return
	}
	left, err := e.opts.recovery.Interrupt(ctx)
	if err != nil {
		e.log.Error("marking interactions left pending by the last run as interrupted", "err", err)
		return
	}
	if len(left) == 0 {
		return
	}
	e.log.Info("interactions left pending by the last run are answerable again", "count", len(left))
	for _, in := range left {
		ev := interactions.Event{
			Type:        interactions.EventResolved,
			Interaction: in.Interaction,
			Ref:         in.Ref,
			Resolution:  interactions.Resolution{Status: interactions.StatusInterrupted, Text: interactions.InterruptedNotice, At: time.Now()},
		}
		for _, o := range e.outputs(in.Interaction.ChatID) {
			if !waitReady(ctx, o) {
				return
			}
			if err := o.Update(ctx, ev); err != nil {
				e.log.Warn("updating interrupted interaction message", "id", in.Interaction.ID, "err", err)
			}
		}
	}
}

// waitReady waits until o is connected (when it can say), for at most a
// minute; false when ctx ended first.
func waitReady(ctx context.Context, o connectors.Output) bool {
	r, ok := o.(connectors.Readier)
	if !ok {
		return ctx.Err() == nil
	}
	deadline := time.Now().Add(time.Minute)
	for r.Ready() != nil && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return ctx.Err() == nil
}

// RecoveredPrompt tells the agent what a person answered to a request that
// a restart interrupted.
func RecoveredPrompt(it interactions.Interaction, res interactions.Resolution) string {
	var b strings.Builder
	b.WriteString(RecoveredPromptPrefix + "\n")
	switch it.Kind {
	case interactions.KindQuestion:
		fmt.Fprintf(&b, "Before leashd restarted you asked: %q", it.Question)
		if len(it.Options) > 0 {
			labels := make([]string, len(it.Options))
			for i, o := range it.Options {
				labels[i] = o.Label
			}
			fmt.Fprintf(&b, " (options: %s)", strings.Join(labels, ", "))
		}
		b.WriteString(".\n")
		if res.Status == interactions.StatusAnswered {
			fmt.Fprintf(&b, "The user answered: %q. Continue with that answer.", res.Answer)
		} else {
			fmt.Fprintf(&b, "The user declined to answer: %s", res.Text)
		}
	case interactions.KindPlanReview:
		b.WriteString("Before leashd restarted you asked the user to review your plan:\n\n" + it.Plan + "\n\n")
		switch res.Decision {
		case interactions.DecisionAdjust:
			b.WriteString("The user wants changes to the plan: " + res.Text)
		case interactions.DecisionReject:
			b.WriteString("The user rejected the plan: " + res.Text)
		default:
			fmt.Fprintf(&b, "The user approved the plan (%s: %s). Implement it.", res.Decision, connectors.DecisionLabel(res.Decision))
		}
	case interactions.KindToolApproval:
		fmt.Fprintf(&b, "Before leashd restarted you asked to use the tool %s:\n%s\n", it.ToolName, it.ToolSummary)
		switch res.Decision {
		case interactions.DecisionAllow, interactions.DecisionAllowSession:
			b.WriteString("The user allowed it. Run it again to continue.")
		default:
			b.WriteString("The user denied it: " + res.Text)
		}
	}
	return b.String()
}
