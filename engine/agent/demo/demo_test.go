package demo_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent/demo"
)

// handler records a turn and answers permissions with decide.
type handler struct {
	decide func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse

	mu    sync.Mutex
	text  strings.Builder
	tools []string
	reqs  []agent.PermissionRequest
}

func (h *handler) Text(s string) { h.mu.Lock(); h.text.WriteString(s); h.mu.Unlock() }
func (h *handler) ToolUse(name string, _ json.RawMessage) {
	h.mu.Lock()
	h.tools = append(h.tools, name)
	h.mu.Unlock()
}
func (h *handler) Permission(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	h.mu.Lock()
	h.reqs = append(h.reqs, req)
	h.mu.Unlock()
	if h.decide == nil {
		return agent.PermissionResponse{Message: "no"}
	}
	return h.decide(ctx, req)
}
func (h *handler) said() string { h.mu.Lock(); defer h.mu.Unlock(); return h.text.String() }

func open(t *testing.T, mode agent.Mode) agent.Session {
	t.Helper()
	s, err := demo.New(demo.WithDelay(0)).Open(context.Background(), agent.SessionOptions{ChatID: "c", Mode: mode, WorkDir: "/w"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func allowWith(req agent.PermissionRequest, input json.RawMessage, ups ...agent.PermissionUpdate) agent.PermissionResponse {
	if input == nil {
		input = req.Input
	}
	return agent.PermissionResponse{Allow: true, UpdatedInput: input, UpdatedPermissions: ups}
}

// A prompt of several lines is echoed with its line breaks, as the person
// wrote it: never a literal "\n" (Go's %q) in what people read.
func TestEchoKeepsLineBreaks(t *testing.T) {
	s := open(t, agent.ModeDefault)
	h := &handler{}
	_, err := s.Turn(context.Background(), agent.Text("first line\nsecond \"line\""), h)
	require.NoError(t, err)
	assert.Contains(t, h.said(), "You said: \"first line\nsecond \"line\"\". I am the demo agent")
	assert.NotContains(t, h.said(), `\n`)
	assert.NotContains(t, h.said(), `\"`)
}

func TestEchoHintsTheWords(t *testing.T) {
	s := open(t, agent.ModeDefault)
	h := &handler{}
	res, err := s.Turn(context.Background(), agent.Text("hello there"), h)
	require.NoError(t, err)
	assert.Contains(t, h.said(), `You said: "hello there"`)
	for _, w := range []string{"question", "plan", "bash", "edit"} {
		assert.Contains(t, h.said(), `"`+w+`"`)
	}
	assert.Equal(t, h.said(), res.Text, "the result is what was said")
	assert.Equal(t, agent.Result{Text: res.Text, SessionID: "demo-1", NumTurns: 1, Subtype: "success", DurationMS: res.DurationMS}, res)
	assert.Zero(t, res.CostUSD)
	assert.Empty(t, h.reqs)
}

func TestQuestionsReportAnswersLikeClaudeCode(t *testing.T) {
	s := open(t, agent.ModeDefault)
	h := &handler{decide: func(_ context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		var in map[string]any
		require.NoError(t, json.Unmarshal(req.Input, &in))
		in["answers"] = map[string]string{"Which database?": "SQLite", "Which features?": "Auth, Billing"}
		b, _ := json.Marshal(in)
		return allowWith(req, b)
	}}
	res, err := s.Turn(context.Background(), agent.Text("Ask me a Question!"), h)
	require.NoError(t, err)
	require.Len(t, h.reqs, 1)
	assert.Equal(t, agent.ToolAskUserQuestion, h.reqs[0].ToolName)
	assert.JSONEq(t, `{"questions":[
		{"question":"Which database?","header":"Database","multiSelect":false,"options":[
			{"label":"Postgres","description":"A server, for many users"},{"label":"SQLite","description":"A file, nothing to run"}]},
		{"question":"Which features?","header":"Features","multiSelect":true,"options":[
			{"label":"Auth","description":"Sign-in and sessions"},{"label":"Search","description":"Full-text search"},{"label":"Billing","description":"Plans and invoices"}]}]}`,
		string(h.reqs[0].Input))
	assert.Equal(t, `Thanks. Your answers: Which database? SQLite; Which features? Auth, Billing`, res.Text)
	assert.Equal(t, []string{agent.ToolAskUserQuestion}, h.tools)
	assert.Equal(t, 2, res.NumTurns)
}

func TestQuestionsDeclined(t *testing.T) {
	s := open(t, agent.ModeDefault)
	h := &handler{decide: func(context.Context, agent.PermissionRequest) agent.PermissionResponse {
		return agent.PermissionResponse{Message: "The user rejected this request."}
	}}
	res, err := s.Turn(context.Background(), agent.Text("question"), h)
	require.NoError(t, err)
	assert.Equal(t, "You did not answer my questions: The user rejected this request.", res.Text)
}

func TestPlanDecisions(t *testing.T) {
	cases := []struct {
		name   string
		resp   func(agent.PermissionRequest) agent.PermissionResponse
		report string
		mode   agent.Mode
	}{
		{"edit", func(r agent.PermissionRequest) agent.PermissionResponse {
			return allowWith(r, nil, agent.PermissionUpdate{Type: "setMode", Mode: agent.ModeAcceptEdits, Destination: "session"})
		}, "Going ahead with the plan. (The demo changes nothing; put \"edit\" or \"bash\" in a message to see what real work would ask.)", agent.ModeAcceptEdits},
		{"default", func(r agent.PermissionRequest) agent.PermissionResponse {
			return allowWith(r, nil, agent.PermissionUpdate{Type: "setMode", Mode: agent.ModeDefault, Destination: "session"})
		}, "Going ahead with the plan. (The demo changes nothing; put \"edit\" or \"bash\" in a message to see what real work would ask.)", agent.ModeDefault},
		{"clean", func(r agent.PermissionRequest) agent.PermissionResponse { return allowWith(r, nil) },
			"Interrupted by the user.", agent.ModeAcceptEdits}, // it waits, saying nothing, for the engine to stop the turn
		{"adjust", func(agent.PermissionRequest) agent.PermissionResponse {
			return agent.PermissionResponse{Message: "use tabs"}
		}, `Plan not approved, so I stay in plan mode. Your feedback: "use tabs"`, agent.ModePlan},
		{"rejected", func(agent.PermissionRequest) agent.PermissionResponse {
			return agent.PermissionResponse{Message: "The user rejected this request."}
		}, `Plan rejected ("The user rejected this request."), so I stop here and change nothing.`, agent.ModePlan},
		{"rejected with a reason", func(agent.PermissionRequest) agent.PermissionResponse {
			return agent.PermissionResponse{Message: "The user rejected this request: not now"}
		}, `Plan rejected ("The user rejected this request: not now"), so I stop here and change nothing.`, agent.ModePlan},
		{"expired", func(agent.PermissionRequest) agent.PermissionResponse {
			return agent.PermissionResponse{Message: "No answer came within 10m0s; the user did not respond."}
		}, `Plan review expired ("No answer came within 10m0s; the user did not respond."), so I stay in plan mode and change nothing.`, agent.ModePlan},
		{"cancelled", func(agent.PermissionRequest) agent.PermissionResponse {
			return agent.PermissionResponse{Message: "Cancelled by /clear."}
		}, `Plan review cancelled ("Cancelled by /clear."), so I stay in plan mode and change nothing.`, agent.ModePlan},
		{"interrupted", func(agent.PermissionRequest) agent.PermissionResponse {
			return agent.PermissionResponse{Message: "leashd is restarting.", Interrupt: true}
		}, `Plan review interrupted ("leashd is restarting."), so I stop here.`, agent.ModePlan},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, agent.ModePlan)
			h := &handler{decide: func(ctx context.Context, r agent.PermissionRequest) agent.PermissionResponse {
				if tc.name == "clean" { // the engine interrupts the turn after a clean approval
					go func() { _ = s.Interrupt(context.WithoutCancel(ctx)) }()
				}
				return tc.resp(r)
			}}
			res, err := s.Turn(context.Background(), agent.Text("make a plan"), h)
			require.NoError(t, err)
			require.Len(t, h.reqs, 1)
			assert.Equal(t, agent.ToolExitPlanMode, h.reqs[0].ToolName)
			var in struct{ Plan string }
			require.NoError(t, json.Unmarshal(h.reqs[0].Input, &in))
			assert.Equal(t, demo.Plan, in.Plan)
			assert.Contains(t, in.Plan, "# Plan")
			assert.Contains(t, in.Plan, "```bash\necho hello\n```")
			assert.Equal(t, tc.report, res.Text)
			assert.Equal(t, tc.mode, s.(*demo.Session).Mode())
		})
	}
}

