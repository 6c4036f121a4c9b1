package engine

import (
	"context"
	"errors"

	"github.com/leashd/leashd/engine/agent"
)

// spare is a session opened ahead of its chat. It holds a slot from the
// moment it is created until it is claimed (the slot passes to the chat)
// or retired (the slot is freed once its process has exited).
type spare struct {
	ready  chan struct{} // closed once the open has finished
	sess   agent.Session // set before ready is closed; nil when the open failed
	err    error
	cancel context.CancelFunc
	// Guarded by Engine.mu:
	chatID  string              // the chat that claimed it; its notices go there
	bind    func(chatID string) // ties its send_file credential to the chat that claims it
	claimed bool
	retired bool // given up for a slot: close it, free the slot
}

// prewarmOn reports whether spares are kept.
func (e *Engine) prewarmOn() bool {
	if e.opts.prewarm <= 0 || e.opts.worktrees != nil {
		return false
	}
	p, ok := e.agent.(agent.Prewarmer)
	return ok && p.Prewarm()
}

// refillLocked starts spares while there are fewer than configured, a slot
// is free and no chat waits for one.
func (e *Engine) refillLocked() {
	if !e.prewarmOn() || e.prewarmFailed || e.agentCtx.Err() != nil || !e.running {
		return
	}
	for len(e.spares) < e.opts.prewarm && e.live < e.maxSlotsLocked() && len(e.waiters) == 0 {
		e.live++
		ctx, cancel := context.WithCancel(e.agentCtx)
		sp := &spare{ready: make(chan struct{}), cancel: cancel}
		e.spares = append(e.spares, sp)
		e.reportSessionsLocked()
		e.wg.Add(1)
		go e.warm(ctx, sp)
	}
}

// warm opens a spare's session.
func (e *Engine) warm(ctx context.Context, sp *spare) {
	defer e.wg.Done()
	defer sp.cancel()
	opts := agent.SessionOptions{Mode: e.opts.defaultMode, WorkDir: e.opts.workDir, Model: e.opts.model}
	e.mu.Lock()
	opts.MCPServers, sp.bind = e.sessionTools()
	if sp.claimed {
		sp.bind(sp.chatID)
	}
	e.mu.Unlock()
	opts.Notice = func(n agent.Notice) {
		e.mu.Lock()
		chat := sp.chatID
		e.mu.Unlock()
		if chat != "" {
			e.agentNotice(chat, n)
		}
	}
	s, err := e.agent.Open(ctx, opts)
	e.mu.Lock()
	sp.sess, sp.err = s, err
	close(sp.ready)
	switch {
	case sp.claimed:
		// The chat that claimed it takes it (or, when it failed, opens its
		// own session with the slot).
		e.mu.Unlock()
	case sp.retired:
		e.mu.Unlock()
		e.retire(s)
	case err != nil:
		e.removeSpareLocked(sp)
		if ctx.Err() == nil {
			// Not again until a chat's own session opens: a CLI that
			// cannot start would otherwise be restarted in a loop.
			e.prewarmFailed = true
			e.log.Warn("starting a spare agent session failed; new chats start their own", "err", err)
		}
		e.releaseSlotLocked()
		e.reportSessionsLocked()
		e.mu.Unlock()
	default:
		e.mu.Unlock()
	}
}

// retire closes a spare that gave up its slot; the slot is freed (handed
// to the first waiting chat) once its process has exited.
func (e *Engine) retire(s agent.Session) {
	if s == nil {
		e.mu.Lock()
		e.releaseSlotLocked()
		e.reportSessionsLocked()
		e.mu.Unlock()
		return
	}
	e.mu.Lock()
	e.closing[s] = struct{}{}
	e.mu.Unlock()
	e.closeSession(s)
}

func (e *Engine) removeSpareLocked(sp *spare) {
	for i, x := range e.spares {
		if x == sp {
			e.spares = append(e.spares[:i:i], e.spares[i+1:]...)
			return
		}
	}
}

// claimSpareLocked takes a spare for chat c when c starts a new session
// that a spare can serve (no session to resume, the default mode, the
// working directory): a ready one first, else the one started first. Its
// slot passes to c.
func (e *Engine) claimSpareLocked(c *chat) *spare {
	if len(e.spares) == 0 || c.agentID != "" || c.mode != e.opts.defaultMode || c.workDir != e.opts.workDir {
		return nil
	}
	pick := e.spares[0]
	for _, sp := range e.spares {
		select {
		case <-sp.ready:
			if sp.err == nil {
				pick = sp
			}
		default:
			continue
		}
		break
	}
	e.removeSpareLocked(pick)
	pick.claimed, pick.chatID = true, c.id
	if pick.bind != nil {
		pick.bind(c.id)
	}
	return pick
}

// retireSpareLocked gives up one spare's slot for a chat the spares cannot
// serve (or that finds every slot taken): it reports false when there is
// none. The slot is handed over through the waiters queue once the spare's
// process has exited (or its start was cancelled).
func (e *Engine) retireSpareLocked() bool {
	if len(e.spares) == 0 {
		return false
	}
	// The one started last: the ones started earlier are closer to ready.
	sp := e.spares[len(e.spares)-1]
	e.spares = e.spares[:len(e.spares)-1]
	sp.retired = true
	select {
	case <-sp.ready:
		s := sp.sess
		go e.retire(s)
	default:
		sp.cancel() // warm closes it (or frees the slot) when Open returns
	}
	return true
}

// useSpare waits for a claimed spare's session: nil when its start failed
// or it has died since (the chat then opens its own, in the spare's slot).
func (e *Engine) useSpare(ctx context.Context, sp *spare) (agent.Session, error) {
	select {
	case <-sp.ready:
	case <-ctx.Done():
		// The chat gave up: the spare and its slot are of no more use.
		e.mu.Lock()
		sp.claimed, sp.retired = false, true
		select {
		case <-sp.ready:
			e.mu.Unlock()
			e.retire(sp.sess)
		default:
			sp.cancel()
			e.mu.Unlock()
		}
		return nil, ctx.Err()
	}
	if sp.err != nil {
		if !errors.Is(sp.err, context.Canceled) {
			e.log.Warn("the spare agent session did not start; starting one for the chat", "chat", sp.chatID, "err", sp.err)
		}
		return nil, nil
	}
	select {
	case <-sp.sess.Done():
		e.mu.Lock()
		e.closing[sp.sess] = struct{}{}
		e.live++ // closeSession frees one slot; the chat keeps this one
		e.mu.Unlock()
		e.closeSession(sp.sess)
		return nil, nil
	default:
	}
	return sp.sess, nil
}

// closeSparesLocked takes every spare away at shutdown and returns their
// sessions for the caller to close without the lock.
func (e *Engine) closeSparesLocked() []agent.Session {
	var out []agent.Session
	for _, sp := range e.spares {
		sp.retired = true
		select {
		case <-sp.ready:
			if sp.sess != nil {
				out = append(out, sp.sess)
			}
		default:
			sp.cancel()
		}
	}
	e.spares = nil
	return out
}
