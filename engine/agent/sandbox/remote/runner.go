package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/yamux"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// ConnectPath is where the server takes runners' connections.
const ConnectPath = "/api/runners/connect"

// Runner is `leashd runner`: it dials the server, and starts the agents
// the server asks for with its own Sandbox, holding them across
// reconnects. Set the fields, then call Run.
type Runner struct {
	URL       string // the server's base URL (http(s)://host:port)
	Token     string // one of the server's LEASHD_RUNNER_TOKENS
	Name      string
	Labels    []string
	MaxAgents int
	Sandbox   sandbox.Sandbox
	// Local maps the server's spec to this machine's: its own program,
	// working directory and environment. An error refuses the start.
	Local func(sandbox.Spec) (sandbox.Spec, error)
	// Dir is the working directory the files people send are put in
	// ("": the current one); Local runs the agents there.
	Dir string
	Log *slog.Logger
	// Connected, when set, is called each time the server welcomed us.
	Connected func()

	mu    sync.Mutex
	procs map[string]*held
	ctl   *ctlWriter // the current control stream, nil while away
	// sess is the current connection (SendFile opens its streams on
	// it), maxFile the server's limit on a file it said in its welcome.
	sess    *yamux.Session
	maxFile int64
}

// ctlWriter writes control messages, one at a time.
type ctlWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (c *ctlWriter) send(m ctlMsg) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return writeMsg(c.w, m)
}

// errRefused is a connection the server refused (a wrong token).
var errRefused = errors.New("the server refused this runner")

// Run connects and serves until ctx ends, reconnecting with backoff (1 s
// doubling to 30 s, with jitter so that many runners do not come back at
// once). The agents keep running while it is away. On return it ends
// them.
func (r *Runner) Run(ctx context.Context) error {
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
	r.mu.Lock()
	if r.procs == nil {
		r.procs = map[string]*held{}
	}
	r.mu.Unlock()
	defer r.endAll()
	backoff := time.Second
	for {
		start := time.Now()
		err := r.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(start) > time.Minute {
			backoff = time.Second
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		r.Log.Warn("not connected to the server; trying again", "server", r.URL, "in", wait.Round(time.Millisecond), "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// endAll ends every agent: the runner is stopping.
func (r *Runner) endAll() {
	r.mu.Lock()
	procs := make([]*held, 0, len(r.procs))
	for _, h := range r.procs {
		procs = append(procs, h)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, h := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); h.proc.End(3 * time.Second) }()
	}
	wg.Wait()
}

// session is one connection, from dial to its end.
func (r *Runner) session(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	c, resp, err := websocket.Dial(dctx, wsURL(r.URL)+ConnectPath, &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + r.Token}},
	})
	cancel()
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return fmt.Errorf("%w (HTTP %d): check --token against the server's LEASHD_RUNNER_TOKENS", errRefused, resp.StatusCode)
		}
		return err
	}
	nc := websocket.NetConn(context.WithoutCancel(ctx), c, websocket.MessageBinary)
	sess, err := yamux.Server(nc, muxConfig())
	if err != nil {
		nc.Close()
		return err
	}
	defer sess.Close()
	stop := context.AfterFunc(ctx, func() { sess.Close() })
	defer stop()
	ctl, err := r.hello(sess)
	if err != nil {
		return err
	}
	r.Log.Info("connected to the server", "server", r.URL, "name", r.Name)
	if r.Connected != nil {
		r.Connected()
	}
	go r.control(sess, ctl)
	for {
		st, err := sess.AcceptStream()
		if err != nil {
			r.setCtl(nil)
			return fmt.Errorf("connection ended: %w", err)
		}
		go r.serveStream(st)
	}
}

// hello waits for the control stream, says hello and reads the welcome.
func (r *Runner) hello(sess *yamux.Session) (*yamux.Stream, error) {
	st, err := acceptTimeout(sess, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("waiting for the control stream: %w", err)
	}
	r.mu.Lock()
	h := hello{Version: protocolVersion, Name: r.Name, Labels: r.Labels, MaxAgents: r.MaxAgents}
	for _, p := range r.procs {
		h.Procs = append(h.Procs, p.info())
	}
	r.mu.Unlock()
	_ = st.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(st)
	var w welcome
	if err := writeMsg(st, h); err != nil {
		return nil, err
	}
	if err := readMsg(br, &w); err != nil {
		return nil, fmt.Errorf("reading the welcome: %w", err)
	}
	if w.Error != "" {
		return nil, fmt.Errorf("%w: %s", errRefused, w.Error)
	}
	_ = st.SetDeadline(time.Time{})
	r.endUnknown(w.End)
	r.setCtl(&ctlWriter{w: st})
	r.mu.Lock()
	r.sess, r.maxFile = sess, w.MaxFileBytes
	r.mu.Unlock()
	r.forgetReported(h.Procs)
	return st, nil
}

// endUnknown ends the agents the server does not know, before any new
// start: they no longer count against MaxAgents.
func (r *Runner) endUnknown(ids []string) {
	for _, id := range ids {
		r.mu.Lock()
		h := r.procs[id]
		r.mu.Unlock()
		if h == nil {
			continue
		}
		h.mu.Lock()
		h.ending = true
		h.mu.Unlock()
		r.Log.Info("ending an agent the server does not know (it restarted)", "id", id, "chat", h.chat, "pid", h.proc.ID())
		go h.proc.End(3 * time.Second)
	}
}

// forgetReported drops the exited processes a hello reported: the server
// knows how they ended.
func (r *Runner) forgetReported(ps []procInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range ps {
		if p.Exited {
			delete(r.procs, p.ID)
		}
	}
}

