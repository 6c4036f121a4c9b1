package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/mcpserver"
	"github.com/leashd/leashd/interactions"
)

// connect runs the server for chat "c" over in-memory transports, asking
// through coord, and returns a client session.
func connect(t *testing.T, coord *interactions.Coordinator) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, coord, mcpserver.Options{WorkDir: t.TempDir(), PermissionResult: claude.PermissionResult})
}

// connectWith is connect with the server's options.
func connectWith(t *testing.T, coord *interactions.Coordinator, o mcpserver.Options) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	s := mcpserver.New(coord, "c", o)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ss, err := s.Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// newCoord returns a coordinator whose presenter reports what it shows.
func newCoord(opts ...interactions.Opt) (*interactions.Coordinator, <-chan interactions.Interaction) {
	shown := make(chan interactions.Interaction, 16)
	opts = append(opts, interactions.WithPresenter(interactions.PresenterFunc(func(_ context.Context, it *interactions.Interaction) (string, error) {
		shown <- *it
		return "ref", nil
	})))
	return interactions.New(opts...), shown
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

type result struct {
	text    string
	isError bool
}

func callAsync(t *testing.T, cs *mcp.ClientSession, tool string, args any) <-chan result {
	out := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			out <- result{text: "protocol error: " + err.Error(), isError: true}
			return
		}
		out <- result{res.Content[0].(*mcp.TextContent).Text, res.IsError}
	}()
	return out
}

func next(t *testing.T, shown <-chan interactions.Interaction) interactions.Interaction {
	t.Helper()
	select {
	case it := <-shown:
		return it
	case <-time.After(10 * time.Second):
		t.Fatal("nothing was shown")
		return interactions.Interaction{}
	}
}

// ask_user asks its questions one at a time, each shown with its position;
// a multi-select is answered with several labels; the result has one line
// per question.
func TestAskUserMultiSelect(t *testing.T) {
	coord, shown := newCoord()
	cs := connect(t, coord)
	out := callAsync(t, cs, mcpserver.ToolAskUser, map[string]any{"questions": []map[string]any{
		{"question": "Which database?", "header": "DB", "options": []map[string]string{{"label": "Postgres"}, {"label": "SQLite"}}},
		{"question": "Which features?", "header": "Features", "multiSelect": true,
			"options": []map[string]string{{"label": "Auth"}, {"label": "Search"}, {"label": "Billing"}}},
	}})
	q1 := next(t, shown)
	assert.Equal(t, "Which database?", q1.Question)
	assert.Equal(t, "c", q1.ChatID)
	assert.Equal(t, engine.AskerMCP, q1.Asker, "asked by a program: an answer after a restart never reaches an agent")
	assert.Equal(t, 1, q1.Index)
	assert.Equal(t, 2, q1.Total)
	_, err := coord.Reply(q1.ID, interactions.Reply{Answers: []string{"SQLite"}})
	require.NoError(t, err)
	q2 := next(t, shown)
	assert.True(t, q2.MultiSelect)
	for _, l := range []string{"Billing", "Auth"} {
		_, err := coord.Toggle(q2.ID, l, interactions.Reply{})
		require.NoError(t, err)
	}
	require.NoError(t, coord.Confirm(q2.ID, interactions.Reply{}))
	r := <-out
	assert.False(t, r.isError, r.text)
	assert.Equal(t, `"Which database?"="SQLite"`+"\n"+`"Which features?"="Auth, Billing"`, r.text)
}

// An unanswered ask_user is a tool error saying so; bad input names the
// field without asking anyone.
func TestAskUserNotAnsweredAndBadInput(t *testing.T) {
	coord, shown := newCoord(interactions.WithTimeout(time.Second))
	cs := connect(t, coord)
	text, isErr := call(t, cs, mcpserver.ToolAskUser, map[string]any{"questions": []map[string]any{{"question": "Name?"}}})
	assert.True(t, isErr)
	assert.Equal(t, "The user did not answer (expired): No answer came within 1s; the user did not respond.", text)
	next(t, shown)

	for _, c := range []struct {
		args any
		want string
	}{
		{map[string]any{}, "ask_user: questions: 0 given; ask 1 to 4"},
		{map[string]any{"questions": []map[string]any{{"question": " "}}}, "ask_user: questions[0].question: missing"},
		{map[string]any{"questions": []map[string]any{{"question": "q", "multiSelect": true}}}, "ask_user: questions[0].multiSelect: needs options"},
		{map[string]any{"questions": []map[string]any{{"question": "q", "options": []map[string]string{{"label": "a"}, {"label": "a"}}}}}, `ask_user: questions[0].options[1].label: "a" is given twice`},
		{map[string]any{"questions": "all of them"}, "ask_user: invalid arguments"},
	} {
		text, isErr := call(t, cs, mcpserver.ToolAskUser, c.args)
		assert.True(t, isErr, text)
		assert.Contains(t, text, c.want)
	}
	select {
	case it := <-shown:
		t.Fatalf("bad input was asked: %+v", it)
	default:
	}
}

