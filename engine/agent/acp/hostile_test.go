package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/sandbox"
)

// fakeProc is an agent process that lives until it is signalled, whatever
// happens to its output: its stdio are pipes to a scripted agent.
type fakeProc struct {
	stdinR, stdoutR, stderrR *io.PipeReader
	stdinW, stdoutW, stderrW *io.PipeWriter

	mu      sync.Mutex
	signals []string
	exited  chan struct{}
	once    sync.Once
}

func (p *fakeProc) Stdin() io.WriteCloser { return p.stdinW }
func (p *fakeProc) Stdout() io.ReadCloser { return p.stdoutR }
func (p *fakeProc) Stderr() io.ReadCloser { return p.stderrR }
func (p *fakeProc) ID() string            { return "fake" }
func (p *fakeProc) End(time.Duration)     { p.kill("end") }
func (p *fakeProc) Signal(s syscall.Signal) error {
	p.kill(s.String())
	return nil
}

func (p *fakeProc) Wait() error {
	<-p.exited
	return errors.New("signal: terminated")
}

func (p *fakeProc) kill(how string) {
	p.mu.Lock()
	p.signals = append(p.signals, how)
	p.mu.Unlock()
	p.once.Do(func() {
		close(p.exited)
		p.stdoutW.Close()
		p.stderrW.Close()
		p.stdinR.Close()
	})
}

func (p *fakeProc) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.signals...)
}

// fakeSandbox starts fakeProcs speaking as a scripted agent.
type fakeSandbox struct {
	t        *testing.T
	onPrompt func(a *scripted, text string) string
	replay   int // history updates session/load replays
	mu       sync.Mutex
	proc     *fakeProc
}

func (f *fakeSandbox) Name() string                         { return "off" }
func (f *fakeSandbox) LookPath(file string) (string, error) { return file, nil }
func (f *fakeSandbox) Start(sandbox.Spec) (sandbox.Process, error) {
	p := &fakeProc{exited: make(chan struct{})}
	p.stdinR, p.stdinW = io.Pipe()
	p.stdoutR, p.stdoutW = io.Pipe()
	p.stderrR, p.stderrW = io.Pipe()
	a := &scripted{t: f.t, out: p.stdoutW, onPrompt: f.onPrompt, modes: claudeModes, caps: `{"loadSession":true}`, replay: f.replay, waiting: map[int]chan rpc{}, changed: make(chan struct{})}
	go a.serve(p.stdinR)
	f.mu.Lock()
	f.proc = p
	f.mu.Unlock()
	return p, nil
}

// textHandler collects a turn's text and refuses every permission,
// counting them.
type textHandler struct {
	mu    sync.Mutex
	text  strings.Builder
	asked int
}

func (h *textHandler) Text(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.text.Len() == 0 {
		time.Sleep(50 * time.Millisecond) // a slow chat: the burst piles up
	}
	h.text.WriteString(s)
}
func (h *textHandler) ToolUse(string, json.RawMessage) {}
func (h *textHandler) Permission(context.Context, agent.PermissionRequest) agent.PermissionResponse {
	h.mu.Lock()
	h.asked++
	h.mu.Unlock()
	return agent.PermissionResponse{Message: "no"}
}
func (h *textHandler) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.text.String()
}

// openHostile opens a session with an agent scripted by onPrompt, in a
// process that lives on until signalled; logs go to the returned buffer.
func openHostile(t *testing.T, onPrompt func(a *scripted, text string) string, opts ...Option) (agent.Session, *fakeSandbox, *testenv.Buffer) {
	t.Helper()
	logs := &testenv.Buffer{}
	sb := &fakeSandbox{t: t, onPrompt: onPrompt}
	opts = append([]Option{WithSandbox(sb), WithCloseTimeout(300 * time.Millisecond), WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))}, opts...)
	sess, err := New([]string{"hostile"}, opts...).Open(context.Background(), agent.SessionOptions{ChatID: "c", WorkDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close(context.Background()) })
	return sess, sb, logs
}

// turnWithin runs a turn that must end within d.
func turnWithin(t *testing.T, sess agent.Session, h agent.TurnHandler, d time.Duration) (agent.Result, error) {
	t.Helper()
	type out struct {
		r   agent.Result
		err error
	}
	ch := make(chan out, 1)
	go func() {
		r, err := sess.Turn(context.Background(), agent.Text("go"), h)
		ch <- out{r, err}
	}()
	select {
	case o := <-ch:
		return o.r, o.err
	case <-time.After(d):
		t.Fatalf("the turn did not end within %s", d)
		return agent.Result{}, nil
	}
}

