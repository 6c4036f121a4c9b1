package claude_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine/claude/fakeapi"
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
	sum := s.conn.waitDone(t, 1)
	assert.Equal(t, "Hello from the fake model", sum.Result)
	assert.False(t, sum.IsError)
	assert.Equal(t, 1, sum.NumTurns)
	s.conn.mu.Lock()
	assert.Equal(t, []string{"Hello from the fake model"}, s.conn.stream)
	s.conn.mu.Unlock()
	calls := s.api.Calls()
	require.Len(t, calls, 1)
	assert.True(t, calls[0].HasUserText("say hello"))
}

func TestE2EAskUserQuestionByTapsAndTypedText(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(t *testing.T, s *stack)
		want   string
	}{
		{"taps", func(t *testing.T, s *stack) {
			q1 := s.conn.waitShown(t, 1)
			assert.Equal(t, "Which database?", q1.Question)
			s.tap(t, q1.ID, "SQLite")
			q2 := s.conn.waitShown(t, 2)
			assert.Equal(t, "Which features?", q2.Question)
			assert.True(t, q2.MultiSelect)
			_, err := s.e.Toggle(t.Context(), q2.ID, "Search", reply("u1"))
			require.NoError(t, err)
			_, err = s.e.Toggle(t.Context(), q2.ID, "Auth", reply("u1"))
			require.NoError(t, err)
			require.NoError(t, s.e.Confirm(t.Context(), q2.ID, reply("u1")))
		}, `"Which database?"="SQLite", "Which features?"="Auth, Search"`},
		{"typed", func(t *testing.T, s *stack) {
			s.conn.waitShown(t, 1)
			assert.Equal(t, connectors.RouteInteraction, s.send(t, "DuckDB, embedded"))
			s.conn.waitShown(t, 2)
			assert.Equal(t, connectors.RouteInteraction, s.send(t, "none of these"))
		}, `"Which database?"="DuckDB, embedded", "Which features?"="none of these"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t)
			s.api.Reply(fakeapi.Tool("AskUserQuestion", twoQuestions), fakeapi.Text("Thanks, noted."))
			s.send(t, "ask me things")
			tc.answer(t, s)
			sum := s.conn.waitDone(t, 1)
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

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
