package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/approval"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// restore runs at start-up, before the connectors take updates: every
// interaction an earlier run left pending — marked interrupted now when it
// crashed (Interrupt), or at its shutdown (Unanswered, within
// RelistWindow) — is registered in the coordinator again under its own ID,
// with its journaled multi-select selection. From then on a tap, a toggle,
// Done, a rejection or typed text reaches it exactly as before the restart,
// in every connector, with the same checks of who taps where. How it ends
// is recorded once (Recovered) and an answer goes to the chat's resumed
// session as a prompt (settleRestored).
//
// Its timeout starts afresh at the restart (nobody could answer while
// leashd was down); /clear and /stop cancel it like a live one, and a
// shutdown interrupts it again, to be restored at the next start.
//
// What an MCP client asked is not restored: no client can collect its
// answer after the restart (endAbandoned).
//
// It returns the crash leftovers (their messages still look pending, so
// markInterrupted edits them), the ones the last shutdown interrupted
// (shown again to watchers by relistUnanswered), and the MCP ones ended
// (their messages edited by showAbandoned).
func (e *Engine) restore(ctx context.Context) (crashed, stopped, gone []Interrupted) {
	if !e.opts.persistent {
		return nil, nil, nil
	}
	crashed, err := e.store.Interrupt(ctx)
	if err != nil {
		e.log.Error("marking interactions left pending by the last run as interrupted", "err", err)
	}
	all := slices.Clone(crashed)
	open, err := e.store.Unanswered(ctx, time.Now().Add(-RelistWindow))
	if err != nil {
		e.log.Error("listing interactions interrupted by the last shutdown", "err", err)
	}
	for _, in := range open {
		if !slices.ContainsFunc(crashed, func(c Interrupted) bool { return c.Interaction.ID == in.Interaction.ID }) {
			stopped = append(stopped, in)
			all = append(all, in)
		}
	}
	var restored []Interrupted
	for _, in := range all {
		if e.abandoned(ctx, in.Interaction) {
			e.endAbandoned(ctx, in.Interaction)
			gone = append(gone, in)
			continue
		}
		done, err := e.coord.Restore(e.agentCtx, interactions.Restored{Interaction: in.Interaction, Ref: in.Ref, Selected: in.Selected,
			Approvals: in.Approvals, JoinWithin: e.opts.adoptWithin})
		if err != nil {
			e.log.Error("an interaction left pending by the last run cannot be answered again", "id", in.Interaction.ID, "err", err)
			continue
		}
		restored = append(restored, in)
		go e.settleRestored(in.Interaction, done)
	}
	if len(restored) > 0 {
		e.log.Info("interactions left pending by the last run are answerable again", "count", len(restored))
	}
	keep := func(list []Interrupted) []Interrupted {
		return slices.DeleteFunc(list, func(in Interrupted) bool {
			return !slices.ContainsFunc(restored, func(r Interrupted) bool { return r.Interaction.ID == in.Interaction.ID })
		})
	}
	return keep(crashed), keep(stopped), gone
}

// settleRestored waits for a restored interaction to end, records how it
// ended (once), and sends an answer or a rejection to the chat's resumed
// session. One interrupted again by a shutdown is left as it is recorded:
// the next start restores it again.
func (e *Engine) settleRestored(it interactions.Interaction, done <-chan interactions.Resolution) {
	res := <-done
	if res.Status == interactions.StatusInterrupted {
		return
	}
	ctx := context.WithoutCancel(e.agentCtx)
	first, err := e.store.Recovered(ctx, it.ID, res)
	switch {
	case err != nil:
		// The answer still reaches the agent: losing it would be worse
		// than the next start asking again.
		e.log.Error("recording how an interaction left by the last run ended", "id", it.ID, "status", res.Status, "err", err)
	case !first:
		e.log.Warn("an interaction left by the last run was already settled; this outcome is dropped", "id", it.ID, "status", res.Status)
		return
	}
	if res.Joined {
		return // the agent that asked, adopted, took the answer (adopt.go)
	}
	if res.Status != interactions.StatusAnswered && res.Status != interactions.StatusRejected {
		return // expired or cancelled: nobody answered, nothing to tell
	}
	if it.Kind == interactions.KindQuestion && it.Approval && it.Header == DiscardHeader {
		// leashd's own /discard confirmation, not the agent's question: the
		// tap must not reach the agent as a prompt, and the worktree the
		// confirmation named may have changed since.
		if res.Status == interactions.StatusAnswered && res.Answer == DiscardConfirm {
			e.say(ctx, it.ChatID, "This /discard confirmation was interrupted by a restart, so nothing was removed; send /discard again.")
		}
		return
	}
	if e.askedByProgram(ctx, it) {
		// A program asked: it collects the answer (Outcome reads the
		// journal); the chat's agent never sees it.
		return
	}
	e.log.Info("interaction answered after restart", "id", it.ID, "chat", it.ChatID, "kind", it.Kind, "by", res.By)
	if it.Kind == interactions.KindPlanReview && res.Status == interactions.StatusAnswered {
		switch res.Decision {
		case interactions.DecisionCleanEdit:
			// As when approved live: a fresh session, seeded with the
			// approved plan, edits without asking.
			e.setMode(ctx, it.ChatID, agent.ModeAcceptEdits)
			e.say(ctx, it.ChatID, "Plan approved. Starting a fresh session to implement it (mode: acceptEdits).")
			e.enqueue(ctx, it.ChatID, queued{text: cleanPlanPrompt(it.Plan), fresh: true})
			return
		case interactions.DecisionEdit:
			e.setMode(ctx, it.ChatID, agent.ModeAcceptEdits)
		case interactions.DecisionDefault:
			e.setMode(ctx, it.ChatID, agent.ModeDefault)
		}
	}
	e.enqueue(ctx, it.ChatID, queued{text: RecoveredPrompt(it, res), again: approval.AgainFor(it, res)})
}

// markInterrupted edits, once the owning connector is ready, the messages
// of the interactions a crash left pending to say leashd restarted (their
// buttons keep working: they are pending again). One answered meanwhile is
// left alone.
func (e *Engine) markInterrupted(ctx context.Context, left []Interrupted) {
	for _, in := range left {
		if _, pending := e.coord.Get(in.Interaction.ID); !pending {
			continue
		}
		ev := interactions.Event{
			Type:        interactions.EventResolved,
			Interaction: in.Interaction,
			Ref:         in.Ref,
			Selected:    e.coord.Selected(in.Interaction.ID),
			Approvals:   e.coord.Approvals(in.Interaction.ID),
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
	b.WriteString(agent.RecoveredPromptPrefix + "\n")
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
