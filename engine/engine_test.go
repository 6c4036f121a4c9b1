package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

var twoQuestions = mustJSON(map[string]any{
	"questions": []map[string]any{
		{"question": "Which database?", "header": "Database", "multiSelect": false,
			"options": []map[string]string{{"label": "Postgres", "description": "server"}, {"label": "SQLite", "description": "file"}}},
		{"question": "Which features?", "header": "Features", "multiSelect": true,
			"options": []map[string]string{{"label": "Auth"}, {"label": "Search"}, {"label": "Billing"}}},
	},
	"extra": "kept",
})

func TestPromptStreamsTextAndSummary(t *testing.T) {
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		h.Text("Hello ")
		h.ToolUse("Bash", mustJSON(map[string]string{"command": "ls"}))
		h.ToolUse("Bash", mustJSON(map[string]string{"command": "pwd"}))
		h.ToolUse("Read", mustJSON(map[string]string{"file_path": "a"}))
		h.Text("world")
		return agent.Result{Text: "Hello world", CostUSD: 0.0123, NumTurns: 2}, nil
	}}
	e, conn, _ := start(t, ag, nil)
	assert.Equal(t, connectors.RouteAgent, send(t, e, "c1", "hi there"))
	conn.WaitFor(t, "summary", func() bool { return len(conn.Summaries) == 1 })
	assert.Equal(t, []string{"hi there"}, ag.Prompts())
	conn.Lock()
	defer conn.Unlock()
	assert.Equal(t, []string{"c1|Hello ", "c1|world"}, conn.Streamed)
	assert.Equal(t, "Done · ran 2 commands, read 1 file · $0.0123 · 2 steps", conn.Summaries[0].Line())
	assert.Equal(t, "Hello world", conn.Summaries[0].Result)
}

func TestAskUserQuestionByTapAndTypedText(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		got <- h.Permission(ctx, agent.PermissionRequest{ToolName: "AskUserQuestion", Input: twoQuestions})
		return agent.Result{Text: "ok"}, nil
	}}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "ask me")

	q1 := conn.WaitShown(t, 1)
	assert.Equal(t, "Which database?", q1.Question)
	assert.Equal(t, 1, q1.Index)
	assert.Equal(t, 2, q1.Total)
	out, err := e.Reply(context.Background(), q1.ID, interactions.Reply{By: "u1", Answers: []string{"SQLite"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)

	q2 := conn.WaitShown(t, 2)
	assert.Equal(t, "Which features?", q2.Question)
	assert.True(t, q2.MultiSelect)
	assert.Equal(t, connectors.RouteInteraction, send(t, e, "c1", "Auth and a bit of Billing"))
	conn.WaitSaid(t, "Response received.")

	resp := <-got
	require.True(t, resp.Allow)
	var in map[string]any
	require.NoError(t, json.Unmarshal(resp.UpdatedInput, &in))
	assert.Equal(t, map[string]any{"Which database?": "SQLite", "Which features?": "Auth and a bit of Billing"}, in["answers"])
	assert.Equal(t, "kept", in["extra"], "the agent's own input fields are kept")
	assert.Len(t, in["questions"], 2)
}

func TestAskUserQuestionMalformedInputIsDeniedWithReason(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		got <- h.Permission(ctx, agent.PermissionRequest{ToolName: "AskUserQuestion", Input: json.RawMessage(`{"questions":"nope"}`)})
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "go")
	resp := <-got
	assert.False(t, resp.Allow)
	assert.Contains(t, resp.Message, "could not read the AskUserQuestion input")
	conn.WaitSaid(t, "could not read")
}

func planTurn(got chan<- agent.PermissionResponse) *enginetest.ScriptAgent {
	return &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if strings.HasPrefix(prompt, "Implement the following plan") {
			return agent.Result{Text: "implemented"}, nil
		}
		got <- h.Permission(ctx, agent.PermissionRequest{ToolName: "ExitPlanMode", Input: mustJSON(map[string]string{"plan": "# Plan\n- step"})})
		return waitOrDone(ctx, s)
	}}
}