// A burst of 5,000 updates — more than the SDK's queue of 1,024 — while
// the chat is slow: every piece of text arrives, in order.
func TestBurstOfUpdatesIsNotLost(t *testing.T) {
	const n = 5000
	sess, _, _ := openHostile(t, func(a *scripted, text string) string {
		for i := range n {
			a.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": fmt.Sprintf("%d ", i)}})
		}
		return "end_turn"
	})
	h := &textHandler{}
	res, err := turnWithin(t, sess, h, 30*time.Second)
	require.NoError(t, err)
	var want strings.Builder
	for i := range n {
		fmt.Fprintf(&want, "%d ", i)
	}
	assert.Equal(t, want.String(), h.String())
	assert.Equal(t, strings.TrimSpace(want.String()), res.Text)
}

// A session/update over the message limit is left out, the person told
// so, and the turn goes on; the log quotes at most 2 KiB of it.
func TestOverLongUpdateIsLeftOutWithANote(t *testing.T) {
	sess, _, logs := openHostile(t, func(a *scripted, text string) string {
		a.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": strings.Repeat("x", 11<<20)}})
		a.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "after"}})
		return "end_turn"
	})
	h := &textHandler{}
	_, err := turnWithin(t, sess, h, 30*time.Second)
	require.NoError(t, err)
	assert.Contains(t, h.String(), "leashd left out an update of 11534496 bytes from the agent")
	assert.True(t, strings.HasSuffix(h.String(), "after"), h.String())
	for _, line := range strings.Split(logs.String(), "\n") {
		assert.LessOrEqual(t, len(line), 3<<10, "a log line of %d bytes", len(line))
	}
}

// A request over the limit is answered with an error saying why, and
// nobody is asked; the session goes on.
func TestOverLongRequestIsRefused(t *testing.T) {
	answers := make(chan rpc, 1)
	sess, _, _ := openHostile(t, func(a *scripted, text string) string {
		p := permissionParams(fourOptions)
		p["toolCall"].(map[string]any)["rawInput"] = map[string]any{"command": strings.Repeat("y", 5<<20)}
		answers <- a.call("session/request_permission", p)
		return "end_turn"
	})
	h := &textHandler{}
	_, err := turnWithin(t, sess, h, 30*time.Second)
	require.NoError(t, err)
	r := <-answers
	require.NotNil(t, r.Error)
	assert.Contains(t, string(r.Error.Data), "LEASHD_MAX_AGENT_MESSAGE_BYTES")
	assert.Zero(t, h.asked, "nobody was asked")
}

// The agent closes its output but its process lives on: the session ends
// (the process is signalled) and the turn ends saying why, instead of
// holding the chat for good.
func TestClosedConnectionEndsTheSession(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	sess, sb, _ := openHostile(t, func(a *scripted, text string) string {
		a.out.Close()
		<-hold
		return "end_turn"
	})
	_, err := turnWithin(t, sess, &textHandler{}, 10*time.Second)
	require.ErrorIs(t, err, agent.ErrSessionEnded)
	assert.Contains(t, err.Error(), "the connection to the agent closed")
	assert.NotEmpty(t, sb.proc.got(), "the process was ended")
	select {
	case <-sess.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the session did not end")
	}
}

// A line over the limit whose start says nothing of what it is (no id
// before its params) ends the session, saying why.
func TestUnreadableOverLongLineEndsTheSession(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	sess, sb, _ := openHostile(t, func(a *scripted, text string) string {
		a.writeMu.Lock()
		_, _ = a.out.Write([]byte(`{"params":{"x":"` + strings.Repeat("z", 5<<20) + `"},"jsonrpc":"2.0","method":"x/y","id":99}` + "\n"))
		a.writeMu.Unlock()
		<-hold
		return "end_turn"
	})
	_, err := turnWithin(t, sess, &textHandler{}, 10*time.Second)
	require.ErrorIs(t, err, agent.ErrSessionEnded)
	assert.Contains(t, err.Error(), "the agent sent a message leashd could not read: it was 5242938 bytes")
	assert.NotEmpty(t, sb.proc.got())
}

