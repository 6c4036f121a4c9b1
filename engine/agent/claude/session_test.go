package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// fakeAgent runs this test binary as the CLI in the given mode.
func fakeAgent(t *testing.T, mode string, opts ...Option) (*Agent, *testenv.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	logs := &testenv.Buffer{}
	opts = append([]Option{
		// The race detector sleeps 1s at exit unless told not to.
		WithEnv([]string{"FAKECLI_CLAUDE=" + mode, "GORACE=atexit_sleep_ms=0"}),
		WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		WithCloseTimeout(time.Second),
	}, opts...)
	a := New(exe, opts...)
	a.maxLine = fakeLimit
	return a, logs
}

func openFake(t *testing.T, a *Agent, o agent.SessionOptions) *session {
	t.Helper()
	s, err := a.Open(t.Context(), o)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s.(*session)
}

// handler records a turn and decides permissions with decide.
type handler struct {
	decide func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse

	mu    sync.Mutex
	texts []string
	tools []string
}

func (h *handler) Text(s string) {
	h.mu.Lock()
	h.texts = append(h.texts, s)
	h.mu.Unlock()
}

func (h *handler) ToolUse(name string, _ json.RawMessage) {
	h.mu.Lock()
	h.tools = append(h.tools, name)
	h.mu.Unlock()
}

func (h *handler) Permission(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	if h.decide == nil {
		return agent.PermissionResponse{Message: "no"}
	}
	return h.decide(ctx, req)
}

// turnCtx bounds a test's turn: only a hang guard, so generous; the flood
// tests move 150 MB through pipes under -race, which takes over 30 s when
// both cores are busy.
func turnCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestTurnEchoAndResult(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	assert.Equal(t, "", s.ID(), "no session ID before the CLI says one")
	h := &handler{}
	res, err := s.Turn(turnCtx(t), agent.Text("echo hello there"), h)
	require.NoError(t, err)
	assert.Equal(t, agent.Result{Text: "you said: hello there", SessionID: "fake-session-1", CostUSD: 0.25, NumTurns: 2, Subtype: "success", DurationMS: 7}, res)
	assert.Equal(t, []string{"you said: hello there"}, h.texts)
	assert.Equal(t, "fake-session-1", s.ID())
}

func TestArgsDirEnvAndResumeID(t *testing.T) {
	dir := t.TempDir()
	a, _ := fakeAgent(t, "normal", WithEnv([]string{"FAKECLI_EXTRA=passed"}), WithExtraArgs("--add-dir", "/tmp"))
	s := openFake(t, a, agent.SessionOptions{ChatID: "c", Mode: agent.ModePlan, Model: "claude-test-1", ResumeID: "prev-session", WorkDir: dir})
	assert.Equal(t, "prev-session", s.ID(), "a resumed session is known by its ID from the start")
	res, err := s.Turn(turnCtx(t), agent.Text("args"), &handler{})
	require.NoError(t, err)
	args, rest, _ := strings.Cut(res.Text, "|cwd=")
	assert.Equal(t, "--output-format stream-json --input-format stream-json --verbose --permission-prompt-tool stdio --permission-mode plan --model claude-test-1 --resume prev-session --add-dir /tmp", args)
	cwd, extra, _ := strings.Cut(rest, "|extra=")
	assert.Equal(t, dir, cwd)
	assert.Equal(t, "passed", extra, "WithEnv is passed on")
}

func TestDefaultModeFlag(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	assert.Equal(t, []string{"--output-format", "stream-json", "--input-format", "stream-json", "--verbose", "--permission-prompt-tool", "stdio", "--permission-mode", "default"},
		a.argsFor(agent.SessionOptions{}))
}

