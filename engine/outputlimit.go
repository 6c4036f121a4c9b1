package engine

import (
	"github.com/leashd/leashd/engine/approval"

	"github.com/leashd/leashd/engine/agent"
)

// limitText applies the turn's output limit to text about to be streamed:
// it returns what may be sent.
func (t *turn) limitText(text string) string {
	limit := t.e.opts.maxTurnOutput
	if limit <= 0 {
		return text
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	part, cut := approval.CapText(text, limit-t.shown)
	t.shown += len(part)
	t.cut += cut
	return part
}

// truncationNote is the note ending a turn whose output was cut ("" when
// nothing was).
func (t *turn) truncationNote() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut == 0 {
		return ""
	}
	return "\n\n" + agent.TruncatedNote(t.cut)
}

// capResult bounds a turn's final text (shown by connectors that did not
// stream it) like its streamed output.
func (t *turn) capResult(text string) string {
	limit := t.e.opts.maxTurnOutput
	if limit <= 0 || len(text) <= limit {
		return text
	}
	part, cut := approval.CapText(text, limit)
	return part + "\n\n" + agent.TruncatedNote(cut)
}