// waitOrDone ends a turn at once unless the engine interrupts it first.
func waitOrDone(ctx context.Context, s *enginetest.ScriptSession) (agent.Result, error) {
	select {
	case <-s.Interrupted():
		return agent.Result{Subtype: "error_during_execution", IsError: true}, nil
	case <-time.After(50 * time.Millisecond):
		return agent.Result{Text: "after plan"}, nil
	}
}

func TestPlanReviewDecisions(t *testing.T) {
	for _, tc := range []struct {
		decision string
		mode     agent.Mode
	}{
		{interactions.DecisionEdit, agent.ModeAcceptEdits},
		{interactions.DecisionDefault, agent.ModeDefault},
	} {
		t.Run(tc.decision, func(t *testing.T) {
			got := make(chan agent.PermissionResponse, 1)
			e, conn, _ := start(t, planTurn(got), nil, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModePlan })
			send(t, e, "c1", "plan it")
			it := conn.WaitShown(t, 1)
			assert.Equal(t, interactions.KindPlanReview, it.Kind)
			assert.Equal(t, "# Plan\n- step", it.Plan)
			_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{tc.decision}})
			require.NoError(t, err)
			resp := <-got
			require.True(t, resp.Allow)
			require.Len(t, resp.UpdatedPermissions, 1)
			assert.Equal(t, agent.PermissionUpdate{Type: "setMode", Mode: tc.mode, Destination: "session"}, resp.UpdatedPermissions[0])
			conn.WaitSaid(t, "Mode: "+string(tc.mode))
			send(t, e, "c1", "/status")
			conn.WaitSaid(t, "Mode: "+string(tc.mode)+"\n")
		})
	}
}

func TestPlanReviewAdjustInTwoSteps(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	e, conn, coord := start(t, planTurn(got), nil, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModePlan })
	send(t, e, "c1", "plan it")
	it := conn.WaitShown(t, 1)
	out, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{"adjust"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.AwaitingFeedback, out)
	assert.Len(t, coord.Pending("c1"), 1, "still pending until the feedback arrives")
	assert.Equal(t, connectors.RouteInteraction, send(t, e, "c1", "Use SQLite instead"))
	resp := <-got
	assert.False(t, resp.Allow)
	assert.Equal(t, "Use SQLite instead", resp.Message)
}

func TestPlanReviewCleanEditStartsFreshSessionWithPlan(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	ag := planTurn(got)
	e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModePlan })
	send(t, e, "c1", "plan it")
	it := conn.WaitShown(t, 1)
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{"clean_edit"}})
	require.NoError(t, err)
	// The old session must not act on the approval (out of plan mode it
	// could edit before the interrupt reaches it): it is stopped, and its
	// driver waits for the stop before answering.
	old := <-got
	assert.False(t, old.Allow)
	assert.True(t, old.Interrupt)
	assert.True(t, old.StopFollows, "the driver waits for the interrupt")
	assert.Contains(t, old.Message, "continues in a fresh session")
	conn.WaitFor(t, "the plan implemented", func() bool { return len(conn.Summaries) == 1 })
	opened := ag.Opened()
	require.Len(t, opened, 2)
	assert.Equal(t, agent.ModePlan, opened[0].Mode)
	assert.Equal(t, "", opened[1].ResumeID, "a fresh session, not a resume")
	assert.Equal(t, agent.ModeAcceptEdits, opened[1].Mode)
	prompts := ag.Prompts()
	require.Len(t, prompts, 2)
	assert.Equal(t, "Implement the following plan, which the user has approved:\n\n# Plan\n- step", prompts[1])
	assert.Contains(t, conn.SaidText(), "Starting a fresh session")
	assert.Equal(t, "implemented", conn.Summaries[0].Result)
}

func bashReq(cmd string) agent.PermissionRequest {
	return agent.PermissionRequest{ToolName: "Bash", Input: mustJSON(map[string]string{"command": cmd})}
}

