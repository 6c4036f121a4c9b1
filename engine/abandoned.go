package engine

import (
	"context"
	"time"

	"github.com/leashd/leashd/interactions"
)

// A request an MCP client asked over HTTP is answered to that client's
// tool call, which a restart ends: nobody can collect its answer
// afterwards. So a restart does not offer it again but ends it, saying the
// program that asked is gone. A request from the HTTP API stays: its
// caller collects the answer by ID after the restart.

// abandoned reports whether it was asked by an MCP client (from the
// journal when the interaction does not say).
func (e *Engine) abandoned(ctx context.Context, it interactions.Interaction) bool {
	if it.Asker != "" {
		return it.Asker == AskerMCP
	}
	by, err := e.store.AskedBy(ctx, it.ID)
	if err != nil {
		e.log.Warn("looking up who asked an interaction", "id", it.ID, "err", err)
		return false
	}
	return by == AskerMCP
}

// abandonedResolution is how such a request ends.
func abandonedResolution() interactions.Resolution {
	return interactions.Resolution{Status: interactions.StatusCancelled, Text: interactions.AskerGoneText, At: time.Now()}
}

// endAbandoned records that it ended: the audit log and a later lookup by
// ID see it cancelled, and the next start does not find it again.
func (e *Engine) endAbandoned(ctx context.Context, it interactions.Interaction) {
	if _, err := e.store.Recovered(context.WithoutCancel(ctx), it.ID, abandonedResolution()); err != nil {
		e.log.Error("recording that a request asked over MCP before the restart ended", "id", it.ID, "err", err)
	}
	e.log.Info("a request asked over MCP before the restart is ended: the program that asked is gone", "id", it.ID, "chat", it.ChatID)
}

// showAbandoned edits, once each connector is ready, the messages of the
// requests endAbandoned ended, to say so in place of their buttons.
func (e *Engine) showAbandoned(ctx context.Context, gone []Interrupted) {
	for _, in := range gone {
		ev := interactions.Event{
			Type:        interactions.EventResolved,
			Interaction: in.Interaction,
			Ref:         in.Ref,
			Resolution:  abandonedResolution(),
		}
		for _, o := range e.outputs(in.Interaction.ChatID) {
			if !waitReady(ctx, o) {
				return
			}
			if err := o.Update(ctx, ev); err != nil {
				e.log.Warn("updating the message of a request whose program is gone", "id", in.Interaction.ID, "err", err)
			}
		}
	}
}