func TestGarbageHugeAndOverlongLinesAreSkipped(t *testing.T) {
	a, logs := fakeAgent(t, "garbage-at-start")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	h := &handler{}
	res, err := s.Turn(turnCtx(t), agent.Text("garbage"), h)
	require.NoError(t, err)
	assert.Equal(t, "survived", res.Text)
	require.Len(t, h.texts, 2, "the huge text and the string content; the subagent's text is not the answer")
	assert.Len(t, h.texts[0], hugeText)
	assert.Equal(t, "plain string content", h.texts[1])
	assert.Equal(t, []string{"Read"}, h.tools)
	l := logs.String()
	for _, want := range []string{
		`not a JSON object (stream-json lines start with '{'): \"Debugger listening`,
		`not a JSON object (stream-json lines start with '{'): \"this is not JSON\"`,
		`invalid JSON`,
		`JSON object without a \"type\" field`,
		`control_request without \"request_id\"`,
		`control_response without a \"response\" object`,
		`unreadable assistant message`,
		`skipping a line from claude longer than the limit`,
	} {
		assert.Contains(t, l, want)
	}
	// and the session goes on
	res, err = s.Turn(turnCtx(t), agent.Text("echo still here"), &handler{})
	require.NoError(t, err)
	assert.Equal(t, "you said: still here", res.Text)
}

func TestMissingProgram(t *testing.T) {
	for _, path := range []string{"/nonexistent/claude", "leashd-no-such-claude-program"} {
		a := New(path)
		_, err := a.Open(t.Context(), agent.SessionOptions{ChatID: "c"})
		require.Error(t, err)
		assert.ErrorIs(t, err, agent.ErrAgentNotFound)
		assert.Contains(t, err.Error(), path)
	}
}

func TestMissingProgramThroughTheEngine(t *testing.T) {
	coord := interactions.New()
	e := enginetest.New(New("/nonexistent/claude"), coord)
	out := &sayConn{said: make(chan string, 10)}
	e.AddConnector(out)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	_, err := e.HandleMessage(ctx, connectors.Incoming{ChatID: "c1", UserID: "u", Text: "hello"})
	require.NoError(t, err)
	select {
	case msg := <-out.said:
		assert.Contains(t, msg, "Could not start the agent")
		assert.Contains(t, msg, `"/nonexistent/claude"`)
		assert.Contains(t, msg, "npm install -g @anthropic-ai/claude-code")
		assert.Equal(t, 1, strings.Count(msg, "npm install"), "the install hint is given once")
	case <-time.After(10 * time.Second):
		t.Fatal("the chat was not told")
	}
}

// sayConn is a connector that reports what the engine says.
type sayConn struct{ said chan string }

func (c *sayConn) Name() string { return "web" }
func (c *sayConn) Run(ctx context.Context, _ connectors.Handler) error {
	<-ctx.Done()
	return nil
}
func (c *sayConn) Say(_ context.Context, _, text string) error            { c.said <- text; return nil }
func (c *sayConn) StreamText(context.Context, string, string) error       { return nil }
func (c *sayConn) Done(context.Context, string, connectors.Summary) error { return nil }
func (c *sayConn) Update(context.Context, interactions.Event) error       { return nil }
func (c *sayConn) Present(context.Context, *interactions.Interaction) (string, error) {
	return "", nil
}

func TestFind(t *testing.T) {
	_, err := Find(exec.LookPath, "leashd-no-such-claude-program")
	assert.ErrorIs(t, err, agent.ErrAgentNotFound)
	assert.Contains(t, err.Error(), `"leashd-no-such-claude-program"`)
	assert.Contains(t, err.Error(), "LEASHD_CLAUDE_PATH")
	exe, err := os.Executable()
	require.NoError(t, err)
	got, err := Find(exec.LookPath, exe)
	require.NoError(t, err)
	assert.Equal(t, exe, got)
}