func TestToolApproval(t *testing.T) {
	results := make(chan agent.PermissionResponse, 4)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		for _, cmd := range strings.Split(prompt, ";") {
			results <- h.Permission(ctx, bashReq(cmd))
		}
		return agent.Result{}, nil
	}, EngineRules: true}
	e, conn, _ := start(t, ag, nil)

	// allow
	send(t, e, "c1", "rm a")
	it := conn.WaitShown(t, 1)
	assert.Equal(t, interactions.KindToolApproval, it.Kind)
	assert.Equal(t, "Bash", it.ToolName)
	assert.Equal(t, "rm a", it.ToolSummary)
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{"allow"}})
	require.NoError(t, err)
	r := <-results
	assert.True(t, r.Allow)
	assert.JSONEq(t, `{"command":"rm a"}`, string(r.UpdatedInput))
	assert.Empty(t, r.UpdatedPermissions)

	// allow for the session: the same command is not asked again
	send(t, e, "c1", "npm test;npm test")
	it = conn.WaitShown(t, 2)
	_, err = e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{"allow_session"}})
	require.NoError(t, err)
	r = <-results
	assert.True(t, r.Allow)
	assert.Equal(t, []agent.PermissionUpdate{{Type: "addRules", Rules: []agent.Rule{{ToolName: "Bash", RuleContent: "npm test"}}, Behavior: "allow", Destination: "session"}}, r.UpdatedPermissions)
	r = <-results
	assert.True(t, r.Allow, "second identical call allowed")
	conn.WaitFor(t, "two summaries", func() bool { return len(conn.Summaries) == 2 })
	assert.Len(t, conn.Shown, 2, "the second call was not asked")

	// deny with a typed reason
	send(t, e, "c1", "rm -rf /")
	conn.WaitShown(t, 3)
	assert.Equal(t, connectors.RouteInteraction, send(t, e, "c1", "never do that"))
	r = <-results
	assert.False(t, r.Allow)
	assert.Equal(t, "never do that", r.Message)
}

func TestAllowSessionUsesAgentSuggestionWithSessionDestination(t *testing.T) {
	results := make(chan agent.PermissionResponse, 1)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		req := bashReq("npm test --watch")
		req.Suggestions = []agent.PermissionUpdate{{Type: "addRules", Rules: []agent.Rule{{ToolName: "Bash", RuleContent: "npm test:*"}}, Behavior: "allow", Destination: "localSettings"}}
		results <- h.Permission(ctx, req)
		results <- h.Permission(ctx, bashReq("npm test -- foo"))
		return agent.Result{}, nil
	}, EngineRules: true}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "go")
	it := conn.WaitShown(t, 1)
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{"allow_session"}})
	require.NoError(t, err)
	r := <-results
	require.Len(t, r.UpdatedPermissions, 1)
	assert.Equal(t, "session", r.UpdatedPermissions[0].Destination, "never write settings files")
	assert.Equal(t, []agent.Rule{{ToolName: "Bash", RuleContent: "npm test:*"}}, r.UpdatedPermissions[0].Rules)
	assert.True(t, (<-results).Allow)
	assert.Len(t, conn.Shown, 1)
}

func TestAcceptEditsAllowsEditsWithoutAsking(t *testing.T) {
	results := make(chan agent.PermissionResponse, 2)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		results <- h.Permission(ctx, agent.PermissionRequest{ToolName: "Write", Input: mustJSON(map[string]string{"file_path": "a.go", "content": "x"})})
		results <- h.Permission(ctx, bashReq("rm a.go"))
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModeAcceptEdits })
	send(t, e, "c1", "go")
	assert.True(t, (<-results).Allow)
	it := conn.WaitShown(t, 1)
	assert.Equal(t, "Bash", it.ToolName, "only the command asks")
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Reject: true})
	require.NoError(t, err)
	assert.False(t, (<-results).Allow)
}

