package remote

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent/sandbox"
)

// rig is a hub behind an httptest server, and a cuttable TCP proxy in
// front of it for runners.
type rig struct {
	hub   *Hub
	srv   *httptest.Server
	proxy *cutProxy
	logs  *testenv.Buffer
}

func newRig(t *testing.T, grace time.Duration) *rig { return newRigTB(t, grace) }

func newRigTB(t testing.TB, grace time.Duration) *rig { return newRigHooked(t, grace, nil) }

// newRigHooked sets the hub's hooks (hook) before it serves: a runner's
// connection, through the kernel, is no synchronisation the race
// detector sees.
func newRigHooked(t testing.TB, grace time.Duration, hook func(*Hub)) *rig {
	t.Helper()
	logs := &testenv.Buffer{}
	hub := NewHub([]string{"tok-one", "tok-two"}, grace, slog.New(slog.NewTextHandler(logs, nil)))
	if hook != nil {
		hook(hub)
	}
	mux := http.NewServeMux()
	mux.Handle(ConnectPath, hub)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p := newCutProxy(t, strings.TrimPrefix(srv.URL, "http://"))
	return &rig{hub: hub, srv: srv, proxy: p, logs: logs}
}

// runner starts a runner on the host sandbox; it stops with the test.
func (r *rig) runner(t *testing.T, name string, max int, labels ...string) *Runner {
	return r.runnerTB(t, name, max, labels...)
}

func (r *rig) runnerTB(t testing.TB, name string, max int, labels ...string) *Runner {
	t.Helper()
	return r.start(t, &Runner{Name: name, MaxAgents: max, Labels: labels})
}

// start runs run (its URL, token and sandbox set here) until the test
// ends, once connected.
func (r *rig) start(t testing.TB, run *Runner) *Runner {
	t.Helper()
	name := run.Name
	run.URL, run.Token, run.Sandbox = "http://"+r.proxy.addr, "tok-two", &sandbox.Host{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = run.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "runner "+name+" connected", func() bool {
		for _, ri := range r.hub.Runners() {
			if ri.Name == name && ri.Connected {
				return true
			}
		}
		return false
	})
	// The hub counts the runner connected once it sent its welcome; the
	// runner, once it read it.
	waitFor(t, "runner "+name+" read its welcome", func() bool {
		run.mu.Lock()
		defer run.mu.Unlock()
		return run.sess != nil
	})
	return run
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cutProxy forwards TCP to target; cut closes every connection through it.
type cutProxy struct {
	addr   string
	target string
	delay  time.Duration // added each way per write
	mu     sync.Mutex
	conns  []net.Conn
	paused bool
}

func newCutProxy(t testing.TB, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{addr: ln.Addr().String(), target: target}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			paused := p.paused
			p.mu.Unlock()
			if paused {
				c.Close()
				continue
			}
			go p.forward(c)
		}
	}()
	return p
}

func (p *cutProxy) forward(c net.Conn) {
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	u, err := net.Dial("tcp", target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, c, u)
	p.mu.Unlock()
	go p.copy(u, c)
	p.copy(c, u)
}

func (p *cutProxy) copy(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	if p.delay == 0 {
		_, _ = io.Copy(dst, src)
		return
	}
	delayed(dst, src, p.delay)
}

// delayed copies src to dst, each chunk d later than it was read.
func delayed(dst io.Writer, src io.Reader, d time.Duration) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	ch := make(chan chunk, 1024)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				ch <- chunk{buf[:n], time.Now().Add(d)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			return
		}
	}
}

// cut closes every connection; pause(true) also refuses new ones.
func (p *cutProxy) cut() {
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
}

func (p *cutProxy) pause(on bool) {
	p.mu.Lock()
	p.paused = on
	p.mu.Unlock()
	if on {
		p.cut()
	}
}

// shSpec runs a shell script as the agent.
func shSpec(chat, script string) sandbox.Spec {
	return sandbox.Spec{Path: "sh", Args: []string{"-c", script}, Name: chat, Dir: "/"}
}