func TestBadWorkDir(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	_, err := a.Open(t.Context(), agent.SessionOptions{ChatID: "c", WorkDir: "/nonexistent/dir"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/dir")
}

func TestExitEarly(t *testing.T) {
	a, _ := fakeAgent(t, "exit-early")
	start := time.Now()
	_, err := a.Open(t.Context(), agent.SessionOptions{ChatID: "c"})
	require.Error(t, err)
	assert.ErrorIs(t, err, agent.ErrSessionEnded)
	assert.Contains(t, err.Error(), "exit status 2")
	assert.Contains(t, err.Error(), "unknown option '--bogus'", "the stderr tail says why")
	assert.Less(t, time.Since(start), 20*time.Second)
}

func TestNoHandshakeTimesOut(t *testing.T) {
	a, _ := fakeAgent(t, "no-init", WithStartTimeout(300*time.Millisecond))
	_, err := a.Open(t.Context(), agent.SessionOptions{ChatID: "c"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "start-up handshake")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestDiesMidQuestion(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	asked := make(chan struct{})
	released := make(chan error, 1)
	h := &handler{decide: func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		close(asked)
		<-ctx.Done() // a person who never answers
		released <- context.Cause(ctx)
		return agent.PermissionResponse{Message: "gone"}
	}}
	_, err := s.Turn(turnCtx(t), agent.Text("die"), h)
	require.Error(t, err)
	assert.ErrorIs(t, err, agent.ErrSessionEnded)
	assert.Contains(t, err.Error(), "exit status 3")
	assert.Contains(t, err.Error(), "fatal: the model exploded")
	<-asked
	select {
	case err := <-released:
		assert.ErrorIs(t, err, agent.ErrSessionEnded, "the pending question's context ends with the process")
	case <-time.After(10 * time.Second):
		t.Fatal("the pending permission was not cancelled")
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done is not closed")
	}
	_, err = s.Turn(turnCtx(t), agent.Text("echo again"), &handler{})
	assert.ErrorIs(t, err, agent.ErrSessionEnded)
	assert.ErrorIs(t, s.Interrupt(t.Context()), agent.ErrSessionEnded)
	assert.ErrorIs(t, s.SetMode(t.Context(), agent.ModePlan), agent.ErrSessionEnded)
}

func TestCancelRequestWithdrawsWithoutAnswer(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	aCancelled := make(chan error, 1)
	h := &handler{decide: func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		if req.ToolUseID == "toolu_A" {
			<-ctx.Done()
			aCancelled <- context.Cause(ctx)
			return agent.PermissionResponse{Allow: true} // must not be sent
		}
		return agent.PermissionResponse{Allow: true}
	}}
	res, err := s.Turn(turnCtx(t), agent.Text("cancel"), h)
	require.NoError(t, err)
	assert.Equal(t, "responses=B", res.Text, "the withdrawn request got no answer; the other did")
	cause := <-aCancelled
	assert.ErrorIs(t, cause, ErrRequestWithdrawn)
	assert.ErrorIs(t, cause, agent.ErrRequestWithdrawn, "the engine tells people the agent withdrew it")
}

func TestUnknownControlSubtypeGetsAnError(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	res, err := s.Turn(turnCtx(t), agent.Text("unknown"), &handler{})
	require.NoError(t, err)
	var r map[string]string
	require.NoError(t, json.Unmarshal([]byte(res.Text), &r), res.Text)
	assert.Equal(t, "error", r["subtype"])
	assert.Equal(t, "m1", r["request_id"])
	assert.Contains(t, r["error"], "unsupported")
	assert.Contains(t, r["error"], `"mystery_subtype"`)
}

func TestPermissionResponseShapes(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	var got []agent.PermissionRequest
	var mu sync.Mutex
	h := &handler{decide: func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		if req.ToolName == "Write" { // allow without UpdatedInput, asking for a settings-file destination
			return agent.PermissionResponse{Allow: true, UpdatedPermissions: []agent.PermissionUpdate{{Type: "addRules", Rules: []agent.Rule{{ToolName: "Write"}}, Behavior: "allow", Destination: "localSettings"}}}
		}
		return agent.PermissionResponse{} // deny without a reason
	}}
	res, err := s.Turn(turnCtx(t), agent.Text("shapes"), h)
	require.NoError(t, err)
	r1, r2, _ := strings.Cut(res.Text, "\n")
	assert.JSONEq(t, `{"subtype":"success","request_id":"s1","response":{"behavior":"allow","updatedInput":{"file_path":"/tmp/x","content":"y"},
		"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Write"}],"behavior":"allow","destination":"session"}]}}`, r1)
	assert.JSONEq(t, `{"subtype":"success","request_id":"s2","response":{"behavior":"deny","message":"The user denied this request.","interrupt":false}}`, r2)
	require.Len(t, got, 2)
	assert.Equal(t, "toolu_s1", got[0].ToolUseID)
	assert.JSONEq(t, `{"file_path":"/tmp/x","content":"y"}`, string(got[0].Input))
	assert.Equal(t, []agent.PermissionUpdate{{Type: "addRules", Rules: []agent.Rule{{ToolName: "Write"}}, Behavior: "allow", Destination: "localSettings"}}, got[0].Suggestions)
}

func TestInterruptEndsTheTurn(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	h := &handler{}
	type out struct {
		res agent.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := s.Turn(turnCtx(t), agent.Text("wait"), h)
		done <- out{res, err}
	}()
	require.Eventually(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.texts) == 1 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, s.Interrupt(t.Context()))
	o := <-done
	require.NoError(t, o.err)
	assert.True(t, o.res.IsError)
	assert.Equal(t, "error_during_execution", o.res.Subtype)
	res, err := s.Turn(turnCtx(t), agent.Text("echo next"), &handler{})
	require.NoError(t, err)
	assert.Equal(t, "you said: next", res.Text)
}

