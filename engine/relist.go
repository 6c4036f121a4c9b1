package engine

import (
	"context"
	"slices"
	"time"

	"github.com/leashd/leashd/interactions"
)

// RelistWindow is how far back the start-up looks for interactions an
// earlier shutdown interrupted: those interrupted longer ago are not
// restored (their buttons answer "no longer active").
const RelistWindow = 7 * 24 * time.Hour

// relistUnanswered runs at start-up, before markInterrupted: requests an
// earlier run interrupted at its shutdown that nobody has answered (pending
// again: restore registered them) are shown again to the watchers (the web
// page), which keep no history across a restart, so they can still be
// answered there. Chat apps keep their messages, edited at the shutdown,
// and are not told again.
func (e *Engine) relistUnanswered(ctx context.Context, open []Interrupted) {
	if len(open) == 0 {
		return
	}
	e.mu.Lock()
	watchers := slices.Clone(e.watchers)
	e.mu.Unlock()
	for _, w := range watchers {
		if !waitReady(ctx, w) {
			return
		}
		for _, in := range open {
			if _, pending := e.coord.Get(in.Interaction.ID); !pending {
				continue // answered meanwhile
			}
			ev := interactions.Event{
				Type:        interactions.EventResolved,
				Interaction: in.Interaction,
				Ref:         in.Ref,
				Selected:    e.coord.Selected(in.Interaction.ID),
				Approvals:   e.coord.Approvals(in.Interaction.ID),
				Resolution:  interactions.Resolution{Status: interactions.StatusInterrupted, Text: interactions.InterruptedNotice, At: time.Now()},
			}
			if err := w.Update(ctx, ev); err != nil {
				e.log.Warn("showing an interrupted interaction again", "id", in.Interaction.ID, "err", err)
			}
		}
	}
}
