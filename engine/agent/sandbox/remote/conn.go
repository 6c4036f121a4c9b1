package remote

import (
	"bufio"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/yamux"
)

// runnerConn is one connection of a runner, on the server.
type runnerConn struct {
	name string
	sess *yamux.Session
	ctl  *yamux.Stream
	br   *bufio.Reader // the control stream's reader

	mu sync.Mutex // one control message written at a time
}

// send writes a control message.
func (c *runnerConn) send(m ctlMsg) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ctl.SetWriteDeadline(time.Now().Add(30 * time.Second))
	return writeMsg(c.ctl, m)
}

// control reads the runner's control messages (exits) until the
// connection ends; anything else drops the connection.
func (c *runnerConn) control(h *Hub) {
	defer c.sess.Close()
	for {
		var m ctlMsg
		if err := readMsg(c.br, &m); err != nil {
			return
		}
		if m.Op != ctlExit {
			h.log.Warn("runner sent an unknown control message; dropping its connection", "runner", c.name, "op", m.Op)
			return
		}
		h.mu.Lock()
		p := h.procs[m.ID]
		h.mu.Unlock()
		if p != nil && p.runner == c.name {
			p.exit(exitError(m.Err))
		} else if p == nil {
			h.orphanExited(c.name, m.ID)
		}
	}
}

// open opens a stream, writes req and reads the runner's answer.
func (c *runnerConn) open(req openReq, timeout time.Duration) (*yamux.Stream, openResp, error) {
	var resp openResp
	st, err := c.sess.OpenStream()
	if err != nil {
		return nil, resp, err
	}
	_ = st.SetDeadline(time.Now().Add(timeout))
	if err := writeMsg(st, req); err != nil {
		st.Close()
		return nil, resp, err
	}
	// Read the answer byte by byte: what follows it on the stream is the
	// agent's stdout, which a buffered reader would swallow.
	if err := readMsg(bufio.NewReaderSize(oneByte{st}, 16), &resp); err != nil {
		st.Close()
		return nil, resp, fmt.Errorf("runner %s: %w", c.name, err)
	}
	_ = st.SetDeadline(time.Time{})
	if resp.Error != "" {
		st.Close()
		return nil, resp, fmt.Errorf("runner %s: %s", c.name, resp.Error)
	}
	return st, resp, nil
}

// oneByte reads at most one byte at a time.
type oneByte struct{ st *yamux.Stream }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.st.Read(p)
}
