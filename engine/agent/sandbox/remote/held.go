package remote

import (
	"errors"
	"io"
	"sync"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// keepSent is how many bytes a runner keeps of output it already sent,
// for the server to read again after a connection broke with them in
// flight: more than a stream's window (streamWindow), which bounds them.
const keepSent = 2 * streamWindow

// held is an agent process on a runner. It outlives the connection that
// started it, and the server too: its output is held (up to MaxHeld
// unsent bytes, then its stdout is not read) until a server attaches and
// reads it. Once a server acknowledged output (ctlAck) it is "acking":
// everything after the last ack is kept, so that a server started anew
// can adopt it from there, and MaxHeld bounds what waits unacknowledged.
type held struct {
	id, chat string
	proc     sandbox.Process

	mu   sync.Mutex
	cond *sync.Cond
	out  []byte // stdout bytes [base, base+len(out))
	base int64
	sent int64 // how far the current sender got
	eof  bool  // the agent's stdout ended
	gen  int   // which attach is current; an older sender stops
	err  io.Writer
	cur  io.Closer // the current attach's io stream

	acked  int64 // stdout bytes the server acknowledged (ctlAck)
	acking bool  // a server acknowledged output at least once
	// letGo is the attach a server let go of (ctlDetach): the end of
	// its stream does not close the agent's stdin.
	letGo int

	inMu   sync.Mutex // one writer of the agent's stdin at a time
	inHave int64      // stdin bytes given to the agent
	inGen  int
	inDone bool // the server closed stdin

	exited  chan struct{}
	exitErr error
	ending  bool // the server asked to end it (mu): it no longer counts
}

func newHeld(id, chat string, p sandbox.Process) *held {
	h := &held{id: id, chat: chat, proc: p, exited: make(chan struct{})}
	h.cond = sync.NewCond(&h.mu)
	go h.readStdout()
	go h.readStderr()
	go func() {
		h.exitErr = p.Wait()
		close(h.exited)
	}()
	return h
}

// readStdout holds the agent's stdout, pausing while MaxHeld bytes wait
// unsent: the agent then blocks on its own writes, and nothing is lost.
func (h *held) readStdout() {
	buf := make([]byte, 32<<10)
	for {
		h.mu.Lock()
		for h.fullLocked() {
			h.cond.Wait()
		}
		h.mu.Unlock()
		n, err := h.proc.Stdout().Read(buf)
		h.mu.Lock()
		h.out = append(h.out, buf[:n]...)
		if err != nil {
			h.eof = true
		}
		h.cond.Broadcast()
		h.mu.Unlock()
		if err != nil {
			h.proc.Stdout().Close()
			return
		}
	}
}

// fullLocked says whether the agent's stdout waits: MaxHeld bytes wait
// unsent, or, once the server acknowledges output, unacknowledged.
func (h *held) fullLocked() bool {
	end := h.base + int64(len(h.out))
	if h.acking {
		return end-h.acked >= MaxHeld
	}
	return end-h.sent >= MaxHeld
}

// trimLocked drops the held output nobody may ask for again: more than
// keepSent behind what was sent, and for an acking process acknowledged
// too. Re-slice, not copy: the dropped front is freed when append next
// moves the buffer (so at most twice its size).
func (h *held) trimLocked() {
	upto := h.sent - keepSent
	if h.acking {
		upto = min(upto, h.acked)
	}
	if drop := upto - h.base; drop > 0 {
		h.out = h.out[drop:]
		h.base += drop
	}
}

// ack records that the server handled the stdout bytes before off.
func (h *held) ack(off int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.acking = true
	off = min(off, h.base+int64(len(h.out)))
	if off > h.acked {
		h.acked = off
		h.trimLocked()
		h.cond.Broadcast()
	}
}

// detach ends the current attach because the server let go of the
// process: its stdout sender stops, its stream and stderr stream are
// closed on this side, and the end of what the server wrote does not
// close the agent's stdin (stdin bytes still in flight are delivered).
func (h *held) detach(gen int) {
	h.mu.Lock()
	if gen != 0 && gen != h.gen {
		h.mu.Unlock()
		return // a newer attach took over: it is not let go of
	}
	h.letGo = h.gen
	h.gen++ // the sender stops
	cur, errW := h.cur, h.err
	h.cur, h.err = nil, nil
	h.cond.Broadcast()
	h.mu.Unlock()
	if cur != nil {
		cur.Close()
	}
	if c, ok := errW.(io.Closer); ok {
		c.Close()
	}
}

// readStderr forwards the agent's stderr to the attached server; while
// none is, it is dropped (it is for diagnostics only).
func (h *held) readStderr() {
	buf := make([]byte, 8<<10)
	for {
		n, err := h.proc.Stderr().Read(buf)
		h.mu.Lock()
		w := h.err
		h.mu.Unlock()
		if w != nil && n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				h.setStderr(nil, w)
			}
		}
		if err != nil {
			h.proc.Stderr().Close()
			if c, ok := w.(io.Closer); ok {
				c.Close()
			}
			return
		}
	}
}

