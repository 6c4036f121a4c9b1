package claude

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/sandbox"
)

// heldProc is a CLI process on a runner, in memory: the test writes its
// stdout and reads its stdin; it keeps every stdout byte, so an adoption
// replays from the last ack as a runner does.
type heldProc struct {
	mu      sync.Mutex
	out     []byte // all stdout the CLI wrote
	acked   int64
	signals []syscall.Signal
	stdin   chan []byte // what leashd wrote, line by line

	cur *attachment // the current server's view
}

// attachment is one server's pipes to the process.
type attachment struct {
	p        *heldProc
	outR     *io.PipeReader
	outW     *io.PipeWriter
	errR     *io.PipeReader
	errW     *io.PipeWriter
	base     int64
	exited   chan struct{}
	detached bool
	lines    chan []byte // written to outW in order
}

func newHeldProc() *heldProc { return &heldProc{stdin: make(chan []byte, 64)} }

// attach gives a (new) server the process, from the last ack on.
func (p *heldProc) attach() *attachment {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := &attachment{p: p, base: p.acked, exited: make(chan struct{}), lines: make(chan []byte, 64)}
	a.outR, a.outW = io.Pipe()
	a.errR, a.errW = io.Pipe()
	a.lines <- append([]byte(nil), p.out[p.acked:]...)
	p.cur = a
	go func() {
		for b := range a.lines {
			_, _ = a.outW.Write(b)
		}
	}()
	return a
}

// write is the CLI printing a line.
func (p *heldProc) write(t *testing.T, v any) {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	b = append(b, '\n')
	p.mu.Lock()
	p.out = append(p.out, b...)
	a := p.cur
	p.mu.Unlock()
	if a != nil && !a.detached {
		a.lines <- b
	}
}

func (p *heldProc) ackedAt() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked
}

func (p *heldProc) size() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int64(len(p.out))
}

func (a *attachment) Stdin() io.WriteCloser { return stdinOf{a} }
func (a *attachment) Stdout() io.ReadCloser { return a.outR }
func (a *attachment) Stderr() io.ReadCloser { return a.errR }
func (a *attachment) Wait() error {
	<-a.exited
	return sandbox.ErrDetached
}
func (a *attachment) Signal(sig syscall.Signal) error {
	a.p.mu.Lock()
	a.p.signals = append(a.p.signals, sig)
	a.p.mu.Unlock()
	return nil
}
func (a *attachment) End(time.Duration) { _ = a.Signal(syscall.SIGKILL) }
func (a *attachment) ID() string        { return "r1/4242" }
func (a *attachment) Ack(n int64) {
	a.p.mu.Lock()
	a.p.acked = max(a.p.acked, a.base+n)
	a.p.mu.Unlock()
}
func (a *attachment) Detach() {
	a.p.mu.Lock()
	a.detached = true
	close(a.lines)
	a.p.mu.Unlock()
	a.outW.Close()
	a.errW.Close()
	close(a.exited)
}

type stdinOf struct{ a *attachment }

func (s stdinOf) Write(b []byte) (int, error) {
	s.a.p.stdin <- append([]byte(nil), b...)
	return len(b), nil
}
func (s stdinOf) Close() error { return errors.New("a test process's stdin is never closed") }

// heldSandbox adopts its one process.
type heldSandbox struct{ p *heldProc }

func (h heldSandbox) Name() string                                { return "off" }
func (h heldSandbox) LookPath(f string) (string, error)           { return f, nil }
func (h heldSandbox) Start(sandbox.Spec) (sandbox.Process, error) { return h.p.attach(), nil }
func (h heldSandbox) Adopt(name string) (sandbox.Process, error) {
	if name != "chat1" {
		return nil, sandbox.ErrNotHeld
	}
	return h.p.attach(), nil
}

func canUseTool(id, cmd string) map[string]any {
	return map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{
		"subtype": "can_use_tool", "tool_name": "Bash", "input": map[string]any{"command": cmd}}}
}

