package claude_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

var twoQuestions = map[string]any{
	"questions": []map[string]any{
		{"question": "Which database?", "header": "Database", "multiSelect": false,
			"options": []map[string]string{{"label": "Postgres", "description": "a server"}, {"label": "SQLite", "description": "a file"}}},
		{"question": "Which features?", "header": "Features", "multiSelect": true,
			"options": []map[string]string{{"label": "Auth", "description": "log in"}, {"label": "Search", "description": "find things"}, {"label": "Billing", "description": "take money"}}},
	},
}

func TestE2EPromptStreamsTextAndSummary(t *testing.T) {
	s := newStack(t)
	s.api.Reply(fakeapi.Text("Hello from the fake model"))
	assert.Equal(t, connectors.RouteAgent, s.send(t, "say hello"))
	sum := s.conn.WaitDone(t, 1)
	assert.Equal(t, "Hello from the fake model", sum.Result)
	assert.False(t, sum.IsError)
	assert.Equal(t, 1, sum.NumTurns)
	s.conn.Lock()
	assert.Equal(t, []string{"Hello from the fake model"}, enginetest.Texts(s.conn.Streamed))
	s.conn.Unlock()
	calls := s.api.Calls()
	require.Len(t, calls, 1)
	assert.True(t, calls[0].HasUserText("say hello"))
}

// With WithPartialText (as leashd runs), the chat gets the text in pieces
// as the model writes it, each piece once, and the summary the whole.
func TestE2EPartialTextStreamsToTheChat(t *testing.T) {
	s, _ := newAgentStack(t, []claude.Option{claude.WithPartialText(true)}, nil)
	s.api.Reply(fakeapi.Reply{Text: "Looking at the files first.", Tools: []fakeapi.ToolUse{{Name: "Bash", Input: map[string]string{"command": "ls"}}}},
		fakeapi.Text("Hello from the fake model"))
	s.send(t, "say hello")
	sum := s.conn.WaitDone(t, 1)
	assert.Equal(t, "Hello from the fake model", sum.Result)
	assert.Equal(t, []string{"ran 1 command"}, sum.Tools, "what the agent did, in plain words")
	s.conn.Lock()
	defer s.conn.Unlock()
	// the fake API streams each text block in three deltas: each reaches
	// the chat as it comes, once (not again as the finished block)
	assert.Len(t, s.conn.Streamed, 6, "%q", s.conn.Streamed)
	assert.Equal(t, "Looking at the files first.Hello from the fake model", strings.Join(enginetest.Texts(s.conn.Streamed), ""))
}

func TestE2EAskUserQuestionByTapsAndTypedText(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(t *testing.T, s *stack)
		want   string
	}{
		{"taps", func(t *testing.T, s *stack) {
			q1 := s.conn.WaitShown(t, 1)
			assert.Equal(t, "Which database?", q1.Question)
			s.tap(t, q1.ID, "SQLite")
			q2 := s.conn.WaitShown(t, 2)
			assert.Equal(t, "Which features?", q2.Question)
			assert.True(t, q2.MultiSelect)
			_, err := s.e.Toggle(t.Context(), q2.ID, "Search", reply("u1"))
			require.NoError(t, err)
			_, err = s.e.Toggle(t.Context(), q2.ID, "Auth", reply("u1"))
			require.NoError(t, err)
			require.NoError(t, s.e.Confirm(t.Context(), q2.ID, reply("u1")))
		}, `"Which database?"="SQLite", "Which features?"="Auth, Search"`},
		{"typed", func(t *testing.T, s *stack) {
			s.conn.WaitShown(t, 1)
			assert.Equal(t, connectors.RouteInteraction, s.send(t, "DuckDB, embedded"))
			s.conn.WaitShown(t, 2)
			assert.Equal(t, connectors.RouteInteraction, s.send(t, "none of these"))
		}, `"Which database?"="DuckDB, embedded", "Which features?"="none of these"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t)
			s.api.Reply(fakeapi.Tool("AskUserQuestion", twoQuestions), fakeapi.Text("Thanks, noted."))
			s.send(t, "ask me things")
			tc.answer(t, s)
			sum := s.conn.WaitDone(t, 1)
			assert.Equal(t, "Thanks, noted.", sum.Result)
			calls := s.api.Calls()
			require.Len(t, calls, 2)
			toolID := calls[0].Reply.Tools[0].ID
			res, ok := calls[1].ToolResult(toolID)
			require.True(t, ok, "the second model call carries the tool_result")
			assert.False(t, res.IsError)
			assert.Contains(t, res.ResultText(), tc.want)
			t.Logf("tool_result the model read: %s", res.ResultText())
			assert.Equal(t, 0, s.api.Unscripted())
		})
	}
}
