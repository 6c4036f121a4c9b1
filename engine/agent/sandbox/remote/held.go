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
// started it: its output is held (up to MaxHeld unsent bytes, then its
// stdout is not read) until a server attaches and reads it.
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
		for h.base+int64(len(h.out))-h.sent >= MaxHeld {
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
func (h *held) attach(from int64) (int64, func(io.ReadWriteCloser), error) {
	h.mu.Lock()
	if from < h.base || from > h.base+int64(len(h.out)) {
		h.mu.Unlock()
		return 0, nil, errors.New("the output from that point is no longer held")
	}
	h.gen++
	gen := h.gen
	h.sent = from
	h.cond.Broadcast()
	h.mu.Unlock()
	h.inMu.Lock()
	h.inGen++
	inGen, have := h.inGen, h.inHave
	h.inMu.Unlock()
	return have, func(st io.ReadWriteCloser) {
		go h.send(gen, st, from)
		go h.receive(inGen, st)
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
			// Re-slice, not copy: the dropped front is freed when
			// append next moves the buffer (so at most twice its size).
			if drop := pos - keepSent - h.base; drop > 0 {
				h.out = h.out[drop:]
				h.base += drop
			}
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
		if finished(st, err) {
			h.inDone = true
			h.proc.Stdin().Close()
		}
		h.inMu.Unlock()
		if err != nil {
			return
		}
	}
}

// info describes the process for a hello.
func (h *held) info() procInfo {
	pi := procInfo{ID: h.id, Chat: h.chat, PID: h.proc.ID()}
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