// readStdin waits for leashd's next line to the CLI.
func readStdin(t *testing.T, p *heldProc) map[string]any {
	t.Helper()
	select {
	case b := <-p.stdin:
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	case <-time.After(30 * time.Second):
		t.Fatal("nothing written to the CLI")
		return nil
	}
}

// A CLI on a runner asked for a tool when leashd shut down: leashd lets it
// go without answering, acks stop before the request, and the next run
// adopts the same process, reads the request again with the same Ref, and
// its answer reaches that process; the turn completes.
func TestAdoptedCLIGetsItsAnswerMidTurn(t *testing.T) {
	p := newHeldProc()
	a := New("claude", WithSandbox(heldSandbox{p}), WithCloseTimeout(time.Second))
	s1, err := start(a, agent.SessionOptions{ChatID: "chat1"})
	require.NoError(t, err)

	asked := make(chan agent.PermissionRequest, 1)
	h1 := &handler{decide: func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		asked <- req
		<-ctx.Done() // nobody answers before the shutdown
		return agent.PermissionResponse{Message: "must never reach the CLI"}
	}}
	turn1 := make(chan error, 1)
	go func() {
		_, err := s1.Turn(context.Background(), agent.Text("list the files"), h1)
		turn1 <- err
	}()
	assert.Equal(t, "user", readStdin(t, p)["type"])
	p.write(t, map[string]any{"type": "assistant", "message": map[string]any{"id": "m1", "content": []any{map[string]any{"type": "text", "text": "Let me look."}}}})
	before := p.size()
	p.write(t, canUseTool("req-1", "ls"))
	req := <-asked
	assert.Equal(t, "req-1", req.Ref, "the CLI's own request ID, for matching after a restart")
	require.Eventually(t, func() bool { return p.ackedAt() == before }, 10*time.Second, time.Millisecond, "acked up to the request, not past it")

	require.True(t, s1.Detach())
	require.NoError(t, s1.Close(context.Background()))
	assert.ErrorIs(t, <-turn1, agent.ErrDetached)
	<-s1.Done()
	assert.Empty(t, p.signals, "nothing signalled: it runs on")
	assert.Equal(t, before, p.ackedAt(), "the request is still unanswered")
	select {
	case b := <-p.stdin:
		t.Fatalf("written to the CLI after it was let go of: %s", b)
	case <-time.After(50 * time.Millisecond):
	}

	// The next run of leashd.
	sess, err := a.Adopt(context.Background(), agent.SessionOptions{ChatID: "chat1", ResumeID: "sid-1"})
	require.NoError(t, err)
	s2 := sess.(*session)
	h2 := &handler{decide: func(_ context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		asked <- req
		return agent.PermissionResponse{Allow: true}
	}}
	turn2 := make(chan agent.Result, 1)
	go func() {
		res, err := s2.Continue(context.Background(), h2)
		assert.NoError(t, err)
		turn2 <- res
	}()
	again := <-asked
	assert.Equal(t, "req-1", again.Ref)
	assert.JSONEq(t, `{"command":"ls"}`, string(again.Input))
	resp := readStdin(t, p)
	assert.Equal(t, "control_response", resp["type"], "the answer goes to the same process")
	assert.Contains(t, string(must(json.Marshal(resp))), `"request_id":"req-1"`)
	assert.Contains(t, string(must(json.Marshal(resp))), `"behavior":"allow"`)
	p.write(t, map[string]any{"type": "result", "subtype": "success", "result": "a.txt b.txt", "session_id": "sid-1"})
	res := <-turn2
	assert.Equal(t, "a.txt b.txt", res.Text)
	require.Eventually(t, func() bool { return p.ackedAt() == p.size() }, 10*time.Second, time.Millisecond, "everything handled is acked")
	assert.Empty(t, h2.texts, "text handled before the restart is not shown again")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
