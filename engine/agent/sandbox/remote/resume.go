package remote

import (
	"time"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// ackEvery is how long acks wait to go to the runner in one message: a
// driver acks every line it handled, the runner needs to hear it far less
// often (an ack lost to a crash only means those lines are read again).
const ackEvery = 100 * time.Millisecond

// Ack implements sandbox.Resumable: n stdout bytes read from this proc's
// Stdout were handled. The runner hears the offset within ackEvery (one
// timer for a batch, no goroutine per ack), and keeps the output after it
// for a server that adopts the process later.
func (p *proc) Ack(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	off := min(p.outStart+n, p.outOff)
	if p.detached || off <= p.acked {
		return
	}
	p.acked = off
	if p.ackTimer == nil {
		p.ackTimer = time.AfterFunc(ackEvery, p.flushAck)
	}
}

// flushAck tells the runner the last ack, when it has not heard it yet.
// While the runner is away the ack waits for the re-attach.
func (p *proc) flushAck() {
	p.mu.Lock()
	if p.ackTimer != nil {
		p.ackTimer.Stop()
		p.ackTimer = nil
	}
	rc, off := p.conn, p.acked
	if rc == nil || off <= p.ackSent {
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	if rc.send(ctlMsg{Op: ctlAck, ID: p.id, Off: off}) != nil {
		return
	}
	p.mu.Lock()
	p.ackSent = max(p.ackSent, off)
	p.mu.Unlock()
}

// Detach implements sandbox.Resumable: the last ack goes to the runner,
// which then stops sending the process's output and takes the end of its
// stream as no end of the agent's stdin (ctlDetach). Here Stdout and
// Stderr end with sandbox.ErrDetached, Write fails, Close and End do
// nothing, Wait returns sandbox.ErrDetached, and the process no longer
// counts as this server's: the hub keeps it as an orphan that may be
// adopted again (Hub.Adopt) or is ended after the grace period. The
// connection stays: other agents use it.
func (p *proc) Detach() {
	p.mu.Lock()
	if p.detached || p.exiting {
		p.mu.Unlock()
		return
	}
	if p.ackTimer != nil {
		p.ackTimer.Stop()
		p.ackTimer = nil
	}
	p.detached = true
	rc, off, sent, pid, gen := p.conn, p.acked, p.ackSent, p.pid, p.gen
	p.mu.Unlock()
	if rc != nil {
		if off > sent {
			_ = rc.send(ctlMsg{Op: ctlAck, ID: p.id, Off: off})
		}
		_ = rc.send(ctlMsg{Op: ctlDetach, ID: p.id, Gen: gen})
	}
	close(p.gone)
	p.outW.CloseWithError(sandbox.ErrDetached)
	p.errW.CloseWithError(sandbox.ErrDetached)
	p.hub.letGo(p, pid, off)
	p.hub.log.Info("agent let go of; it keeps running on its runner for the next server", "runner", p.runner, "pid", pid, "chat", p.chat, "acked", off)
}

// isDetached says whether Detach was called.
func (p *proc) isDetached() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.detached
}

// Adopt implements sandbox.Adopter: Hub.Adopt.
func (p *Placer) Adopt(name string) (sandbox.Process, error) { return p.Hub.Adopt(name) }