func TestBashOutcomes(t *testing.T) {
	cases := []struct {
		name   string
		resp   func(agent.PermissionRequest) agent.PermissionResponse
		report string
	}{
		{"allow", func(r agent.PermissionRequest) agent.PermissionResponse { return allowWith(r, nil) },
			"Bash `echo hello` allowed. Output: hello"},
		{"session", func(r agent.PermissionRequest) agent.PermissionResponse {
			return allowWith(r, nil, agent.PermissionUpdate{Type: "addRules", Rules: []agent.Rule{{ToolName: "Bash", RuleContent: "echo hello"}}, Behavior: "allow", Destination: "session"})
		}, "Bash `echo hello` allowed for the session. Output: hello"},
		{"deny", func(agent.PermissionRequest) agent.PermissionResponse {
			return agent.PermissionResponse{Message: "not now"}
		}, "Bash `echo hello` denied: not now"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, agent.ModeDefault)
			h := &handler{decide: func(ctx context.Context, r agent.PermissionRequest) agent.PermissionResponse {
				if tc.name == "clean" { // the engine interrupts the turn after a clean approval
					go func() { _ = s.Interrupt(context.WithoutCancel(ctx)) }()
				}
				return tc.resp(r)
			}}
			res, err := s.Turn(context.Background(), agent.Text("please run bash"), h)
			require.NoError(t, err)
			require.Len(t, h.reqs, 1)
			assert.Equal(t, "Bash", h.reqs[0].ToolName)
			assert.JSONEq(t, `{"command":"echo hello","description":"Print hello"}`, string(h.reqs[0].Input))
			assert.Equal(t, tc.report, res.Text)
		})
	}
}

