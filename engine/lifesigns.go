package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/leashd/leashd/connectors"
)

// ProgressEvery is how often a running turn shows signs of life: the time
// it has taken and what its tools did so far, at the foot of its streamed
// output (connectors.Progresser). Not more often: chat apps limit edits.
const ProgressEvery = 30 * time.Second

// lifeSigns shows a running turn's progress every ProgressEvery until the
// turn ends, on the engine's clock.
type lifeSigns struct {
	mu     sync.Mutex
	stop   func() bool // the next tick's timer
	ended  bool
	shown  bool // a progress line is showing: the turn's end clears it
	start  time.Time
	chatID string
}

// startLife starts the turn's signs of life.
func (t *turn) startLife(ctx context.Context) {
	l := &lifeSigns{start: t.e.clock().Now(), chatID: t.c.id}
	t.mu.Lock()
	t.life = l
	t.mu.Unlock()
	var tick func()
	tick = func() {
		if !t.budget.waiting() { // a question is shown meanwhile: it says what is going on
			text := t.progressText(t.e.clock().Now().Sub(l.start))
			l.mu.Lock()
			ended := l.ended
			l.shown = l.shown || !ended
			l.mu.Unlock()
			if ended {
				return
			}
			t.e.progress(ctx, l.chatID, text)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if !l.ended {
			l.stop = t.e.clock().AfterFunc(ProgressEvery, tick)
		}
	}
	l.mu.Lock()
	l.stop = t.e.clock().AfterFunc(ProgressEvery, tick)
	l.mu.Unlock()
}

// endLife stops the signs of life and takes the progress line away.
func (t *turn) endLife(ctx context.Context) {
	t.mu.Lock()
	l := t.life
	t.mu.Unlock()
	if l == nil {
		return
	}
	l.mu.Lock()
	l.ended = true
	stop, shown := l.stop, l.shown
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	if shown {
		t.e.progress(ctx, l.chatID, "")
	}
}

// progressText says how long the turn has run and what it did so far:
// "⏳ Still working · 1m 30s · ran 2 commands, read a file".
func (t *turn) progressText(d time.Duration) string {
	t.mu.Lock()
	done := connectors.ToolsDone(t.tools, t.toolCount)
	t.mu.Unlock()
	s := "⏳ Still working · " + elapsed(d)
	if len(done) > 0 {
		s += " · " + strings.Join(done, ", ")
	}
	return s
}

// elapsed is a duration in whole seconds as people say it: 45s, 1m 30s,
// 1h 5m.
func elapsed(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// progress shows a running turn's progress line in the chat's outputs
// that can show one ("" takes it away).
func (e *Engine) progress(ctx context.Context, chatID, text string) {
	for _, o := range e.outputs(chatID) {
		p, ok := o.(connectors.Progresser)
		if !ok {
			continue
		}
		if err := p.Progress(ctx, chatID, text); err != nil {
			e.log.Warn("showing a turn's progress", "chat", chatID, "err", err)
		}
	}
}

// waiting reports whether a person is being asked something (the budget
// is paused).
func (b *budget) waiting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.paused > 0
}