func TestMessageWhileBusyIsQueuedAsNextTurn(t *testing.T) {
	release := make(chan struct{})
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if prompt == "first" {
			<-release
		}
		return agent.Result{Text: "did " + prompt}, nil
	}}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "first")
	conn.WaitFor(t, "first turn running", func() bool { return len(ag.Prompts()) == 1 })
	assert.Equal(t, connectors.RouteAgent, send(t, e, "c1", "second"))
	conn.WaitSaid(t, "queued and will be sent as the next turn (1st in the queue)")
	close(release)
	conn.WaitFor(t, "both turns", func() bool { return len(conn.Summaries) == 2 })
	assert.Equal(t, []string{"first", "second"}, ag.Prompts())
	assert.Equal(t, "did second", conn.Summaries[1].Result)
}

func TestCommands(t *testing.T) {
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = "/srv/proj" })
	assert.Equal(t, connectors.RouteCommand, send(t, e, "c1", "/frobnicate now"))
	conn.WaitSaid(t, "c1|Unknown command /frobnicate — try /help")
	send(t, e, "c1", "/start")
	conn.WaitSaid(t, "Your user ID is u1.")
	send(t, e, "c1", "/help@leashd_bot")
	conn.WaitSaid(t, "/clear — Cancel everything")
	send(t, e, "c1", "/status")
	conn.WaitSaid(t, "Working directory: /srv/proj")
	assert.Contains(t, conn.SaidText(), "Mode: default\n")
	assert.Contains(t, conn.SaidText(), "Pending: nothing")
	send(t, e, "c1", "/plan")
	conn.WaitSaid(t, "Mode: plan — ")
	send(t, e, "c1", "/stop")
	conn.WaitSaid(t, "Nothing is running.")
	assert.Empty(t, ag.Prompts(), "no command reached the agent")
}

func TestModeCommandWithTextRunsPromptInThatMode(t *testing.T) {
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "/plan design a cache")
	conn.WaitFor(t, "turn", func() bool { return len(conn.Summaries) == 1 })
	assert.Equal(t, []string{"design a cache"}, ag.Prompts())
	assert.Equal(t, agent.ModePlan, ag.Opened()[0].Mode)
}

func TestClearDuringPendingQuestion(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if prompt == "ask" {
			got <- h.Permission(ctx, agent.PermissionRequest{ToolName: "AskUserQuestion", Input: twoQuestions})
			<-ctx.Done()
			return agent.Result{}, ctx.Err()
		}
		return agent.Result{Text: "fresh"}, nil
	}}
	e, conn, coord := start(t, ag, nil)
	send(t, e, "c1", "ask")
	it := conn.WaitShown(t, 1)
	send(t, e, "c1", "/clear")
	resp := <-got
	assert.False(t, resp.Allow)
	assert.Equal(t, "Cancelled by /clear.", resp.Message)
	conn.WaitSaid(t, "Cleared.")
	conn.WaitFor(t, "cancelled update", func() bool {
		for _, u := range conn.Updates {
			if u.Interaction.ID == it.ID && u.Resolution.Status == interactions.StatusCancelled && u.Ref == "msg-"+it.ID {
				return true
			}
		}
		return false
	})
	assert.Empty(t, coord.Pending("c1"))
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{"SQLite"}})
	assert.ErrorIs(t, err, interactions.ErrNotPending, "a stale tap is an error, never text")

	send(t, e, "c1", "again")
	conn.WaitFor(t, "fresh turn", func() bool { return len(conn.Summaries) == 1 })
	opened := ag.Opened()
	require.Len(t, opened, 2)
	assert.Equal(t, "", opened[1].ResumeID, "/clear starts a fresh session")
}

