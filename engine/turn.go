package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/approval"

	"github.com/leashd/leashd/connectors"
)

// turn is one prompt's run through the agent; it implements TurnHandler.
type turn struct {
	e      *Engine
	c      *chat
	sess   agent.Session
	gen    int
	budget *budget

	mu        sync.Mutex
	tools     []string
	toolCount map[string]int
	texted    bool
	// after the plan was approved with clean_edit: the plan to start the
	// fresh session with; the rest of this turn is stopped.
	cleanPlan *string
	rules     *approval.Rules
	shown     int             // bytes of agent text streamed to the chats (outputlimit.go)
	cut       int             // bytes left out over the turn's output limit
	again     *approval.Again // see allowedAgain; used once
	// stopping: /stop or /clear is ending this turn; what they cancel is
	// answered with StopFollows.
	stopping bool
	life     *lifeSigns // see lifesigns.go
}

// markStopping notes that /stop or /clear ends the chat's running turn,
// before they cancel what it waits for (see StopFollows). Called with
// e.mu held.
func (c *chat) markStopping() {
	if c.current != nil {
		c.current.mu.Lock()
		c.current.stopping = true
		c.current.mu.Unlock()
	}
}

// runTurn runs one prompt in the chat's session and reports the result.
func (e *Engine) runTurn(ctx context.Context, c *chat, q queued) {
	prompt := q.text
	sess, err := e.turnSession(ctx, c, q)
	if errors.Is(err, agent.ErrNoRoom) && ctx.Err() == nil {
		e.waitForRoom(ctx, c, q, err)
		return
	}
	e.roomFound(c)
	if err != nil {
		e.couldNotStart(ctx, c, err)
		return
	}
	if sess == nil {
		return // the adopted agent ended before its turn could go on
	}
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := e.beginTurn(ctx, c, sess, cancel)
	start := time.Now()
	t.startLife(ctx)
	var res agent.Result
	if cont, ok := sess.(agent.Continuer); ok && q.adopted {
		res, err = cont.Continue(turnCtx, t)
	} else {
		res, err = sess.Turn(turnCtx, e.turnPrompt(ctx, c, sess, prompt, q.files), t)
	}
	t.endLife(ctx)
	t.budget.stop()
	if note := t.truncationNote(); note != "" {
		e.log.Warn("agent output over LEASHD_MAX_TURN_OUTPUT_BYTES was left out", "chat", c.id, "limit", e.opts.maxTurnOutput, "note", note)
		e.stream(e.agentCtx, c.id, note)
	}
	stale, cleanPlan := e.endTurn(c, t, res, err)
	if errors.Is(err, agent.ErrDetached) {
		return // let go of at shutdown: the next run of leashd carries it on
	}
	e.recordTurn(c, t, prompt, res)
	if e.metrics != nil {
		e.metrics.TurnFinished(err, res.IsError)
	}
	if stale { // /clear happened meanwhile; it said what happened
		return
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return // shutting down
	case err != nil && turnCtx.Err() != nil:
		e.coord.CancelPending(c.id, "The turn was stopped.")
		e.say(ctx, c.id, "The turn was stopped.")
		return
	case err != nil:
		e.log.Error("agent turn failed", "chat", c.id, "err", err)
		e.coord.CancelPending(c.id, "The agent stopped: "+err.Error())
		e.say(ctx, c.id, "The agent stopped unexpectedly: "+err.Error()+"\nYour next message starts it again, resuming the conversation.")
		return
	}
	if cleanPlan {
		e.say(ctx, c.id, "Plan approved. Starting a fresh session to implement it (mode: acceptEdits).")
		return
	}
	e.done(ctx, c.id, t.summary(res, time.Since(start)))
	e.afterLimit(ctx, c, res.UsageLimit)
	if res.AuthFailed {
		e.say(ctx, c.id, e.agent.About().NotLoggedIn)
	}
}

// couldNotStart tells the chat why its agent did not start (with how to
// install it when it is missing) and cancels what was pending there.
func (e *Engine) couldNotStart(ctx context.Context, c *chat, err error) {
	if ctx.Err() != nil {
		return
	}
	e.log.Error("starting agent", "chat", c.id, "agent", e.agent.Name(), "err", err)
	msg := "Could not start the agent: " + err.Error()
	if hint := e.agent.About().InstallHint; hint != "" && errors.Is(err, agent.ErrAgentNotFound) {
		msg += "\n" + hint
	}
	e.say(ctx, c.id, msg)
	e.coord.CancelPending(c.id, "The agent could not start.")
	if e.metrics != nil {
		e.metrics.TurnFinished(err, false)
	}
}

