package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/approval"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

func TestToolSummary(t *testing.T) {
	lines := func(n int, prefix string) string {
		var b []string
		for i := 1; i <= n; i++ {
			b = append(b, prefix+"line "+strconv.Itoa(i))
		}
		return strings.Join(b, "\n")
	}
	for _, tc := range []struct {
		name, tool, input, want string
	}{
		{"Bash as sent", "Bash", `{"command":"npm test && echo 'a|b' > out.txt"}`, "npm test && echo 'a|b' > out.txt"},
		{"Bash over lines, with its description", "Bash", `{"command":"for f in *.go; do\n  gofmt -l \"$f\"\ndone","description":"List unformatted files"}`,
			"for f in *.go; do\n  gofmt -l \"$f\"\ndone\n# List unformatted files"},
		{"Bash with markup in it", "Bash", `{"command":"echo '<b>&amp;</b>' | tee x.html"}`, "echo '<b>&amp;</b>' | tee x.html"},
		{"Write", "Write", `{"file_path":"/w/a.go","content":"package a\n\nfunc A() {}"}`, "/w/a.go\n+ package a\n+ \n+ func A() {}"},
		{"Write of an empty file", "Write", `{"file_path":"/w/empty.txt","content":""}`, "/w/empty.txt\n(empty file)"},
		{"Write cut after 20 lines", "Write", string(mustJSON(map[string]string{"file_path": "big.txt", "content": lines(25, "")})),
			"big.txt\n" + lines(20, "+ ") + "\n… (cut)"},
		{"Edit", "Edit", `{"file_path":"a.go","old_string":"x := 1\ny := 2","new_string":"x := 3"}`, "a.go\n- x := 1\n- y := 2\n+ x := 3"},
		{"Edit that inserts", "Edit", `{"file_path":"a.go","old_string":"","new_string":"// new"}`, "a.go\n+ // new"},
		{"Edit that deletes", "Edit", `{"file_path":"a.go","old_string":"// old","new_string":""}`, "a.go\n- // old"},
		{"MultiEdit", "MultiEdit", `{"file_path":"a.go","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c\nd","new_string":"e"}]}`,
			"a.go\n- a\n+ b\n- c\n- d\n+ e"},
		{"MultiEdit with junk edits", "MultiEdit", `{"file_path":"a.go","edits":[7,null,{"old_string":"a","new_string":"b"}]}`, "a.go\n- a\n+ b"},
		{"MultiEdit cut after 24 lines", "MultiEdit", string(mustJSON(map[string]any{"file_path": "a.go", "edits": []map[string]string{{"old_string": lines(30, ""), "new_string": "x"}}})),
			"a.go\n" + lines(23, "- ") + "\n… (cut)"},
		{"a line longer than 3000 characters", "Write", string(mustJSON(map[string]string{"file_path": "long.txt", "content": strings.Repeat("é", 4000)})),
			"long.txt\n+ " + strings.Repeat("é", 2998) + "\n… (cut)"}, // 3000 characters of excerpt, not bytes
		{"NotebookEdit", "NotebookEdit", `{"notebook_path":"n.ipynb","new_source":"print(1)"}`, "n.ipynb\n+ print(1)"},
		{"Read", "Read", `{"file_path":"/etc/hosts"}`, "/etc/hosts"},
		{"WebFetch", "WebFetch", `{"url":"https://example.com/a","prompt":"sum up"}`, "https://example.com/a"},
		{"another tool as JSON", "mcp__db__query", `{"sql":"select 1"}`, `{"sql":"select 1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, approval.ToolSummary(tc.tool, json.RawMessage(tc.input)))
		})
	}
}

// planFileAgent asks for review of a plan given only as a plan file (the
// plan argument empty), as newer CLIs may, its driver naming planDir as
// the agent's plan directory.
func planFileAgent(path, planDir string, got chan<- agent.PermissionResponse) *enginetest.ScriptAgent {
	return &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		got <- h.Permission(ctx, agent.PermissionRequest{ToolName: agent.ToolExitPlanMode, Input: mustJSON(map[string]string{"plan": " \n", "planFilePath": path}), PlanDir: planDir})
		return agent.Result{}, nil
	}}
}

func TestPlanReadFromPlanFileWhenPlanIsEmpty(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plan.md"), []byte("# Plan from the file\n- step"), 0o600))
	for _, path := range []string{"plan.md", filepath.Join(dir, "plan.md")} { // relative to the plan directory, and absolute
		t.Run(path, func(t *testing.T) {
			got := make(chan agent.PermissionResponse, 1)
			e, conn, _ := start(t, planFileAgent(path, dir, got), nil, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir }, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModePlan })
			send(t, e, "c1", "plan it")
			it := conn.WaitShown(t, 1)
			assert.Equal(t, "# Plan from the file\n- step", it.Plan)
			_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionDefault}})
			require.NoError(t, err)
			resp := <-got
			assert.True(t, resp.Allow)
			var in map[string]string
			require.NoError(t, json.Unmarshal(resp.UpdatedInput, &in))
			assert.Equal(t, path, in["planFilePath"], "the agent's input is sent back unchanged")
		})
	}
}

func TestPlanFileMissingIsToldToChatAndAgent(t *testing.T) {
	dir := t.TempDir()
	got := make(chan agent.PermissionResponse, 1)
	e, conn, _ := start(t, planFileAgent("gone.md", dir, got), nil, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir }, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModePlan })
	send(t, e, "c1", "plan it")
	resp := <-got
	assert.False(t, resp.Allow)
	assert.Equal(t, "leashd could not read the plan file (gone.md: no such plan file); call ExitPlanMode again with the whole plan in \"plan\".", resp.Message)
	conn.WaitSaid(t, "c1|The agent's plan file could not be read (gone.md: no such plan file); it was told to send the plan as text.")
	conn.Lock()
	assert.Empty(t, conn.Shown, "nothing to review was shown")
	conn.Unlock()
}

func TestPlanFileOversizedIsShownCutWithANote(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.md")
	const limit = 256 << 10
	body := "# Big plan\n" + strings.Repeat("ü", limit) // 2 bytes each: the cut falls inside a rune
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	got := make(chan agent.PermissionResponse, 1)
	e, conn, _ := start(t, planFileAgent(path, dir, got), nil, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir }, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModePlan })
	send(t, e, "c1", "plan it")
	it := conn.WaitShown(t, 1)
	note := "\n\n… (plan cut at 256 KiB for display; the full plan is in " + path + ")"
	require.True(t, strings.HasSuffix(it.Plan, note), "the plan says it was cut and where the rest is: %q", it.Plan[len(it.Plan)-200:])
	shown := strings.TrimSuffix(it.Plan, note)
	assert.True(t, strings.HasPrefix(body, shown), "the start of the plan, unchanged")
	assert.LessOrEqual(t, len(it.Plan), limit, "the note included")
	assert.Greater(t, len(it.Plan), limit-4, "cut only to keep whole characters")
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Reject: true})
	require.NoError(t, err)
	assert.False(t, (<-got).Allow)
}

// TestInlinePlanOversizedIsShownCutWithANote: a plan of megabytes in the
// ExitPlanMode input is shown cut like an oversized plan file (not as
// hundreds of chat messages), with a "… truncated (N bytes)" note.
func TestInlinePlanOversizedIsShownCutWithANote(t *testing.T) {
	const limit = 256 << 10
	plan := "# Huge plan\n" + strings.Repeat("ü", 2<<20) // 4 MiB
	got := make(chan agent.PermissionResponse, 1)
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		got <- h.Permission(ctx, agent.PermissionRequest{ToolName: agent.ToolExitPlanMode, Input: mustJSON(map[string]string{"plan": plan})})
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.DefaultMode = agent.ModePlan })
	send(t, e, "c1", "plan it")
	it := conn.WaitShown(t, 1)
	shown, note, ok := strings.Cut(it.Plan, "\n\n… truncated (")
	require.True(t, ok, "a note says the plan was cut: %q", it.Plan[max(0, len(it.Plan)-200):])
	assert.Equal(t, strconv.Itoa(len(plan)-len(shown))+" bytes) — the plan is longer than leashd shows for review", note)
	assert.True(t, strings.HasPrefix(plan, shown), "the start of the plan, unchanged")
	assert.LessOrEqual(t, len(it.Plan), limit, "the note included")
	assert.Greater(t, len(shown), limit-210, "room is left for the note only")
	_, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionDefault}})
	require.NoError(t, err)
	resp := <-got
	assert.True(t, resp.Allow)
	var in map[string]string
	require.NoError(t, json.Unmarshal(resp.UpdatedInput, &in))
	assert.Equal(t, plan, in["plan"], "the agent's input is sent back whole")
}