func TestStopDuringPendingQuestionInterruptsTurn(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		go func() {
			got <- h.Permission(ctx, agent.PermissionRequest{ToolName: "AskUserQuestion", Input: twoQuestions})
		}()
		return enginetest.WaitInterrupt(ctx, s)
	}}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "ask")
	conn.WaitShown(t, 1)
	send(t, e, "c1", "/stop")
	conn.WaitSaid(t, "Stopped. 1 pending request(s) cancelled.")
	resp := <-got
	assert.Equal(t, "Cancelled by /stop.", resp.Message)
	conn.WaitFor(t, "turn ended", func() bool { return len(conn.Summaries) == 1 })
	assert.True(t, conn.Summaries[0].IsError)
}

func TestAgentDyingMidQuestionTellsChatAndCancels(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if prompt != "ask" {
			return agent.Result{Text: "back"}, nil
		}
		pctx, cancel := context.WithCancel(ctx)
		go func() {
			got <- h.Permission(pctx, agent.PermissionRequest{ToolName: "AskUserQuestion", Input: twoQuestions})
		}()
		time.Sleep(20 * time.Millisecond)
		cancel() // the process died: the driver cancels in-flight requests
		_ = s.Close(ctx)
		return agent.Result{}, fmt.Errorf("%w: exit status 137", agent.ErrSessionEnded)
	}}
	e, conn, coord := start(t, ag, nil)
	send(t, e, "c1", "ask")
	conn.WaitSaid(t, "The agent stopped unexpectedly: agent session ended: exit status 137")
	assert.False(t, (<-got).Allow)
	assert.Empty(t, coord.Pending("c1"))
	send(t, e, "c1", "continue")
	conn.WaitFor(t, "next turn", func() bool { return len(conn.Summaries) == 1 })
	opened := ag.Opened()
	require.Len(t, opened, 2)
	assert.Equal(t, "sess-1", opened[1].ResumeID, "the next message resumes the conversation")
}

func TestInteractionTimeoutTellsAgent(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		got <- h.Permission(ctx, bashReq("rm x"))
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, []interactions.Opt{interactions.WithTimeout(30 * time.Millisecond)})
	send(t, e, "c1", "go")
	resp := <-got
	assert.False(t, resp.Allow)
	assert.Contains(t, resp.Message, "No answer came within 30ms")
	conn.WaitFor(t, "expired update", func() bool {
		return len(conn.Updates) > 0 && conn.Updates[0].Resolution.Status == interactions.StatusExpired
	})
}

func TestConcurrencyLimitQueuesChatsAndTellsPosition(t *testing.T) {
	release := make(chan struct{})
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if prompt == "long" {
			<-release
		}
		return agent.Result{Text: prompt}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = 1 })
	send(t, e, "a", "long")
	conn.WaitFor(t, "a running", func() bool { return len(ag.Prompts()) == 1 })
	send(t, e, "b", "short")
	conn.WaitSaid(t, "b|All 1 agent slots are busy; you are number 1 in the queue.")
	assert.Equal(t, 1, e.SessionsActive())
	close(release)
	conn.WaitFor(t, "both done", func() bool { return len(conn.Summaries) == 2 })
	assert.Equal(t, []string{"long", "short"}, ag.Prompts())
	assert.Equal(t, 1, e.SessionsActive(), "a's idle session was closed to make room")
	assert.True(t, ag.Sessions()[0].Closed())
}

func TestIdleSessionClosedAndResumed(t *testing.T) {
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.IdleTimeout = 20 * time.Millisecond })
	send(t, e, "c1", "one")
	conn.WaitFor(t, "idle close", func() bool {
		live := ag.Sessions()
		return len(live) == 1 && live[0].Closed()
	})
	// the slot is freed once Close has returned
	require.Eventually(t, func() bool { return e.SessionsActive() == 0 }, 5*time.Second, time.Millisecond)
	send(t, e, "c1", "two")
	conn.WaitFor(t, "second turn", func() bool { return len(conn.Summaries) == 2 })
	opened := ag.Opened()
	require.Len(t, opened, 2)
	assert.Equal(t, "sess-1", opened[1].ResumeID)
}