// beginTurn makes the chat's current turn and starts its time budget,
// which interrupts the turn when it runs out (time waiting for a person
// does not count).
func (e *Engine) beginTurn(ctx context.Context, c *chat, sess agent.Session, cancel context.CancelFunc) *turn {
	e.mu.Lock()
	t := &turn{e: e, c: c, sess: sess, gen: c.gen, toolCount: map[string]int{}, rules: c.rules(), again: c.again}
	c.again = nil
	c.cancel = cancel
	c.current = t
	c.active = time.Now()
	e.mu.Unlock()
	e.save(c)
	t.budget = newBudget(e.opts.turnTimeout, func() {
		e.log.Warn("agent turn timed out", "chat", c.id, "limit", e.opts.turnTimeout)
		e.say(ctx, c.id, fmt.Sprintf("The turn took longer than %s (not counting time waiting for you); stopping it.", e.opts.turnTimeout))
		e.coord.CancelPending(c.id, "The agent turn timed out.")
		ictx, icancel := context.WithTimeout(ctx, 10*time.Second)
		defer icancel()
		if err := sess.Interrupt(ictx); err != nil {
			cancel()
		}
	})
	return t
}

// endTurn records how the turn left the chat: the agent's session ID, a
// session that ended or failed (dropped and closed), and a plan approved
// with a clean context (a fresh session implements it, queued first).
// stale reports that /clear came meanwhile.
func (e *Engine) endTurn(c *chat, t *turn, res agent.Result, err error) (stale, cleanPlan bool) {
	sess := t.sess
	e.mu.Lock()
	c.cancel = nil
	c.current = nil
	c.active = time.Now()
	stale = c.gen != t.gen
	if res.SessionID != "" && !stale {
		c.agentID = res.SessionID
	} else if id := sess.ID(); id != "" && !stale {
		c.agentID = id
	}
	ended := false
	select {
	case <-sess.Done():
		ended = true
	default:
	}
	if (ended || (err != nil && !stale)) && c.sess == sess {
		e.dropSessionLocked(c) // a session whose turn failed is not reused
		ended = true
	}
	t.mu.Lock()
	plan := t.cleanPlan
	t.mu.Unlock()
	if plan != nil && !stale {
		if c.sess == sess {
			e.dropSessionLocked(c)
			ended = true
		}
		c.agentID = ""
		c.allowed = nil
		c.mode = agent.ModeAcceptEdits
		c.queue = append([]queued{{text: cleanPlanPrompt(*plan), fresh: true}}, c.queue...)
	}
	e.mu.Unlock()
	e.save(c)
	if ended {
		go e.closeSession(sess)
	}
	return stale, plan != nil
}

func cleanPlanPrompt(plan string) string {
	return "Implement the following plan, which the user has approved:\n\n" + plan
}

func (t *turn) summary(res agent.Result, d time.Duration) connectors.Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	tools := connectors.ToolsDone(t.tools, t.toolCount) // what the agent did, not its tools' names
	return connectors.Summary{Result: t.capResult(res.Text), IsError: res.IsError, CostUSD: res.CostUSD, NumTurns: res.NumTurns, Tools: tools, Duration: d}
}

// rememberSessionID saves the agent's session ID as soon as the turn sees
// it, not only when the turn ends: a question asked in a chat's first turn
// may be answered after leashd was killed, and that answer must resume
// this session rather than reach a new one with no context. Only the
// chat's current session counts (not one /clear or a clean plan approval
// has replaced).
func (t *turn) rememberSessionID() {
	id := t.sess.ID()
	if id == "" {
		return
	}
	t.e.mu.Lock()
	changed := t.c.gen == t.gen && t.c.sess == t.sess && t.c.agentID != id
	if changed {
		t.c.agentID = id
	}
	t.e.mu.Unlock()
	if changed {
		t.e.save(t.c)
	}
}

// Text implements TurnHandler.
func (t *turn) Text(text string) {
	t.rememberSessionID()
	if text == "" {
		return
	}
	t.mu.Lock()
	t.texted = true
	t.mu.Unlock()
	if text = t.limitText(text); text == "" {
		return // over the turn's output limit
	}
	t.e.stream(t.e.agentCtx, t.c.id, text)
}

// ToolUse implements TurnHandler.
func (t *turn) ToolUse(name string, input json.RawMessage) {
	t.rememberSessionID()
	t.mu.Lock()
	if t.toolCount[name] == 0 {
		t.tools = append(t.tools, name)
	}
	t.toolCount[name]++
	t.mu.Unlock()
}

// budget is a turn's time limit that does not count time spent waiting for
// a human: it pauses while any permission request is pending.
type budget struct {
	mu        sync.Mutex
	remaining time.Duration
	started   time.Time
	paused    int
	timer     *time.Timer
	fired     bool
	stopped   bool
}

func newBudget(limit time.Duration, onExpire func()) *budget {
	b := &budget{remaining: limit, started: time.Now()}
	if limit <= 0 {
		b.stopped = true
		return b
	}
	b.timer = time.AfterFunc(limit, func() {
		b.mu.Lock()
		if b.stopped || b.paused > 0 || b.fired {
			b.mu.Unlock()
			return
		}
		b.fired = true
		b.mu.Unlock()
		onExpire()
	})
	return b
}

func (b *budget) pause() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	if b.paused == 0 {
		b.timer.Stop()
		b.remaining -= time.Since(b.started)
	}
	b.paused++
}

func (b *budget) resume() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	b.paused--
	if b.paused == 0 {
		b.started = time.Now()
		b.timer.Reset(max(b.remaining, time.Millisecond))
	}
}

func (b *budget) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	if b.timer != nil {
		b.timer.Stop()
	}
}
