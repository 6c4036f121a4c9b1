package remote

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// proc is an agent process on a runner, as the server sees it: a
// sandbox.Process whose streams survive a broken connection for the grace
// period (they wait, then carry on where they were), and a
// sandbox.Resumable that a later server may adopt.
type proc struct {
	hub    *Hub
	id     string
	chat   string
	runner string
	pid    string

	outR, errR *io.PipeReader
	outW, errW *io.PipeWriter

	mu       sync.Mutex
	conn     *runnerConn   // nil while detached
	io       *yamux.Stream // the current io stream
	attached chan struct{} // closed (and replaced) at each attach
	outOff   int64         // stdout offset read up to (from outStart)
	outStart int64         // the stdout offset this proc started from: 0, or where it was adopted
	exited   chan struct{}
	exiting  bool // exit was called (mu)
	exitErr  error

	acked    int64       // stdout offset acknowledged (Ack)
	ackSent  int64       // the offset the runner was told
	ackTimer *time.Timer // armed by the first ack not sent yet
	gone     chan struct{}
	detached bool // Detach was called (mu)
	gen      int  // the runner's name for the current io stream (openResp.Gen)

	inMu     sync.Mutex // one stdin write (or resend) at a time
	inHist   []byte     // the last stdin bytes written, [inBase, inOff)
	inBase   int64
	inOff    int64
	inClosed bool
}

func newProc(h *Hub, id, chat, runner string) *proc {
	p := &proc{hub: h, id: id, chat: chat, runner: runner, attached: make(chan struct{}), exited: make(chan struct{}),
		gone: make(chan struct{})}
	p.outR, p.outW = io.Pipe()
	p.errR, p.errW = io.Pipe()
	return p
}

// run starts carrying the process's streams once it has started. stderr
// is not resumed after a broken connection: it ends there (it is for
// diagnostics only).
func (p *proc) run(rc *runnerConn, resp openResp, st, errSt *yamux.Stream) {
	p.mu.Lock()
	p.pid, p.conn, p.io, p.gen = resp.PID, rc, st, resp.Gen
	p.mu.Unlock()
	go p.pump()
	go func() {
		if errSt != nil {
			_, _ = io.Copy(p.errW, errSt)
			errSt.Close()
		}
		p.errW.Close()
	}()
}

// pump copies the io stream to the stdout pipe, across attaches, until the
// agent's stdout ends or the process is given up or let go of.
func (p *proc) pump() {
	buf := make([]byte, 128<<10)
	for {
		p.mu.Lock()
		st, attached := p.io, p.attached
		p.mu.Unlock()
		if st != nil && !p.carry(st, buf) {
			return
		}
		select {
		case <-attached:
		case <-p.gone:
			return
		case <-p.exited:
			p.outW.CloseWithError(p.exitErr)
			return
		}
	}
}

// carry copies st to the stdout pipe while it is the current stream; it
// reports whether the pump goes on to the next attach.
func (p *proc) carry(st *yamux.Stream, buf []byte) bool {
	for {
		n, err := st.Read(buf)
		// Only bytes of the current stream count: a re-attach has
		// asked for everything after outOff again.
		p.mu.Lock()
		current := p.io == st && !p.detached
		if current {
			p.outOff += int64(n)
		}
		p.mu.Unlock()
		if current && n > 0 {
			if _, werr := p.outW.Write(buf[:n]); werr != nil {
				if p.letGoOf(st) {
					return false
				}
				st.Close()
				return false // the reader closed stdout
			}
		}
		if current && finished(st, err) {
			p.outW.Close()
			return false
		}
		if current && err == nil {
			continue
		}
		if p.letGoOf(st) {
			return false
		}
		p.mu.Lock()
		if p.io == st {
			p.io = nil
		}
		p.mu.Unlock()
		if !current {
			st.Close()
		}
		return true
	}
}

// letGoOf, once the process was let go of (Detach), reads st to its end
// and only then closes it: the runner closes its side first, after it
// stopped taking the stream's end as the end of the agent's stdin.
func (p *proc) letGoOf(st *yamux.Stream) bool {
	p.mu.Lock()
	detached := p.detached
	p.mu.Unlock()
	if detached {
		go func() {
			_, _ = io.Copy(io.Discard, st)
			st.Close()
		}()
	}
	return detached
}

// detach notes that rc's connection ended.
func (p *proc) detach(rc *runnerConn) {
	p.mu.Lock()
	if p.conn == rc {
		p.conn = nil
	}
	p.mu.Unlock()
}

