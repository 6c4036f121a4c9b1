package claude_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
	"github.com/leashd/leashd/interactions"
)

// stack is the real engine and coordinator driving the real CLI (through
// a wrapper script that logs each start: pid and arguments) against the
// fake API, with a connector recording what people see.
type stack struct {
	api   *fakeapi.Server
	e     *engine.Engine
	coord *interactions.Coordinator
	conn  *enginetest.Conn
	dir   string
	log   string // the wrapper's log: "<pid> <args>" a start
	cli   string // the real CLI the wrapper runs
	spy   *spyAgent
	home  string
}

// waitTranscript waits until the CLI's session transcript on disk holds
// text.
func (s *stack) waitTranscript(t testing.TB, text string) {
	t.Helper()
	require.Eventually(t, func() bool {
		files, _ := filepath.Glob(filepath.Join(s.home, ".claude", "projects", "*", "*.jsonl"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), text) {
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "the CLI wrote its transcript")
}

func newStack(t testing.TB, engineOpts ...enginetest.Setup) *stack {
	t.Helper()
	return newStackWith(t, nil, engineOpts...)
}

// newStackWith is newStack with coordinator options.
func newStackWith(t testing.TB, coordOpts []interactions.Opt, engineOpts ...enginetest.Setup) *stack {
	t.Helper()
	s, stop := newStoppableStack(t, coordOpts, engineOpts...)
	t.Cleanup(func() { require.NoError(t, stop()) })
	return s
}

// newStoppableStack is newStack whose engine the test stops itself (stop
// is idempotent and also runs at cleanup).
func newStoppableStack(t testing.TB, coordOpts []interactions.Opt, engineOpts ...enginetest.Setup) (*stack, func() error) {
	t.Helper()
	return newAgentStack(t, nil, coordOpts, engineOpts...)
}

// newAgentStack is newStoppableStack with options for the Claude agent.
func newAgentStack(t testing.TB, agentOpts []claude.Option, coordOpts []interactions.Opt, engineOpts ...enginetest.Setup) (*stack, func() error) {
	t.Helper()
	real := testenv.Claude(t)
	api := fakeapi.New(t)
	home := t.TempDir()
	dir := t.TempDir()
	bin := t.TempDir()
	logFile := filepath.Join(bin, "starts.log")
	wrapper := filepath.Join(bin, "claude")
	script := "#!/bin/sh\necho \"$$ $*\" >> " + strconv.Quote(logFile) + "\nexec " + strconv.Quote(real) + " \"$@\"\n"
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	return restartStack(t, &stack{api: api, dir: dir, log: logFile, cli: real, home: home}, agentOpts, coordOpts, engineOpts...)
}

// restartStack starts a new engine, coordinator and connector (a restarted
// leashd) on base's fake API, HOME, working directory and CLI wrapper.
func restartStack(t testing.TB, base *stack, agentOpts []claude.Option, coordOpts []interactions.Opt, engineOpts ...enginetest.Setup) (*stack, func() error) {
	t.Helper()
	api, home, dir, logFile, real := base.api, base.home, base.dir, base.log, base.cli
	wrapper := filepath.Join(filepath.Dir(logFile), "claude")
	ag := &spyAgent{Agent: claude.New(wrapper, append([]claude.Option{claude.WithEnv(api.Env(home)), claude.WithLogger(testLogger(t)), claude.WithCloseTimeout(3 * time.Second)}, agentOpts...)...)}
	coord := interactions.New(coordOpts...)
	opts := append([]enginetest.Setup{func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir }, func(d *engine.Deps, _ *engine.Config) { d.Log = testLogger(t) }, func(_ *engine.Deps, c *engine.Config) { c.CloseTimeout = 15 * time.Second }}, engineOpts...)
	e := enginetest.New(ag, coord, opts...)
	conn := enginetest.NewConn("web")
	conn.WaitLimit = 45 * time.Second // the real CLI takes its time
	e.AddConnector(conn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(30 * time.Second):
				runErr = errors.New("engine did not stop within 30s")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return &stack{api: api, e: e, coord: coord, conn: conn, dir: dir, log: logFile, cli: real, home: home, spy: ag}, stop
}

// spyAgent is the Claude agent, recording each permission request
// (can_use_tool) the CLI sends as it reaches the engine.
type spyAgent struct {
	agent.Agent

	mu        sync.Mutex
	asked     []string // tool names, in order
	openedFor []string // the chat of each session opened ("": a spare)
}

// Prewarm passes the agent's engine.Prewarmer on (spares are kept only
// with engine.WithPrewarm).
func (a *spyAgent) Prewarm() bool {
	p, ok := a.Agent.(agent.Prewarmer)
	return ok && p.Prewarm()
}

func (a *spyAgent) Open(ctx context.Context, o agent.SessionOptions) (agent.Session, error) {
	a.mu.Lock()
	a.openedFor = append(a.openedFor, o.ChatID)
	a.mu.Unlock()
	s, err := a.Agent.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	return &spySession{Session: s, a: a}, nil
}

type spySession struct {
	agent.Session
	a *spyAgent
}

func (s *spySession) Turn(ctx context.Context, prompt agent.Prompt, h agent.TurnHandler) (agent.Result, error) {
	return s.Session.Turn(ctx, prompt, spyHandler{TurnHandler: h, a: s.a})
}

type spyHandler struct {
	agent.TurnHandler
	a *spyAgent
}

func (h spyHandler) Permission(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	h.a.mu.Lock()
	h.a.asked = append(h.a.asked, req.ToolName)
	h.a.mu.Unlock()
	return h.TurnHandler.Permission(ctx, req)
}

// asked lists the tools the CLI asked the engine about (can_use_tool), in
// order, whether or not the engine then asked a person.
func (s *stack) asked() []string {
	s.spy.mu.Lock()
	defer s.spy.mu.Unlock()
	return append([]string(nil), s.spy.asked...)
}

// starts lists the CLI processes started: pid and arguments.
func (s *stack) starts(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(s.log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// countProcesses replaces the stack's CLI wrapper (before any start) with
// one that stays the CLI's parent and appends "start <pid>" before the CLI
// runs and "exit <pid>" once it has exited to one log. The driver waits for
// the wrapper, so a CLI counts as live until the engine could see it gone.
// Signals reach this CLI through its process group only (not killLast).
// peak reads the log: the most CLI processes alive at one time so far.
func (s *stack) countProcesses(t testing.TB) (peak func() int) {
	t.Helper()
	require.Empty(t, s.starts(t), "count processes before the first start")
	bin := filepath.Dir(s.log)
	live := filepath.Join(bin, "live.log")
	script := "#!/bin/sh\n" +
		"echo \"$$ $*\" >> " + strconv.Quote(s.log) + "\n" +
		"echo \"start $$\" >> " + strconv.Quote(live) + "\n" +
		"trap 'echo \"exit $$\" >> " + strconv.Quote(live) + "; exit 143' TERM\n" +
		strconv.Quote(s.cli) + " \"$@\"\n" +
		"rc=$?\n" +
		"echo \"exit $$\" >> " + strconv.Quote(live) + "\n" +
		"exit $rc\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755))
	return func() int {
		b, err := os.ReadFile(live)
		if os.IsNotExist(err) {
			return 0
		}
		require.NoError(t, err)
		n, most := 0, 0
		for line := range strings.Lines(string(b)) {
			switch {
			case strings.HasPrefix(line, "start "):
				n++
			case strings.HasPrefix(line, "exit "):
				n--
			}
			most = max(most, n)
		}
		return most
	}
}

// killLast kills the most recently started CLI with SIGKILL.
func (s *stack) killLast(t testing.TB) {
	t.Helper()
	st := s.starts(t)
	require.NotEmpty(t, st)
	pidText, _, _ := strings.Cut(st[len(st)-1], " ")
	pid, err := strconv.Atoi(pidText)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
}

func (s *stack) send(t testing.TB, text string) connectors.Route {
	t.Helper()
	r, err := s.e.HandleMessage(context.Background(), connectors.Incoming{ChatID: "c1", UserID: "u1", Text: text})
	require.NoError(t, err)
	return r
}

func (s *stack) tap(t testing.TB, id string, labels ...string) {
	t.Helper()
	_, err := s.e.Reply(context.Background(), id, interactions.Reply{By: "u1", Answers: labels})
	require.NoError(t, err)
}

func (s *stack) typed(t testing.TB, id, text string) {
	t.Helper()
	_, err := s.e.Reply(context.Background(), id, interactions.Reply{By: "u1", Text: text})
	require.NoError(t, err)
}

func testLogger(t testing.TB) *slogLogger { return newTestLogger(t) }

func reply(by string) interactions.Reply { return interactions.Reply{By: by} }