func TestAbandonedTurnInterruptsAndKeepsTheSession(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	ctx, cancel := context.WithCancel(context.Background())
	h := &handler{}
	go func() {
		require.Eventually(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.texts) == 1 }, 10*time.Second, 5*time.Millisecond)
		cancel()
	}()
	_, err := s.Turn(ctx, agent.Text("wait"), h)
	require.ErrorIs(t, err, context.Canceled)
	res, err := s.Turn(turnCtx(t), agent.Text("echo next"), &handler{})
	require.NoError(t, err, "the interrupted turn's result was consumed; the session goes on")
	assert.Equal(t, "you said: next", res.Text)
}

func TestAbandonedTurnOfADeafCLIKillsIt(t *testing.T) {
	a, _ := fakeAgent(t, "normal", WithCloseTimeout(300*time.Millisecond))
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := s.Turn(ctx, agent.Text("deaf"), &handler{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a CLI that ignores interrupts is killed")
	}
}

func TestSetMode(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	require.NoError(t, s.SetMode(t.Context(), agent.ModeAcceptEdits))
	res, err := s.Turn(turnCtx(t), agent.Text("mode"), &handler{})
	require.NoError(t, err)
	assert.Equal(t, "mode=acceptEdits", res.Text)
	err = s.SetMode(t.Context(), "bogus")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Invalid permission mode: bogus")
}

func TestCloseAfterEOF(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	require.NoError(t, s.Close(t.Context()))
	<-s.Done()
	_, err := s.Turn(turnCtx(t), agent.Text("echo x"), &handler{})
	require.ErrorIs(t, err, agent.ErrSessionEnded)
	assert.Contains(t, err.Error(), "closed by leashd")
	assert.NotContains(t, err.Error(), "SIGTERM", "a CLI that exits on EOF is not signalled")
	require.NoError(t, s.Close(t.Context()), "Close twice is fine")
}

func TestCloseEscalates(t *testing.T) {
	t.Run("SIGTERM", func(t *testing.T) {
		// Long enough for a busy machine to run the fake's exit on SIGTERM.
		a, _ := fakeAgent(t, "term-exits", WithCloseTimeout(3*time.Second))
		s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
		require.NoError(t, s.Close(t.Context()))
		_, err := s.Turn(turnCtx(t), agent.Text("echo x"), &handler{})
		assert.ErrorIs(t, err, agent.ErrSessionEnded)
		assert.Contains(t, err.Error(), "SIGTERM")
	})
	t.Run("SIGKILL", func(t *testing.T) {
		a, _ := fakeAgent(t, "ignore-term", WithCloseTimeout(200*time.Millisecond))
		s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
		err := s.Close(t.Context())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "killed")
		<-s.Done()
	})
	t.Run("ctx done kills at once", func(t *testing.T) {
		a, _ := fakeAgent(t, "ignore-term", WithCloseTimeout(time.Hour))
		s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := s.Close(ctx)
		require.Error(t, err)
		assert.Less(t, time.Since(start), 30*time.Second)
		<-s.Done()
	})
}