func (r *Runner) setCtl(c *ctlWriter) {
	r.mu.Lock()
	r.ctl = c
	if c == nil {
		r.sess = nil
	}
	r.mu.Unlock()
}

// log is the runner's logger, which Run sets.
func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// control reads the server's control messages: signals, ends, acks and
// detaches.
func (r *Runner) control(sess *yamux.Session, st *yamux.Stream) {
	br := bufio.NewReader(st)
	for {
		var m ctlMsg
		if err := readMsg(br, &m); err != nil {
			sess.Close()
			return
		}
		r.mu.Lock()
		h := r.procs[m.ID]
		r.mu.Unlock()
		if h == nil {
			continue
		}
		switch m.Op {
		case ctlSignal:
			if m.Sig > 0 && m.Sig < 65 {
				_ = h.proc.Signal(syscall.Signal(m.Sig))
			}
		case ctlEnd:
			h.mu.Lock()
			h.ending = true
			h.mu.Unlock()
			go h.proc.End(time.Duration(min(max(m.GraceMS, 0), 60_000)) * time.Millisecond)
		case ctlAck:
			h.ack(m.Off)
		case ctlDetach:
			r.Log.Info("the server let go of an agent; it keeps running for the next server", "id", h.id, "chat", h.chat, "pid", h.proc.ID())
			h.detach(m.Gen)
		}
	}
}

// serveStream answers one stream the server opened.
func (r *Runner) serveStream(st *yamux.Stream) {
	_ = st.SetReadDeadline(time.Now().Add(30 * time.Second))
	var req openReq
	if err := readMsg(bufio.NewReaderSize(oneByte{st}, 16), &req); err != nil {
		st.Close()
		return
	}
	_ = st.SetReadDeadline(time.Time{})
	resp, attach := r.open(req, st)
	if err := writeMsg(st, resp); err != nil || resp.Error != "" {
		st.Close()
		return
	}
	if attach != nil {
		attach()
	}
}

// open carries out a stream's request; attach, when not nil, starts the
// stream's traffic once the answer is written.
func (r *Runner) open(req openReq, st *yamux.Stream) (openResp, func()) {
	r.mu.Lock()
	h := r.procs[req.ID]
	r.mu.Unlock()
	switch req.Op {
	case opStart:
		if h != nil || req.Spec == nil || req.ID == "" || len(req.ID) > maxWord {
			return openResp{Error: "bad start request"}, nil
		}
		h, err := r.start(req.ID, *req.Spec)
		if err != nil {
			return openResp{Error: err.Error()}, nil
		}
		_, gen, run, _ := h.attach(0)
		return openResp{PID: h.proc.ID(), Gen: gen}, func() { run(st) }
	case opAttach:
		if h == nil {
			return openResp{Error: "no such process here"}, nil
		}
		have, gen, run, err := h.attach(req.StdoutFrom)
		if err != nil {
			return openResp{Error: err.Error()}, nil
		}
		return openResp{PID: h.proc.ID(), StdinHave: have, Gen: gen}, func() { run(st) }
	case opStderr:
		if h == nil {
			return openResp{Error: "no such process here"}, nil
		}
		return openResp{PID: h.proc.ID()}, func() { h.setStderr(st, h.currentStderr()) }
	case opPut:
		if err := checkPut(req); err != nil {
			return openResp{Error: err.Error()}, nil
		}
		return openResp{}, func() { r.receive(req, st) }
	}
	return openResp{Error: fmt.Sprintf("unknown op %q (accepted: start, attach, stderr, put)", req.Op)}, nil
}

func (h *held) currentStderr() io.Writer {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// start starts an agent, if there is room.
func (r *Runner) start(id string, spec sandbox.Spec) (*held, error) {
	r.mu.Lock()
	live := 0
	for _, h := range r.procs {
		h.mu.Lock()
		ending := h.ending
		h.mu.Unlock()
		select {
		case <-h.exited:
		default:
			if !ending {
				live++
			}
		}
	}
	r.mu.Unlock()
	if live >= r.MaxAgents {
		return nil, fmt.Errorf("runner %s is full (%d agents)", r.Name, r.MaxAgents)
	}
	if r.Local != nil {
		var err error
		if spec, err = r.Local(spec); err != nil {
			return nil, err
		}
	}
	p, err := r.Sandbox.Start(spec)
	if err != nil {
		return nil, err
	}
	h := newHeld(id, spec.Name, p)
	r.mu.Lock()
	r.procs[id] = h
	r.mu.Unlock()
	r.Log.Info("agent started", "id", id, "chat", spec.Name, "pid", p.ID())
	go r.reportExit(h)
	return h, nil
}

// reportExit tells the server when an agent exits; while away, the next
// hello does.
func (r *Runner) reportExit(h *held) {
	<-h.exited
	m := ctlMsg{Op: ctlExit, ID: h.id}
	if h.exitErr != nil {
		m.Err = h.exitErr.Error()
	}
	r.Log.Info("agent exited", "id", h.id, "chat", h.chat, "pid", h.proc.ID(), "err", m.Err)
	r.mu.Lock()
	ctl := r.ctl
	r.mu.Unlock()
	if ctl != nil && ctl.send(m) == nil {
		r.mu.Lock()
		delete(r.procs, h.id)
		r.mu.Unlock()
	}
}

// Agents is how many agents the runner holds now.
func (r *Runner) Agents() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.procs)
}

func acceptTimeout(sess *yamux.Session, d time.Duration) (*yamux.Stream, error) {
	t := time.AfterFunc(d, func() { sess.Close() })
	defer t.Stop()
	return sess.AcceptStream()
}