// /stop (Interrupt) ends the turn within the close timeout even when the
// agent ignores session/cancel: the session is closed.
func TestStopEndsTheTurnWhateverTheAgentDoes(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	prompted := make(chan struct{})
	sess, sb, _ := openHostile(t, func(a *scripted, text string) string {
		close(prompted)
		<-hold // ignores session/cancel
		return "end_turn"
	})
	errc := make(chan error, 1)
	go func() {
		_, err := sess.Turn(context.Background(), agent.Text("go"), &textHandler{})
		errc <- err
	}()
	<-prompted
	start := time.Now()
	_ = sess.Interrupt(context.Background())
	select {
	case err := <-errc:
		require.ErrorIs(t, err, agent.ErrSessionEnded)
		assert.Contains(t, err.Error(), "did not end its turn within 300ms of being stopped")
		assert.Less(t, time.Since(start), 3*time.Second)
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not end after /stop")
	}
	assert.NotEmpty(t, sb.proc.got())
}

// A line of 3 MB that is not JSON-RPC is skipped with a warning quoting at
// most 2 KiB of it and its length — not logged whole at ERROR.
func TestBadLineIsLoggedCut(t *testing.T) {
	sess, _, logs := openHostile(t, func(a *scripted, text string) string {
		a.writeMu.Lock()
		_, _ = a.out.Write([]byte(strings.Repeat("n", 3<<20) + "\n"))
		a.writeMu.Unlock()
		return "end_turn"
	})
	_, err := turnWithin(t, sess, &textHandler{}, 30*time.Second)
	require.NoError(t, err)
	assert.Contains(t, logs.String(), `level=WARN msg="skipping a line from the agent that is not JSON-RPC"`)
	assert.Contains(t, logs.String(), "… (3145728 bytes)")
	assert.NotContains(t, logs.String(), "level=ERROR")
	for _, line := range strings.Split(logs.String(), "\n") {
		assert.LessOrEqual(t, len(line), 3<<10, "a log line of %d bytes", len(line))
	}
}

// What the SDK logs of the agent's output is cut to 2 KiB too.
func TestSDKLogLinesAreCut(t *testing.T) {
	logs := &testenv.Buffer{}
	l := slog.New(cappedHandler{slog.NewTextHandler(logs, nil)})
	l.Error("failed to parse incoming message", "raw", strings.Repeat("r", 5<<20), "err", errors.New(strings.Repeat("e", 5000)), slog.Group("g", "x", strings.Repeat("g", 5000)))
	assert.Less(t, len(logs.String()), 8<<10)
	assert.Contains(t, logs.String(), "… (5242880 bytes)")
	assert.Contains(t, logs.String(), "… (5000 bytes)")
}

// Between turns, a lost connection ends the session too, and the chat is
// told (a notice) that the next message starts the agent again.
func TestClosedConnectionBetweenTurnsIsToldToTheChat(t *testing.T) {
	sb := &fakeSandbox{t: t}
	notices := make(chan agent.Notice, 1)
	sess, err := New([]string{"hostile"}, WithSandbox(sb), WithCloseTimeout(300*time.Millisecond)).Open(context.Background(),
		agent.SessionOptions{ChatID: "c", WorkDir: t.TempDir(), Notice: func(n agent.Notice) { notices <- n }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close(context.Background()) })
	sb.proc.stdoutW.Close() // the agent closes its output and lives on
	select {
	case n := <-notices:
		assert.Equal(t, agent.NoticeLost, n.Kind)
		assert.Equal(t, "The agent's session ended: the connection to the agent closed. Your next message starts it again.", n.Text)
	case <-time.After(10 * time.Second):
		t.Fatal("the chat was not told")
	}
	<-sess.Done()
	assert.NotEmpty(t, sb.proc.got(), "the process was ended")
}

// A session/load replaying a long history — 20,000 updates, far more than
// the SDK's queue of 1,024 — resumes the session; none of it is shown.
func TestLongHistoryReplayResumes(t *testing.T) {
	sb := &fakeSandbox{t: t, replay: 20_000, onPrompt: func(a *scripted, text string) string {
		a.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "new"}})
		return "end_turn"
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := New([]string{"hostile"}, WithSandbox(sb), WithCloseTimeout(300*time.Millisecond)).Open(ctx,
		agent.SessionOptions{ChatID: "c", WorkDir: t.TempDir(), ResumeID: "sess-1"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close(context.Background()) })
	h := &textHandler{}
	res, err := turnWithin(t, sess, h, 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "new", res.Text)
	assert.Equal(t, "new", h.String(), "the history is not shown again")
}
