package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/approval"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// chat is one conversation's state; guarded by Engine.mu.
type chat struct {
	id      string
	loaded  bool
	mode    agent.Mode
	agentID string // agent session ID for resuming
	workDir string

	sess    agent.Session // live session, holding a slot; nil when none
	busy    bool          // a worker goroutine is running turns
	queue   []queued
	cancel  context.CancelFunc // the running turn's
	current *turn              // the running turn
	active  time.Time
	idle    *time.Timer
	gen     int // bumped by /clear: a running turn's results no longer count
	allowed *approval.Rules
	again   *approval.Again // the next turn's, taken by runTurn
	limit   *limited        // a usage limit stopped the last turn; see usagelimit.go
	// lastPrompt is the last prompt a person sent: /merge's commit message.
	lastPrompt string
	// wasInTurn: the last run of leashd saved it mid-turn (adopt.go);
	// keepInTurn: its session was let go of mid-turn at shutdown, so it
	// is saved as mid-turn for the next run.
	wasInTurn, keepInTurn bool
	// wasLetGo: the last run let go of its agent, which this run may
	// adopt (until adoptUntil); letGo: this run let go of it.
	wasLetGo, letGo bool
	// roomWait: its agent found no room to start (room.go); its queue
	// waits for a slot to free or a runner to connect.
	roomWait bool
}

// queued is a prompt waiting for its turn.
type queued struct {
	text string
	// fresh: run it in a new agent session, not the chat's current one
	// (a plan approved with a clean context).
	fresh bool
	// again: the tool call a person allowed after a restart, which this
	// turn (the recovered answer) may re-issue without being asked again.
	again *approval.Again
	// files: what the person sent with the text (attach.go).
	files *bundle
	// adopted: not a prompt but the turn an adopted agent is in (adopt.go).
	adopted bool
}

type waiter struct {
	chat  *chat
	ready chan struct{}
}

// chatFor returns the chat's state, loading it from the store the first
// time. It takes e.mu; the store is read without it.
func (e *Engine) chatFor(ctx context.Context, chatID string) *chat {
	e.mu.Lock()
	c, ok := e.chats[chatID]
	if !ok {
		c = &chat{id: chatID, mode: e.opts.defaultMode, workDir: e.opts.workDir}
		e.chats[chatID] = c
	}
	loaded := c.loaded
	e.mu.Unlock()
	if loaded {
		return c
	}
	rec, found, err := e.store.LoadSession(ctx, chatID)
	if err != nil {
		e.log.Error("loading session", "chat", chatID, "err", err)
	}
	e.mu.Lock()
	if !c.loaded {
		c.loaded = true
		if found {
			c.agentID = rec.AgentSessionID
			if rec.Mode != "" {
				c.mode = rec.Mode
			}
			// A worktree (LEASHD_WORKTREES=on) is the chat's own; with
			// worktrees off every chat works in the configured directory,
			// also one that worked in a worktree before.
			if rec.WorkDir != "" && e.opts.worktrees != nil {
				c.workDir = rec.WorkDir
			}
			c.active = rec.LastActive
			c.wasInTurn = rec.InTurn
			c.wasLetGo = rec.LetGo
		}
	}
	e.mu.Unlock()
	return c
}

// save persists the chat's session record: the record is copied under
// e.mu, the write happens without it.
func (e *Engine) save(c *chat) {
	e.mu.Lock()
	rec := SessionRecord{ChatID: c.id, AgentSessionID: c.agentID, Mode: c.mode, WorkDir: c.workDir, LastActive: c.active,
		InTurn: c.current != nil || c.keepInTurn, LetGo: c.letGo}
	e.mu.Unlock()
	if err := e.store.SaveSession(context.Background(), rec); err != nil {
		e.log.Error("saving session", "chat", c.id, "err", err)
	}
}

// HandleMessage implements connectors.Handler: commands first, then text
// for a pending interaction, otherwise a prompt for the agent (queued when
// the agent is busy).
func (e *Engine) HandleMessage(ctx context.Context, in connectors.Incoming) (connectors.Route, error) {
	if len(in.Files) > 0 {
		e.gather(ctx, in)
		return connectors.RouteAgent, nil
	}
	text := strings.TrimSpace(in.Text)
	if text == "" {
		return "", errors.New("empty message")
	}
	if strings.HasPrefix(text, "/") {
		e.command(ctx, in, text)
		return connectors.RouteCommand, nil
	}
	if it, out, err := e.coord.ReplyText(in.ChatID, interactions.Reply{By: in.UserID, Text: text, Authorize: in.Authorize}); err == nil {
		msg := "Response received."
		if out == interactions.AwaitingFeedback {
			msg = "What should change?"
		}
		_ = it
		e.say(ctx, in.ChatID, msg)
		return connectors.RouteInteraction, nil
	} else if !errors.Is(err, interactions.ErrNotFound) {
		e.say(ctx, in.ChatID, "Your answer was not accepted: "+err.Error())
		return connectors.RouteInteraction, err
	}
	if !e.withHeld(ctx, in.ChatID, text) {
		e.prompt(ctx, in.ChatID, text)
	}
	return connectors.RouteAgent, nil
}