func TestTurnTimeoutDoesNotCountHumanWait(t *testing.T) {
	results := make(chan agent.PermissionResponse, 1)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if prompt == "spin" {
			return enginetest.WaitInterrupt(ctx, s)
		}
		results <- h.Permission(ctx, bashReq("rm x"))
		return agent.Result{Text: "finished"}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.TurnTimeout = 150 * time.Millisecond })
	send(t, e, "c1", "ask")
	it := conn.WaitShown(t, 1)
	time.Sleep(400 * time.Millisecond) // a slow human: longer than the turn limit
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{"allow"}})
	require.NoError(t, err)
	assert.True(t, (<-results).Allow)
	conn.WaitFor(t, "done", func() bool { return len(conn.Summaries) == 1 })
	assert.Equal(t, "finished", conn.Summaries[0].Result)
	assert.NotContains(t, conn.SaidText(), "took longer than")

	send(t, e, "c1", "spin")
	conn.WaitSaid(t, "The turn took longer than 150ms (not counting time waiting for you); stopping it.")
	conn.WaitFor(t, "spin ended", func() bool { return len(conn.Summaries) == 2 })
}

func TestUnauthorizedTypedAnswerIsRefusedAndKept(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		got <- h.Permission(ctx, bashReq("rm x"))
		return agent.Result{}, nil
	}}
	e, conn, coord := start(t, ag, nil)
	send(t, e, "c1", "go")
	conn.WaitShown(t, 1)
	route, err := e.HandleMessage(context.Background(), connectors.Incoming{ChatID: "c1", UserID: "stranger", Text: "no",
		Authorize: func(interactions.Interaction) error { return errors.New("only approvers decide tools") }})
	assert.Equal(t, connectors.RouteInteraction, route)
	assert.ErrorIs(t, err, interactions.ErrUnauthorized)
	conn.WaitSaid(t, "only approvers decide tools")
	assert.Len(t, coord.Pending("c1"), 1, "still pending")
	send(t, e, "c1", "no way")
	assert.Equal(t, "no way", (<-got).Message)
}

func TestShutdownInterruptsPendingAndClosesSessions(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		got <- h.Permission(ctx, bashReq("rm x"))
		return agent.Result{}, nil
	}}
	coord := interactions.New()
	e := enginetest.New(ag, coord)
	conn := enginetest.NewConn("web")
	e.AddConnector(conn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	send(t, e, "c1", "go")
	it := conn.WaitShown(t, 1)
	cancel()
	require.NoError(t, <-done)
	resp := <-got
	assert.False(t, resp.Allow)
	assert.True(t, resp.Interrupt)
	assert.Contains(t, resp.Message, "leashd is restarting")
	conn.Lock()
	var res interactions.Resolution
	for _, u := range conn.Updates {
		if u.Interaction.ID == it.ID {
			res = u.Resolution
		}
	}
	conn.Unlock()
	assert.Equal(t, interactions.StatusInterrupted, res.Status, "the chat was told before Run returned")
	assert.Equal(t, "leashd restarted — tap again to send this answer to the agent", res.Text, "the buttons keep working: the message says so")
	assert.True(t, ag.Sessions()[0].Closed())
}

// fakeRecovery is an in-memory engine.Store that recovers what a crash left.
type fakeRecovery struct {
	engine.Store // sessions, notices: in memory
	mu           sync.Mutex
	done         map[string]interactions.Resolution
	left         []engine.Interrupted // what a crash left pending, returned once
}

func (f *fakeRecovery) Interrupt(context.Context) ([]engine.Interrupted, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	left := f.left
	f.left = nil
	return left, nil
}
func (f *fakeRecovery) Recovered(_ context.Context, id string, res interactions.Resolution) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dup := f.done[id]; dup {
		return false, nil
	}
	f.done[id] = res
	return true, nil
}

// waitRestored waits until the engine's start-up has registered id again.
func waitRestored(t *testing.T, e *engine.Engine, id string) interactions.Interaction {
	t.Helper()
	var it interactions.Interaction
	require.Eventually(t, func() bool {
		var ok bool
		it, ok = e.Interaction(id)
		return ok
	}, 10*time.Second, time.Millisecond, "%s not pending again after the restart", id)
	return it
}