func TestCloseWaitsForTheRunningTurn(t *testing.T) {
	a, _ := fakeAgent(t, "normal", WithCloseTimeout(5*time.Second))
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	h := &handler{}
	done := make(chan error, 1)
	go func() {
		_, err := s.Turn(turnCtx(t), agent.Text("wait"), h)
		done <- err
	}()
	require.Eventually(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.texts) == 1 }, 10*time.Second, 5*time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	time.Sleep(100 * time.Millisecond)
	select {
	case <-s.Done():
		t.Fatal("Close closed stdin while the turn ran")
	default:
	}
	require.NoError(t, s.Interrupt(t.Context()))
	require.NoError(t, <-done)
	require.NoError(t, <-closed)
}

func TestConcurrentTurnsAreSerialised(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	var wg sync.WaitGroup
	results := make([]string, 8)
	for i := range results {
		wg.Go(func() {
			res, err := s.Turn(turnCtx(t), agent.Text("echo "+strings.Repeat("x", i+1)), &handler{})
			if assert.NoError(t, err) {
				results[i] = res.Text
			}
		})
	}
	wg.Wait()
	for i, r := range results {
		assert.Equal(t, "you said: "+strings.Repeat("x", i+1), r)
	}
}

func TestErrSessionEndedWrapping(t *testing.T) {
	// A session whose process is gone says so through errors.Is.
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	require.NoError(t, s.Close(t.Context()))
	_, err := s.Turn(turnCtx(t), agent.Text("echo x"), &handler{})
	assert.True(t, errors.Is(err, agent.ErrSessionEnded))
}

func TestWithdrawalsRacingAnswers(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	var mu sync.Mutex
	waiting, withdrawn := 0, 0
	h := &handler{decide: func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		var n int
		if _, err := fmt.Sscanf(req.ToolUseID, "toolu_r%d", &n); err == nil && n%2 == 1 {
			mu.Lock()
			waiting++
			mu.Unlock()
			<-ctx.Done() // a person who had not answered yet
			mu.Lock()
			if errors.Is(context.Cause(ctx), ErrRequestWithdrawn) {
				withdrawn++
			}
			mu.Unlock()
		}
		return agent.PermissionResponse{Allow: true} // even ones answer at once, racing the withdrawal
	}}
	res, err := s.Turn(turnCtx(t), agent.Text("race"), h)
	require.NoError(t, err)
	assert.Contains(t, res.Text, `"request_id":"final"`)
	assert.Contains(t, res.Text, `"behavior":"allow"`)
	// A request withdrawn before its goroutine ran is not asked at all;
	// one being asked learns it was withdrawn.
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return withdrawn == waiting }, 10*time.Second, 5*time.Millisecond)
	res, err = s.Turn(turnCtx(t), agent.Text("echo still fine"), &handler{})
	require.NoError(t, err)
	assert.Equal(t, "you said: still fine", res.Text)
}

func TestExitLeavingABackgroundProcess(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	res, err := s.Turn(turnCtx(t), agent.Text("orphan"), &handler{})
	require.NoError(t, err)
	pid, err := strconv.Atoi(res.Text)
	require.NoError(t, err, res.Text)
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done did not close while a background process held stdout")
	}
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 10*time.Millisecond,
		"the tool process the CLI left behind was ended with it")
}

// alive reports whether pid runs (a zombie waiting to be reaped does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func TestUnwritableCLIEndsTheSession(t *testing.T) {
	a, _ := fakeAgent(t, "close-stdin")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	time.Sleep(200 * time.Millisecond) // it closes its stdin just after the handshake
	_, err := s.Turn(turnCtx(t), agent.Text("echo anyone there?"), &handler{})
	require.Error(t, err)
	assert.ErrorIs(t, err, agent.ErrSessionEnded)
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a CLI that cannot be written to is ended")
	}
	assert.Contains(t, err.Error(), "writing to claude failed")
}

func TestPartialText(t *testing.T) {
	a, _ := fakeAgent(t, "normal", WithPartialText(true))
	assert.Contains(t, a.argsFor(agent.SessionOptions{}), "--include-partial-messages")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	h := &handler{}
	_, err := s.Turn(turnCtx(t), agent.Text("partial"), h)
	require.NoError(t, err)
	assert.Equal(t, []string{"Hel", "lo", "not streamed"}, h.texts,
		"deltas as they come; a streamed message is not repeated; a message that was not streamed still arrives")
}

