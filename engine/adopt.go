package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/leashd/leashd/engine/agent"
)

// An agent on a runner outlives a restart of leashd (issue 27). At
// shutdown its session is let go of (agent.Detacher) before anything
// pending is interrupted, so the agent hears no "denied"; the chat is
// saved as mid-turn. When its runner reports it to the next run, Adopt
// makes it the chat's session again and, when the chat was mid-turn,
// carries that turn on (agent.Continuer): the agent's pending requests,
// asked again by the same process, join the interactions restored from
// the journal (interactions.Request), so a tap given after the restart,
// even before the runner was back, reaches that process.

// Adopt takes over the agent an earlier run of leashd let go of for
// chatID, which its runner still runs (cmd calls it when a runner
// reports one). A chat that has started another agent meanwhile keeps
// that one; the runner ends the unadopted one after its grace period.
func (e *Engine) Adopt(chatID string) {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		select {
		case <-e.restored: // its restored interactions are there to join
		case <-e.agentCtx.Done():
			return
		}
		e.adopt(e.agentCtx, chatID)
	}()
}

func (e *Engine) adopt(ctx context.Context, chatID string) {
	ad, ok := e.agent.(agent.Adopter)
	if !ok || ctx.Err() != nil {
		return
	}
	// The chat comes from a runner's word: only one this leashd ran an
	// agent for is taken, so a runner cannot open a conversation in a
	// chat nobody started.
	if _, known, err := e.store.LoadSession(ctx, chatID); err != nil || !known {
		e.log.Warn("not adopting an agent for a chat this leashd never ran one for", "chat", chatID, "err", err)
		return
	}
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	if c.sess != nil || c.busy {
		e.mu.Unlock()
		e.log.Warn("not adopting an agent for a chat that has moved on", "chat", chatID)
		return
	}
	// The chat's worker role and a slot (the agent runs already, so it
	// takes one even past the limit).
	c.busy = true
	e.wg.Add(1)
	e.live++
	opts := agent.SessionOptions{ChatID: c.id, ResumeID: c.agentID, Mode: c.mode, WorkDir: c.workDir, Model: e.opts.model}
	opts.Notice = func(n agent.Notice) { e.agentNotice(c.id, n) }
	e.mu.Unlock()
	s, err := ad.Adopt(ctx, opts)
	e.mu.Lock()
	c.wasLetGo = false // adopted, or not to be waited for
	if err != nil {
		e.releaseSlotLocked()
		e.mu.Unlock()
		e.log.Warn("adopting the agent a runner kept", "chat", chatID, "err", err)
		go e.worker(c) // what was queued meanwhile
		return
	}
	c.sess = s
	inTurn := c.wasInTurn
	c.wasInTurn = false
	if inTurn {
		c.queue = append([]queued{{adopted: true}}, c.queue...)
	}
	e.reportSessionsLocked()
	e.mu.Unlock()
	e.log.Info("adopted the agent a runner kept through the restart", "chat", chatID, "in_turn", inTurn)
	if inTurn {
		e.say(ctx, chatID, "leashd restarted; your agent kept running and carries on where it was.")
	}
	go e.worker(c)
}

// turnSession is the session for q's turn: for the turn of an adopted
// agent that one only (nil when it has ended), else the chat's session,
// opened when needed.
func (e *Engine) turnSession(ctx context.Context, c *chat, q queued) (agent.Session, error) {
	if !q.adopted {
		if err := e.awaitAdoption(c); err != nil {
			return nil, err
		}
		return e.session(ctx, c)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.liveSessionLocked(c), nil
}

// detachSessions lets go of every session whose agent can outlive this
// run (on a runner), before shutdown interrupts what is pending: such an
// agent must hear nothing more from this run. Closing it then leaves it
// running.
func (e *Engine) detachSessions() {
	e.mu.Lock()
	var chats []*chat
	for _, c := range e.chats {
		if _, ok := c.sess.(agent.Detacher); ok {
			chats = append(chats, c)
		}
	}
	e.mu.Unlock()
	n := 0
	for _, c := range chats {
		e.mu.Lock()
		s := c.sess
		e.mu.Unlock()
		d, ok := s.(agent.Detacher)
		if !ok || !d.Detach() {
			continue
		}
		n++
		e.mu.Lock()
		c.keepInTurn = c.current != nil
		c.letGo = true
		e.mu.Unlock()
		e.save(c)
	}
	if n > 0 {
		e.log.Info("agents on runners let go of; they run on for the next start", "count", n)
	}
}

// agentAway is why a chat's prompt waits after a restart: the last run
// let go of its agent, which its runner may still run and bring back.
// It is an agent.ErrNoRoom: the prompt waits at the head of the queue
// (room.go) and goes to that agent once adopted.
type agentAway string

func (a agentAway) Error() string        { return string(a) }
func (a agentAway) Is(target error) bool { return target == agent.ErrNoRoom }

// awaitAdoption says to wait when the last run let go of the chat's agent
// and its runner may still bring it back (until adoptUntil): starting
// another agent now would end that one and the turn it is in.
func (e *Engine) awaitAdoption(c *chat) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !c.wasLetGo {
		return nil
	}
	left := e.adoptUntil.Sub(e.clock().Now())
	if left <= 0 {
		c.wasLetGo = false
		return nil
	}
	return agentAway(fmt.Sprintf("leashd restarted; your agent kept running on its runner, which has not reconnected yet. Your message is kept and goes to it when it does (to a new agent if it is not back within %s; /stop drops it).", left.Round(time.Second)))
}

// awaitAdoptions starts the time a restarted run waits for the agents the
// last one let go of, and tries the chats that waited when it is over.
func (e *Engine) awaitAdoptions() {
	e.mu.Lock()
	e.adoptUntil = e.clock().Now().Add(e.opts.adoptWithin)
	e.mu.Unlock()
	if e.opts.adoptWithin > 0 {
		e.clock().AfterFunc(e.opts.adoptWithin, func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.retryRoomLocked()
		})
	}
}
