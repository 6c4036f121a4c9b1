package remote

import (
	"fmt"
	"slices"
	"time"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// orphan is an agent process a runner holds that an earlier server let go
// of (it restarted, or called Detach): it still runs, counts in its
// runner's load and keeps its chat on that runner, until it is adopted
// (Hub.Adopt) or the grace period after the runner's connection passes.
type orphan struct {
	id, chat, runner, pid string
	acked                 int64 // the stdout offset to read on from
	timer                 *time.Timer
}

// sortUnknown decides about the live processes of a hello that this
// server does not run. One whose output a server acknowledged and that
// has a chat becomes an orphan, waiting to be adopted; the others are
// ended, as is an orphan whose chat already has an agent here (the first
// one known for a chat wins), whose chat this runner may not hold (pinned
// elsewhere, labels it lacks), or past the runner's MaxAgents. It
// returns the processes to end and the orphans' chats.
func (h *Hub) sortUnknown(hl hello) (end, adopt []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	kept := 0
	for _, o := range h.orphans {
		if o.runner == hl.Name {
			kept++
		}
	}
	for _, pi := range hl.Procs {
		if p := h.procs[pi.ID]; pi.Exited || p != nil && p.runner == hl.Name {
			continue
		}
		if o := h.orphans[pi.ID]; o != nil && o.runner == hl.Name {
			adopt = append(adopt, o.chat) // known since it was let go of
			continue
		}
		if h.givenUp[pi.ID] {
			delete(h.givenUp, pi.ID) // the runner is told to end it now
			end = append(end, pi.ID)
			continue
		}
		if !pi.Acking || pi.Chat == "" || h.chatTakenLocked(pi.Chat) || !h.mayHoldLocked(hl, pi.Chat) || kept >= hl.MaxAgents {
			end = append(end, pi.ID)
			continue
		}
		kept++
		h.addOrphanLocked(&orphan{id: pi.ID, chat: pi.Chat, runner: hl.Name, pid: pi.PID, acked: pi.Acked})
		adopt = append(adopt, pi.Chat)
	}
	slices.Sort(adopt)
	return end, slices.Compact(adopt)
}

// mayHoldLocked says whether hl's runner may hold chat's agent: a
// runner's word alone does not move a chat off the runner it is pinned
// to, nor onto one without the labels it asks for.
func (h *Hub) mayHoldLocked(hl hello, chat string) bool {
	if r, ok := h.pinned[chat]; ok && r != hl.Name {
		return false
	}
	return hasAll(hl.Labels, h.labels[chat])
}

// chatTakenLocked says whether a chat has an agent here or an orphan.
func (h *Hub) chatTakenLocked(chat string) bool {
	for _, p := range h.procs {
		if p.chat == chat {
			return true
		}
	}
	return h.orphanLocked(chat) != nil
}

// orphanLocked is the chat's orphan, or nil.
func (h *Hub) orphanLocked(chat string) *orphan {
	for _, o := range h.orphans {
		if o.chat == chat {
			return o
		}
	}
	return nil
}

// addOrphanLocked keeps o for the grace period; its chat stays on its
// runner.
func (h *Hub) addOrphanLocked(o *orphan) {
	h.orphans[o.id] = o
	h.pinned[o.chat] = o.runner
	o.timer = time.AfterFunc(h.grace, func() { h.dropOrphan(o, "not adopted within the grace period") })
}

// dropOrphan forgets o and ends its process, if o is still an orphan.
func (h *Hub) dropOrphan(o *orphan, why string) {
	h.mu.Lock()
	if h.orphans[o.id] != o {
		h.mu.Unlock()
		return
	}
	delete(h.orphans, o.id)
	o.timer.Stop()
	var rc *runnerConn
	if rs := h.runners[o.runner]; rs != nil {
		rc = rs.conn
	}
	h.mu.Unlock()
	h.log.Warn("ending an agent an earlier server let go of: "+why, "runner", o.runner, "pid", o.pid, "chat", o.chat)
	if rc != nil {
		_ = rc.send(ctlMsg{Op: ctlEnd, ID: o.id, GraceMS: 3000})
	}
}

// orphanExited forgets the orphan with id on runner: it exited before it
// was adopted.
func (h *Hub) orphanExited(runner, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if o := h.orphans[id]; o != nil && o.runner == runner {
		o.timer.Stop()
		delete(h.orphans, id)
		h.log.Info("an agent an earlier server let go of exited before it was adopted", "runner", runner, "pid", o.pid, "chat", o.chat)
	}
}

// letGo notes that p was let go of (Detach): it no longer counts as one of
// this server's agents, but as an orphan that may be adopted again.
func (h *Hub) letGo(p *proc, pid string, acked int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.procs[p.id] == p {
		delete(h.procs, p.id)
	}
	if p.chat != "" && h.runners[p.runner] != nil && !h.chatTakenLocked(p.chat) {
		h.addOrphanLocked(&orphan{id: p.id, chat: p.chat, runner: p.runner, pid: pid, acked: acked})
	}
}

// Adopt implements sandbox.Adopter: the process of chat that an earlier
// server let go of becomes this server's, its stdout read on from the
// last ack, its stdin written on from what the agent has. The error wraps
// sandbox.ErrNotHeld when no runner holds one for chat.
func (h *Hub) Adopt(chat string) (sandbox.Process, error) {
	h.mu.Lock()
	o := h.orphanLocked(chat)
	var rc *runnerConn
	if o != nil && h.runners[o.runner] != nil {
		rc = h.runners[o.runner].conn
	}
	if o == nil || rc == nil {
		h.mu.Unlock()
		if o != nil {
			return nil, fmt.Errorf("%w: chat %s's agent is on runner %s, which is not connected", sandbox.ErrNotHeld, chat, o.runner)
		}
		return nil, fmt.Errorf("%w: chat %s (no connected runner holds an agent for it that a server let go of)", sandbox.ErrNotHeld, chat)
	}
	delete(h.orphans, o.id)
	o.timer.Stop()
	// Known before it is attached: its exit may be reported at once.
	p := newProc(h, o.id, chat, o.runner)
	p.outStart, p.outOff, p.acked, p.ackSent = o.acked, o.acked, o.acked, o.acked
	h.procs[o.id] = p
	h.pinned[chat] = o.runner
	h.mu.Unlock()
	st, resp, err := rc.open(openReq{Op: opAttach, ID: o.id, StdoutFrom: o.acked}, 30*time.Second)
	if err != nil {
		h.forget(p)
		_ = rc.send(ctlMsg{Op: ctlEnd, ID: o.id, GraceMS: 3000})
		h.log.Warn("adopting an agent failed; ending it", "runner", o.runner, "pid", o.pid, "chat", chat, "err", err)
		return nil, fmt.Errorf("adopting chat %s's agent on runner %s: %w", chat, o.runner, err)
	}
	p.inMu.Lock()
	p.inBase, p.inOff = resp.StdinHave, resp.StdinHave
	p.inMu.Unlock()
	errSt, _, _ := rc.open(openReq{Op: opStderr, ID: o.id}, 30*time.Second)
	p.run(rc, resp, st, errSt)
	h.log.Info("agent adopted", "runner", o.runner, "pid", resp.PID, "chat", chat, "stdout_from", o.acked, "stdin_from", resp.StdinHave)
	return p, nil
}

// maxGivenUp bounds the processes of lost runners remembered: past it the
// oldest knowledge goes (a runner away that long comes back with few).
const maxGivenUp = 4096

// giveUpLocked remembers a process of a lost runner, so that it is ended,
// not adopted, when the runner comes back.
func (h *Hub) giveUpLocked(id string) {
	if len(h.givenUp) >= maxGivenUp {
		clear(h.givenUp)
	}
	h.givenUp[id] = true
}