// The new can_use_tool fields reach the engine, and how the person decided
// goes back as decisionClassification (only the values the CLI accepts).
func TestNewPermissionFieldsAndClassification(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	var got []agent.PermissionRequest
	var mu sync.Mutex
	h := &handler{decide: func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		switch req.ToolUseID {
		case "toolu_f1":
			return agent.PermissionResponse{Allow: true, Classification: agent.ClassUserTemporary}
		case "toolu_f2":
			return agent.PermissionResponse{Message: "no", Classification: agent.ClassUserReject}
		}
		return agent.PermissionResponse{Allow: true, Classification: "config"} // not a value for the CLI
	}}
	res, err := s.Turn(turnCtx(t), agent.Text("fields"), h)
	require.NoError(t, err)
	rs := strings.Split(res.Text, "\n")
	require.Len(t, rs, 3, res.Text)
	assert.JSONEq(t, `{"subtype":"success","request_id":"f1","response":{"behavior":"allow","updatedInput":{"title":"x"},"decisionClassification":"user_temporary"}}`, rs[0])
	assert.JSONEq(t, `{"subtype":"success","request_id":"f2","response":{"behavior":"deny","message":"no","interrupt":false,"decisionClassification":"user_reject"}}`, rs[1])
	assert.JSONEq(t, `{"subtype":"success","request_id":"f3","response":{"behavior":"allow","updatedInput":{"command":"ls"}}}`, rs[2])
	require.Len(t, got, 3)
	assert.Equal(t, agent.PermissionRequest{
		ToolName: "mcp__github__create_issue", Input: got[0].Input, ToolUseID: "toolu_f1",
		Reason: "Creates a public issue", BlockedPath: "/etc/hosts", MCPServer: "github", MCPSource: "user",
		DefaultToNo: true, NoSessionAllow: true, RequiresDetails: true,
		AskRule: "mcp__github__create_issue from userSettings",
	}, got[0])
	assert.Equal(t, "(unreadable rule)", got[1].AskRule, "a rule of another shape still forces a person")
	assert.Empty(t, got[1].MCPServer)
	assert.Empty(t, got[2].AskRule)
	assert.False(t, got[2].DefaultToNo || got[2].NoSessionAllow || got[2].RequiresDetails)
}

// elicitHandler is a handler that can also put MCP elicitations to a
// person.
type elicitHandler struct {
	handler
	elicit func(ctx context.Context, req agent.ElicitationRequest) agent.ElicitationResponse
}

func (h *elicitHandler) Elicit(ctx context.Context, req agent.ElicitationRequest) agent.ElicitationResponse {
	return h.elicit(ctx, req)
}

// Elicitations reach the handler as the CLI sent them and are answered
// {action, content}; one the CLI withdrew gets no answer and its context
// says so; a handler that cannot ask gets cancel (never a hang).
func TestElicitationRoundTrip(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	var got []agent.ElicitationRequest
	var mu sync.Mutex
	withdrawn := make(chan error, 1)
	h := &elicitHandler{elicit: func(ctx context.Context, req agent.ElicitationRequest) agent.ElicitationResponse {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		switch req.Server {
		case "deployer":
			return agent.ElicitationResponse{Action: agent.ElicitAccept, Content: map[string]any{"env": "prd"}}
		case "auth":
			return agent.ElicitationResponse{Action: agent.ElicitDecline}
		}
		<-ctx.Done()
		withdrawn <- context.Cause(ctx)
		return agent.ElicitationResponse{Action: agent.ElicitAccept}
	}}
	res, err := s.Turn(turnCtx(t), agent.Text("elicit"), h)
	require.NoError(t, err)
	rs := strings.Split(res.Text, "\n")
	require.Len(t, rs, 3, res.Text)
	assert.JSONEq(t, `{"subtype":"success","request_id":"e1","response":{"action":"accept","content":{"env":"prd"}}}`, rs[0])
	assert.JSONEq(t, `{"subtype":"success","request_id":"e2","response":{"action":"decline"}}`, rs[1])
	assert.Equal(t, "none", rs[2], "a withdrawn elicitation is not answered")
	assert.ErrorIs(t, <-withdrawn, agent.ErrRequestWithdrawn)
	require.Len(t, got, 3)
	assert.Equal(t, "Configure", got[0].Message)
	assert.Equal(t, []string{"env"}, got[0].PropertyOrder)
	assert.JSONEq(t, `{"type":"object","properties":{"env":{"type":"string","enum":["stg","prd"]}}}`, string(got[0].Schema))
	assert.Empty(t, got[0].URL)
	assert.Equal(t, "https://auth.example/x", got[1].URL)

	// A handler without Elicit: every elicitation is cancelled at once.
	res, err = s.Turn(turnCtx(t), agent.Text("elicit"), &handler{})
	require.NoError(t, err)
	rs = strings.Split(res.Text, "\n")
	require.Len(t, rs, 3, res.Text)
	assert.JSONEq(t, `{"subtype":"success","request_id":"e1","response":{"action":"cancel"}}`, rs[0])
	assert.JSONEq(t, `{"subtype":"success","request_id":"e2","response":{"action":"cancel"}}`, rs[1])
}