func TestEditAsksForWrite(t *testing.T) {
	s := open(t, agent.ModeDefault)
	h := &handler{decide: func(_ context.Context, r agent.PermissionRequest) agent.PermissionResponse {
		return allowWith(r, nil)
	}}
	res, err := s.Turn(context.Background(), agent.Text("edit the file"), h)
	require.NoError(t, err)
	require.Len(t, h.reqs, 1)
	assert.Equal(t, "Write", h.reqs[0].ToolName)
	assert.JSONEq(t, `{"file_path":"/w/hello.txt","content":"Hello from the leashd demo!\n"}`, string(h.reqs[0].Input))
	assert.Equal(t, "Write of /w/hello.txt allowed. (The demo writes nothing to disk.)", res.Text)
}

// In plan mode, a request to run something is planned first; the approval's
// mode then applies to what follows.
func TestPlanModePlansBeforeTools(t *testing.T) {
	s := open(t, agent.ModePlan)
	h := &handler{decide: func(_ context.Context, r agent.PermissionRequest) agent.PermissionResponse {
		if r.ToolName == agent.ToolExitPlanMode {
			return allowWith(r, nil, agent.PermissionUpdate{Type: "setMode", Mode: agent.ModeAcceptEdits, Destination: "session"})
		}
		return allowWith(r, nil)
	}}
	_, err := s.Turn(context.Background(), agent.Text("edit and bash"), h)
	require.NoError(t, err)
	var names []string
	for _, r := range h.reqs {
		names = append(names, r.ToolName)
	}
	assert.Equal(t, []string{agent.ToolExitPlanMode, "Write", "Bash"}, names)

	// Adjusted: nothing runs.
	s2 := open(t, agent.ModePlan)
	h2 := &handler{}
	res, err := s2.Turn(context.Background(), agent.Text("run bash"), h2)
	require.NoError(t, err)
	require.Len(t, h2.reqs, 1)
	assert.Equal(t, agent.ToolExitPlanMode, h2.reqs[0].ToolName)
	assert.Contains(t, res.Text, "Plan not approved")
}