func TestAgentOnRunnerSpeaksOverItsStreams(t *testing.T) {
	r := newRig(t, time.Minute)
	r.runner(t, "box1", 2)
	p, err := r.hub.Start(shSpec("chat1", `while read l; do echo "got $l"; echo "err $l" >&2; done; exit 3`))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(p.ID(), "box1/"), p.ID())
	out := bufio.NewReader(p.Stdout())
	errs := bufio.NewReader(p.Stderr())
	_, err = io.WriteString(p.Stdin(), "hello\n")
	require.NoError(t, err)
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "got hello\n", line)
	line, err = errs.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "err hello\n", line)
	require.NoError(t, p.Stdin().Close())
	_, err = out.ReadString('\n')
	require.ErrorIs(t, err, io.EOF)
	require.EqualError(t, p.Wait(), "exit status 3")
	require.Equal(t, []RunnerInfo{{Name: "box1", MaxAgents: 2, Connected: true, Chats: []string{}}}, stripSince(r.hub.Runners()))
}

func stripSince(ris []RunnerInfo) []RunnerInfo {
	for i := range ris {
		ris[i].Since = time.Time{}
	}
	return ris
}

// TestReconnectWithinGraceCarriesOn cuts the connection while the agent
// writes, and again while it waits for input: the output written meanwhile
// arrives whole and in order, and input sent while away reaches it.
func TestReconnectWithinGraceCarriesOn(t *testing.T) {
	r := newRig(t, time.Minute)
	r.runner(t, "box1", 2)
	p, err := r.hub.Start(shSpec("chat1", `i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done; read x; echo "then $x"`))
	require.NoError(t, err)
	out := bufio.NewReader(p.Stdout())
	for i := 0; i < 2000; i++ {
		if i == 10 || i == 1000 {
			r.proxy.cut()
		}
		line, err := out.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("line %d\n", i), line)
	}
	r.proxy.pause(true)
	waitFor(t, "the runner seen away", func() bool { return !r.hub.Runners()[0].Connected })
	wrote := make(chan error, 1)
	go func() { _, err := io.WriteString(p.Stdin(), "typed while away\n"); wrote <- err }()
	r.proxy.pause(false)
	require.NoError(t, <-wrote)
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "then typed while away\n", line)
	require.NoError(t, p.Wait())
	require.Contains(t, r.logs.String(), "agent re-attached")
}

// TestRunnerAwayLongerThanGraceIsLost: Lost names the runner's chats while
// their agents still run, then the agent's process is given up with an
// error naming the runner, and the chat's next
// agent starts on another runner.
func TestRunnerAwayLongerThanGraceIsLost(t *testing.T) {
	r := newRig(t, 300*time.Millisecond)
	r.runner(t, "box1", 2)
	lost := make(chan string, 1)
	started := make(chan *proc, 1)
	exitedFirst := make(chan bool, 1)
	r.hub.Lost = func(runner string, chats []string) {
		// Told before the agents are given up, so the chat's pending
		// interactions end with the runner's name, not the turn's error.
		select {
		case <-(<-started).exited:
			exitedFirst <- true
		default:
			exitedFirst <- false
		}
		lost <- runner + ":" + strings.Join(chats, ",")
	}
	p, err := r.hub.Start(shSpec("chat1", `sleep 600`))
	require.NoError(t, err)
	started <- p.(*proc)
	other := newCutProxy(t, strings.TrimPrefix(r.srv.URL, "http://"))
	r.proxy.pause(true)
	require.Equal(t, "box1:chat1", <-lost)
	require.False(t, <-exitedFirst, "Lost was called after the agent was given up")
	err = p.Wait()
	require.ErrorContains(t, err, "runner box1 was lost (no connection for 300ms)")
	_, err = io.ReadAll(p.Stdout())
	require.ErrorContains(t, err, "runner box1 was lost")
	r2 := &rig{hub: r.hub, srv: r.srv, proxy: other}
	r2.runner(t, "box2", 1)
	p2, err := r.hub.Start(shSpec("chat1", `echo here`))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(p2.ID(), "box2/"), p2.ID())
}