// With session_state_changed, the turn ends at "idle", not at its result:
// a background agent's permission request between the two is put to the
// turn's handler (not denied for want of a turn), and its text streams.
func TestTurnEndsAtIdle(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	asked := make(chan string, 1)
	h := &handler{decide: func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		asked <- req.ToolUseID
		return agent.PermissionResponse{Allow: true}
	}}
	res, err := s.Turn(turnCtx(t), agent.Text("background"), h)
	require.NoError(t, err)
	assert.Equal(t, "main done", res.Text)
	select {
	case id := <-asked:
		assert.Equal(t, "toolu_bg1", id)
	default:
		t.Fatal("the background agent's request was not put to the turn")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Len(t, h.texts, 1)
	assert.Contains(t, h.texts[0], `"behavior":"allow"`)
}

// Auto-denials, a conversation reset and lost writes (even after the
// result) reach the session's notice callback as text for people; the
// reset's session ID is the one to resume.
func TestNoticesFromTheCLI(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	notices := make(chan agent.Notice, 4)
	s := openFake(t, a, agent.SessionOptions{ChatID: "c", Notice: func(n agent.Notice) { notices <- n }})
	_, err := s.Turn(turnCtx(t), agent.Text("notices"), &handler{})
	require.NoError(t, err)
	var got []agent.Notice
	for len(got) < 3 {
		select {
		case n := <-notices:
			got = append(got, n)
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d notices: %+v", len(got), got)
		}
	}
	assert.Equal(t, []agent.Notice{
		{Kind: agent.NoticeDenied, Text: "Claude Code denied Bash without asking: Bash(rm:*) is denied by your settings: Permission to use Bash has been denied."},
		{Kind: agent.NoticeReset, Text: "The agent started a fresh conversation (after /clear): it no longer remembers the messages above."},
		{Kind: agent.NoticeWritesLost, Text: "Claude Code could not save the session transcript (the disk is full); resuming this session may miss part of the conversation."},
	}, got)
	assert.Equal(t, "fake-session-2", s.ID(), "the reset conversation is the one to resume")
}

// A request_user_dialog (sent only for kinds a host declared, and leashd
// declares none) is left unanswered as the CLI requires — never
// "cancelled", which would settle it — while other unknown requests still
// get an error.
func TestUndeclaredUserDialogIsNotAnswered(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	res, err := s.Turn(turnCtx(t), agent.Text("dialog"), &handler{})
	require.NoError(t, err)
	assert.Equal(t, "responses=d2", res.Text)
}

// Claude Code's requires_user_interaction and matched_ask_rule reach the
// engine on the PermissionRequest.
func TestPermissionRequestCarriesAskSignals(t *testing.T) {
	a, _ := fakeAgent(t, "normal")
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	var mu sync.Mutex
	var got [][2]bool
	h := &handler{decide: func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		mu.Lock()
		got = append(got, [2]bool{req.RequiresDetails, req.AskRule != ""})
		mu.Unlock()
		return agent.PermissionResponse{Allow: true, UpdatedInput: req.Input}
	}}
	res, err := s.Turn(turnCtx(t), agent.Text("signals"), h)
	require.NoError(t, err)
	assert.Equal(t, "signals done", res.Text)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, [][2]bool{{true, false}, {false, true}, {false, false}}, got)
}