// prompt queues text as the chat's next turn and starts a worker if none
// runs.
func (e *Engine) prompt(ctx context.Context, chatID, text string) {
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	c.lastPrompt = text
	e.mu.Unlock()
	e.enqueue(ctx, chatID, queued{text: text})
}

// enqueue queues q as the chat's next turn and starts a worker if none
// runs.
func (e *Engine) enqueue(ctx context.Context, chatID string, q queued) {
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	c.queue = append(c.queue, q)
	busy := c.busy
	pos := len(c.queue)
	if !busy {
		c.busy = true
		e.wg.Add(1)
	}
	e.mu.Unlock()
	if busy {
		e.say(ctx, chatID, fmt.Sprintf("The agent is busy; your message is queued and will be sent as the next turn (%s in the queue).", ordinal(pos)))
		return
	}
	go e.worker(c)
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// worker runs the chat's queued prompts one turn at a time.
func (e *Engine) worker(c *chat) {
	defer e.wg.Done()
	for {
		e.mu.Lock()
		if len(c.queue) == 0 || e.agentCtx.Err() != nil {
			c.busy = false
			c.queue = nil
			var handOver agent.Session
			if len(e.waiters) > 0 && c.sess != nil {
				// Other chats wait for a slot: give them this idle one.
				handOver = c.sess
				e.dropSessionLocked(c)
			}
			e.armIdleLocked(c)
			e.mu.Unlock()
			if handOver != nil {
				e.closeSession(handOver)
			}
			return
		}
		q := c.queue[0]
		c.queue = c.queue[1:]
		ctx := e.agentCtx
		var old agent.Session
		if q.fresh {
			// A new session with no context: the one the chat had (and
			// its session rules) is closed and forgotten.
			old = c.sess
			e.dropSessionLocked(c)
			c.agentID = ""
			c.allowed = nil
		}
		c.again = q.again
		e.mu.Unlock()
		if q.fresh {
			e.save(c)
			if old != nil {
				e.closeSession(old)
			}
		}
		e.runTurn(ctx, c, q)
		if e.stopForRoom(c) {
			return
		}
	}
}

// armIdleLocked starts the idle timer of a chat whose live session has
// nothing to do.
func (e *Engine) armIdleLocked(c *chat) {
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	if c.sess == nil || e.opts.idleTimeout <= 0 {
		return
	}
	sess := c.sess
	c.idle = time.AfterFunc(e.opts.idleTimeout, func() {
		e.mu.Lock()
		if c.sess != sess || c.busy {
			e.mu.Unlock()
			return
		}
		e.dropSessionLocked(c)
		e.mu.Unlock()
		e.log.Info("closing idle agent session", "chat", c.id, "session", sess.ID())
		e.closeSession(sess)
	})
}

// session returns the chat's live session, opening one (and waiting for a
// free slot, telling the chat its place in the queue) when there is none.
func (e *Engine) session(ctx context.Context, c *chat) (agent.Session, error) {
	e.mu.Lock()
	if s := e.liveSessionLocked(c); s != nil {
		e.mu.Unlock()
		return s, nil
	}
	r := e.reserveSlotLocked(c)
	e.mu.Unlock()
	if r.evict != nil {
		e.closeSession(r.evict)
	}
	if r.wait != nil {
		if err := e.waitForSlot(ctx, c, r); err != nil {
			return nil, err
		}
	}
	if r.spare != nil {
		s, err := e.useSpare(ctx, r.spare)
		if err != nil {
			return nil, err // the spare's retirement frees the slot
		}
		if s != nil {
			e.mu.Lock()
			c.sess = s
			e.reportSessionsLocked()
			e.mu.Unlock()
			return s, nil
		}
		// The spare did not start: open the chat's own in its slot.
	}
	return e.openSession(ctx, c)
}

// liveSessionLocked returns the chat's session if it is still alive, and
// stops its idle timer; a session that died while idle is dropped and its
// slot freed.
func (e *Engine) liveSessionLocked(c *chat) agent.Session {
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	if c.sess == nil {
		return nil
	}
	select {
	case <-c.sess.Done(): // died while idle: its process is gone
		dead := c.sess
		e.dropSessionLocked(c)
		delete(e.closing, dead)
		e.releaseSlotLocked()
		return nil
	default:
		return c.sess
	}
}

// reservation is how a chat gets its slot: a spare's, a free one, one
// an idle chat's session gives up (evict), or a place in the queue (wait).
type reservation struct {
	spare *spare
	evict agent.Session
	wait  *waiter
	quiet bool // waiting only for a spare to give its slot up
	pos   int  // place in the queue
}

// reserveSlotLocked finds the chat a slot, in order of preference.
func (e *Engine) reserveSlotLocked(c *chat) reservation {
	var r reservation
	r.spare = e.claimSpareLocked(c)
	if r.spare != nil {
		// The spare's slot is the chat's now; another spare starts
		// if a slot is free.
		e.refillLocked()
	} else if e.live < e.maxSlotsLocked() {
		e.live++
	} else if e.retireSpareLocked() {
		// A spare that cannot serve this chat gives its slot up at once.
		r.wait = &waiter{chat: c, ready: make(chan struct{})}
		e.waiters = append(e.waiters, r.wait)
		r.quiet = true
	} else if victim := e.idleVictimLocked(c); victim != nil {
		// The victim's slot passes to this chat once its process has
		// exited (closed by the caller, before this chat's starts).
		r.evict = victim.sess
		e.dropSessionLocked(victim)
		delete(e.closing, r.evict)
	} else {
		r.wait = &waiter{chat: c, ready: make(chan struct{})}
		e.waiters = append(e.waiters, r.wait)
	}
	r.pos = len(e.waiters)
	return r
}

// waitForSlot waits in the queue until a slot is handed to the chat, or
// ctx ends (then the place, or a slot handed over just then, is given up).
func (e *Engine) waitForSlot(ctx context.Context, c *chat, r reservation) error {
	if !r.quiet {
		e.say(ctx, c.id, e.queueMessage(r.pos))
	}
	select {
	case <-r.wait.ready: // the slot was handed to us
		return nil
	case <-ctx.Done():
		e.mu.Lock()
		defer e.mu.Unlock()
		if i := indexWaiter(e.waiters, r.wait); i >= 0 {
			e.waiters = append(e.waiters[:i], e.waiters[i+1:]...)
		} else { // handed over just now: give it back
			e.releaseSlotLocked()
		}
		return ctx.Err()
	}
}

// openSession opens the chat's session in the slot it holds, in its
// worktree; a session that cannot be resumed is started afresh.
func (e *Engine) openSession(ctx context.Context, c *chat) (agent.Session, error) {
	if err := e.enterWorktree(ctx, c); err != nil {
		e.mu.Lock()
		e.releaseSlotLocked()
		e.mu.Unlock()
		return nil, err
	}
	e.mu.Lock()
	opts := agent.SessionOptions{ChatID: c.id, ResumeID: c.agentID, Mode: c.mode, WorkDir: c.workDir, Model: e.opts.model}
	var bind func(string)
	opts.MCPServers, bind = e.sessionTools()
	bind(c.id)
	opts.Notice = func(n agent.Notice) { e.agentNotice(c.id, n) }
	e.mu.Unlock()
	s, err := e.agent.Open(ctx, opts)
	if err != nil && opts.ResumeID != "" && !errors.Is(err, agent.ErrAgentNotFound) && ctx.Err() == nil {
		e.log.Warn("resuming agent session failed; starting a new one", "chat", c.id, "session", opts.ResumeID, "err", err)
		e.say(ctx, c.id, "Could not resume the previous agent session ("+err.Error()+"); starting a new one.")
		opts.ResumeID = ""
		s, err = e.agent.Open(ctx, opts)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.releaseSlotLocked()
		return nil, err
	}
	c.sess = s
	if e.prewarmFailed {
		e.prewarmFailed = false // the agent starts again: so may spares
		e.refillLocked()
	}
	e.reportSessionsLocked()
	return s, nil
}

func indexWaiter(ws []*waiter, w *waiter) int {
	for i, x := range ws {
		if x == w {
			return i
		}
	}
	return -1
}

// idleVictimLocked picks another chat's live but idle session to close so
// its slot can be reused: the least recently active one.
func (e *Engine) idleVictimLocked(except *chat) *chat {
	var victim *chat
	for _, c := range e.chats {
		if c == except || c.sess == nil || c.busy {
			continue
		}
		if victim == nil || c.active.Before(victim.active) {
			victim = c
		}
	}
	return victim
}

// dropSessionLocked forgets a chat's live session; the caller closes it
// with closeSession (without the lock), which frees its slot once the
// process has exited: one still exiting counts against the limit.
func (e *Engine) dropSessionLocked(c *chat) {
	if c.sess == nil {
		return
	}
	if id := c.sess.ID(); id != "" && c.agentID == "" {
		c.agentID = id
	}
	e.closing[c.sess] = struct{}{}
	c.sess = nil
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
}

// releaseSlotLocked hands a freed slot to the first waiting chat, or
// returns it to the pool.
func (e *Engine) releaseSlotLocked() {
	if len(e.waiters) > 0 {
		w := e.waiters[0]
		e.waiters = e.waiters[1:]
		close(w.ready)
		return
	}
	e.live--
	e.refillLocked()
}

func (e *Engine) reportSessionsLocked() {
	if e.metrics != nil {
		e.metrics.SessionsActive(e.live)
	}
}

// closeSession closes a session and, when it was dropped, frees its slot
// (once; closing it again does nothing more).
func (e *Engine) closeSession(s agent.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.closeTimeout)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		e.log.Warn("closing agent session", "err", err)
	}
	e.mu.Lock()
	if _, ok := e.closing[s]; ok {
		delete(e.closing, s)
		e.releaseSlotLocked()
		e.reportSessionsLocked()
		e.retryRoomLocked()
	}
	e.mu.Unlock()
}

// SessionsActive is how many agent sessions hold a slot.
func (e *Engine) SessionsActive() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.live
}