func TestTapAfterRestartIsSentToAgent(t *testing.T) {
	q := interactions.Interaction{ID: "old1", ChatID: "c1", Kind: interactions.KindQuestion,
		Question: "Which database?", Options: []interactions.Choice{{Label: "Postgres"}, {Label: "SQLite"}}}
	rec := &fakeRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{}, left: []engine.Interrupted{{Ref: "msg-old1", Interaction: q}}}
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(d *engine.Deps, _ *engine.Config) { d.Store = rec })
	waitRestored(t, e, "old1")
	_, err := e.Reply(context.Background(), "old1", interactions.Reply{By: "u1", Answers: []string{"MySQL"}})
	assert.ErrorIs(t, err, interactions.ErrInvalidReply, "answers are checked like live ones")
	out, err := e.Reply(context.Background(), "old1", interactions.Reply{By: "u1", Answers: []string{"SQLite"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
	conn.WaitFor(t, "turn", func() bool { return len(conn.Summaries) == 1 })
	prompts := ag.Prompts()
	require.Len(t, prompts, 1)
	assert.Equal(t, agent.RecoveredPromptPrefix+"\nBefore leashd restarted you asked: \"Which database?\" (options: Postgres, SQLite).\nThe user answered: \"SQLite\". Continue with that answer.", prompts[0])
	conn.WaitFor(t, "the old message shows the answer", func() bool {
		for _, u := range conn.Updates {
			if u.Resolution.Status == interactions.StatusAnswered && u.Ref == "msg-old1" {
				return true
			}
		}
		return false
	})
	rec.mu.Lock()
	assert.Equal(t, "SQLite", rec.done["old1"].Answer, "recorded once")
	rec.mu.Unlock()
	_, err = e.Reply(context.Background(), "old1", interactions.Reply{By: "u1", Answers: []string{"SQLite"}})
	assert.ErrorIs(t, err, interactions.ErrNotPending, "a duplicate tap is not sent twice")
	_, err = e.Reply(context.Background(), "nope", interactions.Reply{By: "u1", Answers: []string{"SQLite"}})
	assert.ErrorIs(t, err, interactions.ErrNotFound)
	assert.Len(t, ag.Prompts(), 1)
}

// A multi-select left pending by a crash is pending again with its
// journaled selection: toggle and Done work as before the restart (never a
// single tap answering it), a tap from another chat is refused, and the
// agent receives every checked option.
func TestMultiSelectAfterRestart(t *testing.T) {
	q := interactions.Interaction{ID: "ms1", ChatID: "c1", Kind: interactions.KindQuestion, MultiSelect: true,
		Question: "Which checks?", Options: []interactions.Choice{{Label: "lint"}, {Label: "test"}, {Label: "vet"}}}
	rec := &fakeRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{},
		left: []engine.Interrupted{{Ref: "msg-ms1", Interaction: q, Selected: []string{"lint"}}}}
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(d *engine.Deps, _ *engine.Config) { d.Store = rec })
	waitRestored(t, e, "ms1")
	fromChat := func(chat string) func(interactions.Interaction) error {
		return func(it interactions.Interaction) error {
			if it.ChatID != chat {
				return errors.New("this button belongs to another chat")
			}
			return nil
		}
	}
	ctx := context.Background()
	_, err := e.Toggle(ctx, "ms1", "vet", interactions.Reply{By: "u1", Authorize: fromChat("c2")})
	assert.ErrorIs(t, err, interactions.ErrUnauthorized, "a tap from another chat")
	assert.ErrorIs(t, e.Confirm(ctx, "ms1", interactions.Reply{By: "u1", Authorize: fromChat("c2")}), interactions.ErrUnauthorized)
	sel, err := e.Toggle(ctx, "ms1", "vet", interactions.Reply{By: "u1", Authorize: fromChat("c1")})
	require.NoError(t, err)
	assert.Equal(t, []string{"lint", "vet"}, sel, "the journaled selection plus this toggle")
	assert.Empty(t, ag.Prompts(), "a toggle answers nothing")
	require.NoError(t, e.Confirm(ctx, "ms1", interactions.Reply{By: "u1", Authorize: fromChat("c1")}))
	conn.WaitFor(t, "turn", func() bool { return len(conn.Summaries) == 1 })
	require.Len(t, ag.Prompts(), 1)
	assert.Contains(t, ag.Prompts()[0], `The user answered: "lint, vet"`)
}