// reattach carries the process on over a new connection: a new io stream
// from the stdout bytes already read, and stdin sent again from what the
// agent had.
func (p *proc) reattach(rc *runnerConn) {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	p.mu.Lock()
	old := p.io
	p.io = nil // what it still delivers is asked for again
	from := p.outOff
	p.mu.Unlock()
	if old != nil {
		old.Close()
	}
	st, resp, err := rc.open(openReq{Op: opAttach, ID: p.id, StdoutFrom: from}, 30*time.Second)
	if err != nil {
		p.exit(fmt.Errorf("re-attaching to the agent on runner %s: %w", p.runner, err))
		return
	}
	if resp.StdinHave < p.inBase || resp.StdinHave > p.inOff {
		st.Close()
		p.exit(fmt.Errorf("runner %s: its agent's input cannot be resumed", p.runner))
		return
	}
	if _, err := st.Write(p.inHist[resp.StdinHave-p.inBase:]); err != nil {
		st.Close()
		return // the new connection broke too; the next attach tries again
	}
	if p.inClosed {
		st.Close()
	}
	p.mu.Lock()
	detached := p.detached
	if !detached {
		p.conn, p.io, p.gen = rc, st, resp.Gen
		close(p.attached)
		p.attached = make(chan struct{})
	}
	p.mu.Unlock()
	if detached { // let go of while it re-attached: this stream too
		_ = rc.send(ctlMsg{Op: ctlDetach, ID: p.id, Gen: resp.Gen})
		p.letGoOf(st)
		return
	}
	p.flushAck() // acks made while away
	p.hub.log.Info("agent re-attached", "runner", p.runner, "pid", p.pid, "chat", p.chat, "stdout_from", from, "stdin_resent", p.inOff-resp.StdinHave)
}

// exit records how the process ended (the first report wins).
func (p *proc) exit(err error) {
	p.mu.Lock()
	if p.exiting || p.detached {
		p.mu.Unlock()
		return
	}
	p.exiting = true
	p.exitErr = err
	p.mu.Unlock()
	// Off the runner's count before Wait returns. The pump ends stdout:
	// at its end, or now when no stream carries it.
	p.hub.forget(p)
	close(p.exited)
}

// Write implements the agent's stdin. Bytes are kept until the runner
// has them for sure (keepSent), so that a re-attach can send them again;
// while detached, Write waits for the re-attach or the end.
func (p *proc) Write(b []byte) (int, error) {
	if p.isDetached() {
		return 0, sandbox.ErrDetached
	}
	p.inMu.Lock()
	if p.inClosed {
		p.inMu.Unlock()
		return 0, io.ErrClosedPipe
	}
	p.inHist = append(p.inHist, b...)
	p.inOff += int64(len(b))
	if drop := int64(len(p.inHist)) - keepSent; drop > keepSent { // in big steps
		p.inHist = append([]byte(nil), p.inHist[drop:]...)
		p.inBase += drop
	}
	p.mu.Lock()
	st, attached := p.io, p.attached
	p.mu.Unlock()
	var err error = errDetached
	if st != nil {
		_, err = st.Write(b)
	}
	p.inMu.Unlock()
	if err == nil {
		return len(b), nil
	}
	// The bytes are in the history: the re-attach sends them.
	select {
	case <-attached:
		return len(b), nil
	case <-p.exited:
		return 0, p.exitErr
	case <-p.gone:
		return 0, sandbox.ErrDetached
	}
}

var errDetached = errors.New("detached")

// Close closes the agent's stdin; once let go of (Detach), it leaves the
// agent's stdin open for the next server.
func (p *proc) Close() error {
	if p.isDetached() {
		return nil
	}
	p.inMu.Lock()
	defer p.inMu.Unlock()
	p.inClosed = true
	p.mu.Lock()
	st := p.io
	if p.detached {
		st = nil
	}
	p.mu.Unlock()
	if st != nil {
		return st.Close()
	}
	return nil
}

// pipeOut is the read side of a pipe: closing it stops the copy into it.
type pipeOut struct{ *io.PipeReader }

// Stdin, Stdout, Stderr, Wait, Signal, End and ID implement
// sandbox.Process.
func (p *proc) Stdin() io.WriteCloser { return p }
func (p *proc) Stdout() io.ReadCloser { return pipeOut{p.outR} }
func (p *proc) Stderr() io.ReadCloser { return pipeOut{p.errR} }

// Wait waits for the runner to report the exit, or for the runner to be
// given up; sandbox.ErrDetached once the process was let go of.
func (p *proc) Wait() error {
	select {
	case <-p.exited:
		return p.exitErr
	case <-p.gone:
		return sandbox.ErrDetached
	}
}

// ID is the runner's name and the agent's pid there.
func (p *proc) ID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runner + "/" + p.pid
}

// Signal asks the runner to signal the agent's process group.
func (p *proc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	rc, detached := p.conn, p.detached
	p.mu.Unlock()
	if detached {
		return sandbox.ErrDetached
	}
	if rc == nil {
		return fmt.Errorf("runner %s is not connected", p.runner)
	}
	return rc.send(ctlMsg{Op: ctlSignal, ID: p.id, Sig: int(sig)})
}

// End asks the runner to end the agent, and waits for it (at most twice
// grace, or the grace period of a runner that went away). A process let
// go of (Detach) is not ended: it belongs to the next server.
func (p *proc) End(grace time.Duration) {
	p.mu.Lock()
	rc, detached := p.conn, p.detached
	p.mu.Unlock()
	if detached {
		return
	}
	if rc != nil {
		_ = rc.send(ctlMsg{Op: ctlEnd, ID: p.id, GraceMS: grace.Milliseconds()})
	}
	select {
	case <-p.exited:
	case <-time.After(2*grace + time.Second):
	}
}