// The engine's prompt after a clean approval makes the demo implement the
// plan: the Write and the Bash command.
func TestImplementsApprovedPlan(t *testing.T) {
	s := open(t, agent.ModeAcceptEdits)
	h := &handler{decide: func(_ context.Context, r agent.PermissionRequest) agent.PermissionResponse {
		return allowWith(r, nil)
	}}
	_, err := s.Turn(context.Background(), agent.Text("Implement the following plan, which the user has approved:\n\n"+demo.Plan), h)
	require.NoError(t, err)
	require.Len(t, h.reqs, 2)
	assert.Equal(t, "Write", h.reqs[0].ToolName)
	assert.Equal(t, "Bash", h.reqs[1].ToolName)
	assert.Contains(t, h.said(), "Working through the plan: writing hello.txt, then running `echo hello`.")
}

func TestInterruptWithdrawsPendingPermission(t *testing.T) {
	s := open(t, agent.ModeDefault)
	asked := make(chan struct{})
	withdrawn := make(chan struct{})
	h := &handler{decide: func(ctx context.Context, _ agent.PermissionRequest) agent.PermissionResponse {
		close(asked)
		<-ctx.Done()
		close(withdrawn)
		return agent.PermissionResponse{Message: "cancelled"}
	}}
	type out struct {
		res agent.Result
		err error
	}
	got := make(chan out, 1)
	go func() {
		res, err := s.Turn(context.Background(), agent.Text("bash"), h)
		got <- out{res, err}
	}()
	<-asked
	require.NoError(t, s.Interrupt(context.Background()))
	<-withdrawn
	o := <-got
	require.NoError(t, o.err)
	assert.True(t, o.res.IsError)
	assert.Equal(t, "error_during_execution", o.res.Subtype)
	assert.Equal(t, "Interrupted by the user.", o.res.Text)

	// The session is usable after an interrupt.
	h2 := &handler{}
	res, err := s.Turn(context.Background(), agent.Text("hi"), h2)
	require.NoError(t, err)
	assert.False(t, res.IsError)
}

func TestInterruptWhileStreaming(t *testing.T) {
	s, err := demo.New(demo.WithDelay(time.Hour)).Open(context.Background(), agent.SessionOptions{})
	require.NoError(t, err)
	h := &handler{}
	got := make(chan agent.Result, 1)
	go func() {
		res, _ := s.Turn(context.Background(), agent.Text("hello"), h)
		got <- res
	}()
	require.Eventually(t, func() bool { return h.said() != "" }, 5*time.Second, time.Millisecond)
	require.NoError(t, s.Interrupt(context.Background()))
	res := <-got
	assert.True(t, res.IsError)
	assert.Equal(t, `You said: "hello". `, h.said(), "streaming stopped at the interrupt: one chunk of three words")
}