// setStderr makes w the stderr stream, if old is still the current one.
func (h *held) setStderr(w, old io.Writer) {
	h.mu.Lock()
	if h.err == old {
		h.err = w
	}
	h.mu.Unlock()
}

// attach makes the next io stream current: stdout from byte from on, and
// what the server writes goes to the agent's stdin. It returns how many
// stdin bytes the agent has had and the function that starts the
// stream's traffic (after the answer is written), or an error when from
// was dropped.
func (h *held) attach(from int64) (int64, int, func(io.ReadWriteCloser), error) {
	h.mu.Lock()
	if from < h.base || from > h.base+int64(len(h.out)) {
		h.mu.Unlock()
		return 0, 0, nil, errors.New("the output from that point is no longer held")
	}
	h.gen++
	gen := h.gen
	h.sent = from
	h.cond.Broadcast()
	h.mu.Unlock()
	h.inMu.Lock()
	h.inGen = gen // the same attach on both sides: detach names it
	have := h.inHave
	h.inMu.Unlock()
	return have, gen, func(st io.ReadWriteCloser) {
		h.mu.Lock()
		if h.gen == gen {
			h.cur = st
		}
		h.mu.Unlock()
		go h.send(gen, st, from)
		go h.receive(gen, st)
	}, nil
}

// send writes stdout to st from pos on, until the agent's stdout ends (then
// it closes st's write side) or another attach takes over.
func (h *held) send(gen int, st io.WriteCloser, pos int64) {
	for {
		h.mu.Lock()
		for h.gen == gen && pos >= h.base+int64(len(h.out)) && !h.eof {
			h.cond.Wait()
		}
		if h.gen != gen {
			h.mu.Unlock()
			return
		}
		end := h.base + int64(len(h.out))
		if pos >= end {
			h.mu.Unlock()
			st.Close()
			return
		}
		chunk := append([]byte(nil), h.out[pos-h.base:min(end, pos+128<<10)-h.base]...)
		h.mu.Unlock()
		n, err := st.Write(chunk)
		pos += int64(n)
		h.mu.Lock()
		if h.gen == gen {
			h.sent = pos
			h.trimLocked()
			h.cond.Broadcast()
		}
		h.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// receive copies st to the agent's stdin. The server closing its side
// closes the agent's stdin; a broken connection leaves it open for the
// next attach.
func (h *held) receive(gen int, st io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := st.Read(buf)
		h.inMu.Lock()
		if h.inGen != gen || h.inDone {
			h.inMu.Unlock()
			return
		}
		if n > 0 {
			if _, werr := h.proc.Stdin().Write(buf[:n]); werr != nil {
				h.inMu.Unlock()
				return
			}
			h.inHave += int64(n)
		}
		if finished(st, err) && !h.wasLetGo(gen) {
			h.inDone = true
			h.proc.Stdin().Close()
		}
		h.inMu.Unlock()
		if err != nil {
			return
		}
	}
}

// wasLetGo says whether the server let go of attach gen (ctlDetach).
func (h *held) wasLetGo(gen int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.letGo == gen && gen > 0
}

// info describes the process for a hello.
func (h *held) info() procInfo {
	h.mu.Lock()
	// Resumable only when the output after the ack is all here: a first
	// ack that came after more than keepSent was sent and dropped is not.
	pi := procInfo{ID: h.id, Chat: h.chat, PID: h.proc.ID(), Acking: h.acking && h.acked >= h.base, Acked: h.acked}
	h.mu.Unlock()
	select {
	case <-h.exited:
		pi.Exited = true
		if h.exitErr != nil {
			pi.Err = h.exitErr.Error()
		}
	default:
	}
	return pi
}