// request_approval: the first option approves; the second, or typed text,
// denies with a reason.
func TestRequestApproval(t *testing.T) {
	coord, shown := newCoord()
	cs := connect(t, coord)
	for _, c := range []struct {
		reply interactions.Reply
		want  string
	}{
		{interactions.Reply{Answers: []string{mcpserver.Approve}}, "approved"},
		{interactions.Reply{Answers: []string{mcpserver.Deny}}, "denied: the user chose Deny"},
		{interactions.Reply{Text: "not before the release"}, "denied: not before the release"},
		{interactions.Reply{Reject: true, Text: "no"}, "denied: no"},
	} {
		out := callAsync(t, cs, mcpserver.ToolRequestApproval, map[string]string{"action": "Run the migration", "details": "ALTER TABLE users"})
		it := next(t, shown)
		assert.Equal(t, "Run the migration\n\nALTER TABLE users", it.Question)
		assert.Equal(t, interactions.AnswerApproval, it.AnswerMode())
		// Shown as an approval card: approve and deny styled, as every
		// door's yes/no approval is (issue #31).
		require.Len(t, it.Options, 2)
		assert.Equal(t, []interactions.Style{interactions.StyleApprove, interactions.StyleDeny}, []interactions.Style{it.Options[0].Style, it.Options[1].Style})
		_, err := coord.Reply(it.ID, c.reply)
		require.NoError(t, err)
		r := <-out
		assert.False(t, r.isError)
		assert.Equal(t, c.want, r.text)
	}
	text, isErr := call(t, cs, mcpserver.ToolRequestApproval, map[string]string{"details": "x"})
	assert.True(t, isErr)
	assert.Equal(t, "request_approval: action: missing: what you want to do", text)
}

// permission_prompt follows Claude Code's --permission-prompt-tool
// contract: a tool approval allows with the input, or denies with the
// reason; AskUserQuestion becomes questions and is allowed with the answers
// attached; ExitPlanMode is a plan review.
func TestPermissionPrompt(t *testing.T) {
	coord, shown := newCoord()
	cs := connect(t, coord)
	decide := func(args map[string]any, reply func(interactions.Interaction)) map[string]any {
		t.Helper()
		out := callAsync(t, cs, mcpserver.ToolPermissionPrompt, args)
		reply(next(t, shown))
		r := <-out
		require.False(t, r.isError, r.text)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.text), &m), r.text)
		return m
	}
	bash := map[string]any{"tool_name": "Bash", "input": map[string]any{"command": "rm -rf build"}, "tool_use_id": "toolu_1"}
	m := decide(bash, func(it interactions.Interaction) {
		assert.Equal(t, interactions.KindToolApproval, it.Kind)
		assert.Equal(t, "rm -rf build", it.ToolSummary)
		_, err := coord.Reply(it.ID, interactions.Reply{Answers: []string{interactions.DecisionAllow}})
		require.NoError(t, err)
	})
	assert.Equal(t, map[string]any{"behavior": "allow", "decisionClassification": "user_temporary", "updatedInput": map[string]any{"command": "rm -rf build"}}, m)

	m = decide(bash, func(it interactions.Interaction) {
		_, err := coord.Reply(it.ID, interactions.Reply{Text: "use make clean"})
		require.NoError(t, err)
	})
	assert.Equal(t, "deny", m["behavior"])
	assert.Equal(t, "use make clean", m["message"])

	q := map[string]any{"tool_name": "AskUserQuestion", "tool_use_id": "toolu_2", "input": map[string]any{"questions": []map[string]any{
		{"question": "Which database?", "header": "DB", "options": []map[string]string{{"label": "Postgres"}, {"label": "SQLite"}}, "multiSelect": false}}}}
	m = decide(q, func(it interactions.Interaction) {
		assert.Equal(t, interactions.KindQuestion, it.Kind)
		_, err := coord.Reply(it.ID, interactions.Reply{Answers: []string{"Postgres"}})
		require.NoError(t, err)
	})
	assert.Equal(t, "allow", m["behavior"])
	assert.Equal(t, map[string]any{"Which database?": "Postgres"}, m["updatedInput"].(map[string]any)["answers"])

	plan := map[string]any{"tool_name": "ExitPlanMode", "tool_use_id": "toolu_3", "input": map[string]any{"plan": "# Plan\n1. migrate"}}
	m = decide(plan, func(it interactions.Interaction) {
		assert.Equal(t, interactions.KindPlanReview, it.Kind)
		assert.Equal(t, "# Plan\n1. migrate", it.Plan)
		_, err := coord.Reply(it.ID, interactions.Reply{Answers: []string{interactions.DecisionEdit}})
		require.NoError(t, err)
	})
	assert.Equal(t, "allow", m["behavior"])
	assert.Equal(t, []any{map[string]any{"type": "setMode", "mode": "acceptEdits", "destination": "session"}}, m["updatedPermissions"])
	m = decide(plan, func(it interactions.Interaction) {
		_, err := coord.Reply(it.ID, interactions.Reply{Answers: []string{interactions.DecisionAdjust}, Text: "add tests"})
		require.NoError(t, err)
	})
	assert.Equal(t, map[string]any{"behavior": "deny", "decisionClassification": "user_reject", "message": "add tests", "interrupt": false}, m)

	text, isErr := call(t, cs, mcpserver.ToolPermissionPrompt, map[string]any{"tool_name": "Bash", "input": "rm"})
	assert.True(t, isErr)
	assert.Equal(t, "permission_prompt: input: must be the tool's input object", text)
}

// ask_user is held to the same limits as the HTTP API: eleven options are
// refused with what is accepted, and nothing is shown in the chat.
func TestAskUserHeldToProgramLimits(t *testing.T) {
	coord, shown := newCoord()
	cs := connect(t, coord)
	var opts []map[string]string
	for i := range 11 {
		opts = append(opts, map[string]string{"label": fmt.Sprintf("option %d", i)})
	}
	out, isErr := call(t, cs, mcpserver.ToolAskUser, map[string]any{"questions": []map[string]any{{"question": "Which?", "options": opts}}})
	assert.True(t, isErr)
	assert.Contains(t, out, "options: 11 options; at most 10")
	select {
	case it := <-shown:
		t.Fatalf("shown anyway: %+v", it)
	default:
	}
}