func TestCloseEndsTurnAndSession(t *testing.T) {
	s, err := demo.New(demo.WithDelay(0)).Open(context.Background(), agent.SessionOptions{ResumeID: "old"})
	require.NoError(t, err)
	assert.Equal(t, "old", s.ID(), "resuming keeps the ID")
	asked := make(chan struct{})
	h := &handler{decide: func(ctx context.Context, _ agent.PermissionRequest) agent.PermissionResponse {
		close(asked)
		<-ctx.Done()
		return agent.PermissionResponse{}
	}}
	errc := make(chan error, 1)
	go func() { _, err := s.Turn(context.Background(), agent.Text("question"), h); errc <- err }()
	<-asked
	require.NoError(t, s.Close(context.Background()))
	require.ErrorIs(t, <-errc, agent.ErrSessionEnded)
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	require.NoError(t, s.Close(context.Background()), "closing twice is fine")
	_, err = s.Turn(context.Background(), agent.Text("hi"), &handler{})
	require.ErrorIs(t, err, agent.ErrSessionEnded)
	require.ErrorIs(t, s.SetMode(context.Background(), agent.ModePlan), agent.ErrSessionEnded)
}

func TestCallerContextEndsTurn(t *testing.T) {
	s := open(t, agent.ModeDefault)
	ctx, cancel := context.WithCancel(context.Background())
	h := &handler{decide: func(c context.Context, _ agent.PermissionRequest) agent.PermissionResponse {
		cancel()
		<-c.Done()
		return agent.PermissionResponse{}
	}}
	_, err := s.Turn(ctx, agent.Text("bash"), h)
	require.ErrorIs(t, err, context.Canceled)
}

func TestHelpNamesTheWords(t *testing.T) {
	help := demo.New().About().Help
	for _, w := range []string{"question", "plan", "bash", "edit"} {
		assert.Contains(t, help, w)
	}
	assert.Equal(t, "demo", demo.New().Name())
}

func TestSessionsGetDistinctIDs(t *testing.T) {
	a := demo.New()
	s1, err := a.Open(context.Background(), agent.SessionOptions{})
	require.NoError(t, err)
	s2, err := a.Open(context.Background(), agent.SessionOptions{})
	require.NoError(t, err)
	assert.NotEqual(t, s1.ID(), s2.ID())
	assert.Equal(t, agent.ModeDefault, s1.(*demo.Session).Mode())
}

// An answer given after a restart arrives as the engine's recovered prompt;
// the demo acknowledges it instead of reacting to the words in it.
func TestRecoveredAnswer(t *testing.T) {
	s := open(t, agent.ModeDefault)
	h := &handler{}
	prompt := agent.RecoveredPromptPrefix + "\nBefore leashd restarted you asked to use the tool Bash:\necho hello\nThe user allowed it. Run it again to continue."
	res, err := s.Turn(context.Background(), agent.Text(prompt), h)
	require.NoError(t, err)
	assert.Empty(t, h.reqs, "no tool is asked for")
	assert.Equal(t, "Got your answer from before leashd restarted: The user allowed it. Run it again to continue.", res.Text)
}

func TestPlanModePlansAnyPrompt(t *testing.T) {
	s := open(t, agent.ModePlan)
	h := &handler{decide: func(_ context.Context, r agent.PermissionRequest) agent.PermissionResponse {
		return allowWith(r, nil, agent.PermissionUpdate{Type: "setMode", Mode: agent.ModeDefault, Destination: "session"})
	}}
	res, err := s.Turn(context.Background(), agent.Text("add a greeting"), h)
	require.NoError(t, err)
	require.Len(t, h.reqs, 1)
	assert.Equal(t, agent.ToolExitPlanMode, h.reqs[0].ToolName)
	assert.Equal(t, "Going ahead with the plan. (The demo changes nothing; put \"edit\" or \"bash\" in a message to see what real work would ask.)", res.Text)
	assert.NotContains(t, h.said(), "You said", "no echo once planned")

	// Questions are still asked in plan mode, without a plan.
	h2 := &handler{}
	s2 := open(t, agent.ModePlan)
	_, err = s2.Turn(context.Background(), agent.Text("question"), h2)
	require.NoError(t, err)
	require.Len(t, h2.reqs, 1)
	assert.Equal(t, agent.ToolAskUserQuestion, h2.reqs[0].ToolName)
}