// /clear cancels a restored interaction like a live one, and how it ended
// is recorded so the next start does not bring it back; nothing reaches the
// agent as an answer.
func TestClearCancelsARestoredInteraction(t *testing.T) {
	q := interactions.Interaction{ID: "old3", ChatID: "c1", Kind: interactions.KindQuestion, Question: "Which port?",
		Options: []interactions.Choice{{Label: "80"}, {Label: "8080"}}}
	rec := &fakeRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{}, left: []engine.Interrupted{{Ref: "msg-old3", Interaction: q}}}
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e, _, _ := start(t, ag, nil, func(d *engine.Deps, _ *engine.Config) { d.Store = rec })
	waitRestored(t, e, "old3")
	send(t, e, "c1", "/clear")
	require.Eventually(t, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return rec.done["old3"].Status == interactions.StatusCancelled
	}, 10*time.Second, time.Millisecond, "the cancellation is recorded")
	_, pending := e.Interaction("old3")
	assert.False(t, pending)
	assert.Empty(t, ag.Prompts())
}

func TestStartMarksInteractionsACrashLeftPending(t *testing.T) {
	q := interactions.Interaction{ID: "old2", ChatID: "c1", Kind: interactions.KindQuestion, Question: "Which port?",
		Options: []interactions.Choice{{Label: "80"}, {Label: "8080"}}}
	rec := &fakeRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{},
		left: []engine.Interrupted{{Ref: "msg-old2", Interaction: q}}}
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(d *engine.Deps, _ *engine.Config) { d.Store = rec })
	conn.WaitFor(t, "the old message edited", func() bool { return len(conn.Updates) == 1 })
	conn.Lock()
	ev := conn.Updates[0]
	conn.Unlock()
	assert.Equal(t, "msg-old2", ev.Ref)
	assert.Equal(t, interactions.StatusInterrupted, ev.Resolution.Status)
	assert.Equal(t, interactions.InterruptedNotice, ev.Resolution.Text)
	out, err := e.Reply(context.Background(), "old2", interactions.Reply{By: "u1", Answers: []string{"8080"}})
	require.NoError(t, err, "its buttons keep working")
	assert.Equal(t, interactions.Resolved, out)
	conn.WaitFor(t, "turn", func() bool { return len(conn.Summaries) == 1 })
	require.Len(t, ag.Prompts(), 1)
	assert.Contains(t, ag.Prompts()[0], `The user answered: "8080"`)
}

// A person who rejects a request outright may say why (the page's reject
// with text, the terminal's /reject): the agent reads that it was a
// rejection and the reason, not the reason alone as if it were feedback.
func TestRejectionWithAReasonTellsTheAgentBoth(t *testing.T) {
	results := make(chan agent.PermissionResponse, 2)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		results <- h.Permission(ctx, bashReq(prompt))
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil)

	send(t, e, "c1", "rm -rf build")
	it := conn.WaitShown(t, 1)
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Reject: true, Text: "not on a Friday"})
	require.NoError(t, err)
	r := <-results
	assert.False(t, r.Allow)
	assert.Equal(t, "The user rejected this request: not on a Friday", r.Message)

	send(t, e, "c1", "rm -rf dist")
	it = conn.WaitShown(t, 2)
	_, err = e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Reject: true})
	require.NoError(t, err)
	r = <-results
	assert.Equal(t, "The user rejected this request.", r.Message)
}
