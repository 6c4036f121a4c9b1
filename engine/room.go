package engine

import (
	"context"
	"errors"
)

// A chat's agent may find no room although the engine has a free slot:
// the chat stays on its runner (its session files are there), and that
// runner is full or away (agent.ErrNoRoom). Its prompt is not lost: the
// chat is told once, the prompt goes back to the head of its queue, and
// the queue is tried again when an agent session ends somewhere (a slot
// frees) or a runner connects (SlotsChanged). Failed tries trigger
// nothing, so two waiting chats cannot wake each other in a loop.

// waitForRoom keeps q at the head of the chat's queue until there is room,
// telling the chat why (once per wait).
func (e *Engine) waitForRoom(ctx context.Context, c *chat, q queued, why error) {
	e.mu.Lock()
	c.queue = append([]queued{q}, c.queue...)
	first := !c.roomWait
	c.roomWait = true
	e.mu.Unlock()
	e.log.Info("no room for the chat's agent; its prompt waits", "chat", c.id, "why", why)
	var away agentAway
	switch {
	case !first:
	case errors.As(why, &away):
		e.say(ctx, c.id, string(away))
	default:
		e.say(ctx, c.id, "Waiting for room to start the agent: "+why.Error()+". Your message is kept and sent as soon as there is room (/stop drops it).")
	}
}

// stopForRoom ends the chat's worker when its agent found no room: the
// queue waits for retryRoomLocked (or the next prompt) to try again.
func (e *Engine) stopForRoom(c *chat) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.roomWait {
		c.busy = false
	}
	return c.roomWait
}

// roomFound ends the chat's wait for room, if any: its agent started, or
// failed for another reason (said as such).
func (e *Engine) roomFound(c *chat) {
	e.mu.Lock()
	c.roomWait = false
	e.mu.Unlock()
}

// retryRoomLocked starts the worker of each chat waiting for room, to try
// again. Called with e.mu held, when room may have come.
func (e *Engine) retryRoomLocked() {
	for _, c := range e.chats {
		if c.roomWait && !c.busy && len(c.queue) > 0 && e.agentCtx.Err() == nil {
			c.busy = true
			e.wg.Add(1)
			go e.worker(c)
		}
	}
}
