package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leashd/leashd/engine/agent"
)

// ResumeAfterLimitPrompt is the prompt that resumes a turn a usage limit
// stopped, once the limit has reset (WithResumeAfterLimit).
const ResumeAfterLimitPrompt = "[leashd: usage limit reset] Your usage limit has reset. Continue the task you were working on when it stopped you."

// resumeMargin is how long after the announced reset the resume prompt
// is sent, so it does not arrive a moment too early.
const resumeMargin = 30 * time.Second

// Clock tells the time and runs timers; tests replace it (WithClock).
type Clock interface {
	Now() time.Time
	// AfterFunc runs f after d; stop cancels it, reporting whether it did.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

type limitOptions struct {
	resume bool
	clock  Clock
}

func (e *Engine) clock() Clock {
	if e.opts.limits.clock != nil {
		return e.opts.limits.clock
	}
	return realClock{}
}

// limited is a chat whose last turn a usage limit stopped.
type limited struct {
	agent.UsageLimit
	gen  int         // the chat's generation: /clear since drops the resume
	stop func() bool // cancels the scheduled resume (nil: none scheduled)
}

// afterLimit runs after each turn: a turn a usage limit stopped tells the
// chat when the limit resets (and, with WithResumeAfterLimit, schedules a
// prompt that resumes the work then); a turn that ran cancels such a
// scheduled resume, since the work went on without it.
func (e *Engine) afterLimit(ctx context.Context, c *chat, lim *agent.UsageLimit) {
	e.mu.Lock()
	old := c.limit
	c.limit = nil
	if old != nil && old.stop != nil {
		old.stop()
	}
	if lim == nil {
		e.mu.Unlock()
		return
	}
	l := &limited{UsageLimit: *lim, gen: c.gen}
	c.limit = l
	now := e.clock().Now()
	if e.opts.limits.resume {
		l.stop = e.clock().AfterFunc(lim.ResetsAt.Sub(now)+resumeMargin, func() { e.resumeAfterLimit(c, l) })
	}
	e.mu.Unlock()
	msg := "Usage limit reached" + limitKind(lim.Kind) + ": it resets " + resetsAt(lim.ResetsAt, now) + "."
	if e.opts.limits.resume {
		msg += " leashd will resume this turn then by itself."
	} else {
		msg += " Send a message after that to continue."
	}
	e.log.Info("usage limit reached", "chat", c.id, "resets_at", lim.ResetsAt, "kind", lim.Kind, "resume", e.opts.limits.resume)
	e.say(ctx, c.id, msg)
}

// resumeAfterLimit sends the resume prompt, unless something replaced l
// (another turn ran, /clear) meanwhile.
func (e *Engine) resumeAfterLimit(c *chat, l *limited) {
	e.mu.Lock()
	current := c.limit == l && c.gen == l.gen
	if c.limit == l {
		c.limit = nil
	}
	ctx := e.agentCtx
	e.mu.Unlock()
	if !current || ctx.Err() != nil {
		return
	}
	e.log.Info("usage limit has reset: resuming the turn", "chat", c.id)
	e.say(ctx, c.id, "The usage limit has reset; resuming.")
	e.prompt(ctx, c.id, ResumeAfterLimitPrompt)
}

// limitStatus is /status's line about a usage limit ("" when none holds).
// Called with e.mu held.
func (e *Engine) limitStatus(c *chat) string {
	l := c.limit
	now := e.clock().Now()
	if l == nil || !now.Before(l.ResetsAt) {
		return ""
	}
	s := "Usage limit" + limitKind(l.Kind) + ": resets " + resetsAt(l.ResetsAt, now)
	if l.stop != nil {
		return s + "; the turn resumes then by itself"
	}
	return s
}

func limitKind(kind string) string {
	switch kind {
	case "":
		return ""
	case "five_hour":
		return " (5-hour)"
	case "seven_day":
		return " (weekly)"
	}
	return " (" + kind + ")"
}

// resetsAt says when: "at 2026-11-25 13:34 UTC (in 2h0m)".
func resetsAt(t, now time.Time) string {
	s := "at " + t.UTC().Format("2006-01-02 15:04 UTC")
	if d := t.Sub(now); d > 0 {
		s += fmt.Sprintf(" (in %s)", strings.TrimSuffix(d.Round(time.Minute).String(), "0s"))
	}
	return s
}
