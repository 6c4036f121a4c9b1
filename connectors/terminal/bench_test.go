package terminal

import (
	"io"
	"strings"
	"testing"

	"github.com/leashd/leashd/interactions"
)

// BenchmarkKeyDecoder decodes typical typing: text, arrows, Enter.
func BenchmarkKeyDecoder(b *testing.B) {
	in := []byte(strings.Repeat("hello world \x1b[A\x1b[B\r", 64))
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		var d keyDecoder
		_ = d.Feed(in)
	}
}

// BenchmarkRedrawPlanReview is the work of one key press at a plan review:
// the live region (four options, Reject, prompt) rebuilt and redrawn.
func BenchmarkRedrawPlanReview(b *testing.B) {
	it := interactions.Interaction{ID: "x", ChatID: "terminal:local", Kind: interactions.KindPlanReview, Options: interactions.PlanOptions}
	u := newUI(New(nil, io.Discard), nil, &screen{w: io.Discard, tty: true, color: true, width: func() int { return 100 }})
	u.queue = []*prompt{{it: it, mode: it.AnswerMode(), shown: true, selected: map[string]bool{}}}
	for i := 0; b.Loop(); i++ {
		u.queue[0].pointer = i % 5
		u.redraw()
		_ = u.s.flush()
	}
}
