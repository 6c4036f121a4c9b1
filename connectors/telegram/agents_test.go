package telegram_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/agent/demo"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// Every interaction kind with the built-in demo agent, driven from
// Telegram with buttons and typed text.
func TestDemoAgentEveryKindThroughTelegram(t *testing.T) {
	h := newHarness(t, setup{agent: demo.New(demo.WithDelay(0))})

	h.fake.Text(me, me, "ask me a question")
	q1 := h.botMessage(me, "Which database?")
	assert.Contains(t, q1.Text, "<b>Database</b> · 1/2")
	h.answer(h.tap(me, me, q1.ID, "SQLite"))
	q2 := h.botMessage(me, "Which features?")
	h.answer(h.tap(me, me, q2.ID, "Search"))
	h.waitMessage(me, q2.ID, "Search checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ Search") })
	h.answer(h.tap(me, me, q2.ID, "Auth"))
	h.waitMessage(me, q2.ID, "Auth checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ Auth") })
	h.answer(h.tap(me, me, q2.ID, "Done"))
	h.botMessage(me, `Thanks. Your answers: Which database? SQLite; Which features? Auth, Search`)
	h.botMessage(me, "<i>Done")

	h.fake.Text(me, me, "run bash")
	b := h.botMessage(me, "The agent wants to run a command")
	assert.Contains(t, b.Text, "<pre>echo hello</pre>")
	h.answer(h.tap(me, me, b.ID, "Allow"))
	h.botMessage(me, "allowed")

	h.fake.Text(me, me, "edit a file")
	w := h.botMessage(me, "The agent wants to write a file")
	h.fake.Text(me, me, "not today")
	h.botMessage(me, "denied: not today")
	h.waitMessage(me, w.ID, "denial shown", func(m tgfake.Message) bool { return strings.Contains(m.Text, "🚫 Denied: not today") })

	h.fake.Text(me, me, "make a plan")
	p := h.botMessage(me, "Plan review")
	assert.Contains(t, p.Text, "<b>Plan: add a greeting</b>")
	assert.Contains(t, p.Text, `<pre><code class="language-bash">echo hello</code></pre>`)
	h.answer(h.tap(me, me, p.ID, "Approve, auto-accept edits"))
	h.botMessage(me, "Plan approved. Mode: acceptEdits — edits are applied without asking.")
}

// The real Claude Code CLI against a fake model, driven from Telegram: the
// model reads the answer tapped in the chat, and a tool approval is given
// with a button.
func TestClaudeCLIThroughTelegram(t *testing.T) {
	h, api, dir := claudeHarness(t)
	questions := map[string]any{"questions": []map[string]any{{
		"question": "Which database?", "header": "DB", "multiSelect": false,
		"options": []map[string]any{{"label": "Postgres", "description": "server"}, {"label": "SQLite", "description": "file"}},
	}}}
	api.Reply(
		fakeapi.Tool("AskUserQuestion", questions),
		fakeapi.Tool("Bash", map[string]any{"command": "echo leashd-was-here >> out.txt", "description": "Write a file"}),
		fakeapi.Text("All **done**."),
	)
	h.fake.Text(me, me, "set it up")
	q := h.waitBotMessage(me, "Which database?", 90*time.Second)
	h.answer(h.tap(me, me, q.ID, "SQLite"))
	b := h.waitBotMessage(me, "The agent wants to run a command", 60*time.Second)
	assert.Contains(t, b.Text, "<pre>echo leashd-was-here &gt;&gt; out.txt</pre>")
	h.answer(h.tap(me, me, b.ID, "Allow"))
	h.waitBotMessage(me, "<i>Done", 60*time.Second)
	h.botMessage(me, "All <b>done</b>.")

	calls := api.Calls()
	require.Len(t, calls, 3)
	res, ok := calls[1].ToolResult(calls[0].Reply.Tools[0].ID)
	require.True(t, ok)
	assert.Contains(t, res.ResultText(), `"Which database?"="SQLite"`)
	res, ok = calls[2].ToolResult(calls[1].Reply.Tools[0].ID)
	require.True(t, ok)
	assert.False(t, res.IsError)
	out, err := os.ReadFile(filepath.Join(dir, "out.txt"))
	require.NoError(t, err, "the approved command ran")
	assert.Equal(t, "leashd-was-here\n", string(out))
}

// claudeHarness runs the real Claude Code CLI against a fake model behind
// Telegram, in its own working directory.
func claudeHarness(t *testing.T) (*harness, *fakeapi.Server, string) {
	t.Helper()
	cli := testenv.Claude(t)
	api := fakeapi.New(t)
	ag := claude.New(cli, claude.WithEnv(api.Env(t.TempDir())), claude.WithCloseTimeout(3*time.Second))
	dir := t.TempDir()
	h := newHarness(t, setup{agent: ag, engineOpts: []enginetest.Setup{func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir }}})
	return h, api, dir
}

// A plan review with the real CLI: the plan is shown, "Approve,
// auto-accept edits" is tapped, the CLI tells the model the plan was
// approved, and the session left plan mode for acceptEdits — the model's
// Write runs without being asked about.
func TestClaudeCLIPlanReviewThroughTelegram(t *testing.T) {
	h, api, dir := claudeHarness(t)
	const plan = "# Plan\n1. Write hello.txt saying hello."
	api.Reply(
		fakeapi.Tool("ExitPlanMode", map[string]any{"plan": plan}),
		fakeapi.Tool("Write", map[string]any{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello\n"}),
		fakeapi.Text("Written."),
	)
	h.fake.Text(me, me, "/plan make a plan")
	h.botMessage(me, "Mode: plan")
	p := h.waitBotMessage(me, "Plan review", 90*time.Second)
	assert.Contains(t, p.Text, "<b>Plan</b>")
	assert.Contains(t, p.Text, "Write hello.txt saying hello.")
	assert.Contains(t, p.Buttons(), "Approve, auto-accept edits")
	h.answer(h.tap(me, me, p.ID, "Approve, auto-accept edits"))
	h.waitBotMessage(me, "Plan approved. Mode: acceptEdits", 60*time.Second)
	h.waitBotMessage(me, "<i>Done", 60*time.Second)
	h.botMessage(me, "Written.")
	p = h.message(me, p.ID)
	assert.Nil(t, p.Markup, "the decision removed the buttons")
	assert.Contains(t, p.Text, "✅ Approve, auto-accept edits")

	calls := api.Calls()
	require.Len(t, calls, 3)
	res, ok := calls[1].ToolResult(calls[0].Reply.Tools[0].ID)
	require.True(t, ok, "the model got ExitPlanMode's result")
	assert.False(t, res.IsError, "the plan was approved: %s", res.ResultText())
	assert.Contains(t, res.ResultText(), "User has approved your plan")
	t.Logf("tool_result the model read: %s", res.ResultText())
	res, ok = calls[2].ToolResult(calls[1].Reply.Tools[0].ID)
	require.True(t, ok)
	assert.False(t, res.IsError, "Write ran: %s", res.ResultText())
	for _, m := range h.fake.BotMessages(me) {
		assert.NotContains(t, m.Text, "The agent wants to write a file", "acceptEdits: the edit is not asked about")
	}
	out, err := os.ReadFile(filepath.Join(dir, "hello.txt"))
	require.NoError(t, err, "the CLI left plan mode and wrote the file")
	assert.Equal(t, "hello\n", string(out))
	h.fake.Text(me, me, "/status")
	st := h.botMessage(me, "Working directory:")
	assert.Contains(t, st.Text, "Mode: acceptEdits", "the chat stays in acceptEdits")
}

// A multi-select AskUserQuestion with the real CLI: two toggles and Done,
// and the model reads exactly the labels chosen, in the options' order.
func TestClaudeCLIMultiSelectThroughTelegram(t *testing.T) {
	h, api, _ := claudeHarness(t)
	questions := map[string]any{"questions": []map[string]any{{
		"question": "Which checks?", "header": "Checks", "multiSelect": true,
		"options": []map[string]any{{"label": "lint", "description": "style"}, {"label": "test", "description": "behaviour"}, {"label": "vet", "description": "suspicious code"}},
	}}}
	api.Reply(fakeapi.Tool("AskUserQuestion", questions), fakeapi.Text("Checks noted."))
	h.fake.Text(me, me, "which checks?")
	q := h.waitBotMessage(me, "Which checks?", 90*time.Second)
	assert.Equal(t, []string{"lint", "test", "vet", "Done"}, q.Buttons())
	h.answer(h.tap(me, me, q.ID, "vet"))
	h.waitMessage(me, q.ID, "vet checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ vet") })
	h.answer(h.tap(me, me, q.ID, "lint"))
	h.waitMessage(me, q.ID, "lint checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ lint") })
	h.answer(h.tap(me, me, q.ID, "Done"))
	h.waitBotMessage(me, "<i>Done", 60*time.Second)
	h.botMessage(me, "Checks noted.")
	q = h.message(me, q.ID)
	assert.Nil(t, q.Markup)
	assert.Contains(t, q.Text, "✅ <b>lint, vet</b>")

	calls := api.Calls()
	require.Len(t, calls, 2)
	res, ok := calls[1].ToolResult(calls[0].Reply.Tools[0].ID)
	require.True(t, ok, "the model got AskUserQuestion's result")
	assert.False(t, res.IsError)
	assert.Equal(t, `Your questions have been answered: "Which checks?"="lint, vet". You can now continue with these answers in mind.`, res.ResultText())
}

// waitBotMessage is botMessage with a longer bound (a real CLI starts
// slowly on a loaded machine).
func (h *harness) waitBotMessage(chat int64, substr string, d time.Duration) tgfake.Message {
	h.t.Helper()
	var found tgfake.Message
	if !h.fake.Wait(d, func() bool {
		for _, m := range h.fake.BotMessages(chat) {
			if strings.Contains(m.Text, substr) {
				found = m
				return true
			}
		}
		return false
	}) {
		h.t.Fatalf("timed out waiting for %q\nchat:\n%s\nlogs:\n%s", substr, h.dump(chat), h.logs.String())
	}
	return found
}

// An Edit approval with the real CLI shows the change as a unified diff
// with the file's own line numbers, folded in an expandable quote, with
// the decision buttons on the same message; Allow applies it.
func TestClaudeCLIEditDiffThroughTelegram(t *testing.T) {
	h, api, dir := claudeHarness(t)
	path := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(path, []byte("one\ntwo\nthree\nfour\nfive\nsix\nseven\n"), 0o644))
	api.Reply(
		fakeapi.Tool("Read", map[string]any{"file_path": path}),
		fakeapi.Tool("Edit", map[string]any{"file_path": path, "old_string": "five\n", "new_string": "FIVE & <5>\n"}),
		fakeapi.Text("Edited."),
	)
	h.fake.Text(me, me, "shout five")
	m := h.waitBotMessage(me, "The agent wants to edit a file", 90*time.Second)
	assert.Contains(t, m.Text, "<blockquote expandable><pre><code class=\"language-diff\">--- a/notes.txt\n+++ b/notes.txt\n"+
		"@@ -2,6 +2,6 @@\n two\n three\n four\n-five\n+FIVE &amp; &lt;5&gt;\n six\n seven</code></pre></blockquote>")
	assert.Contains(t, m.Buttons(), "Allow", "the decision buttons are on the diff's message")
	h.answer(h.tap(me, me, m.ID, "Allow"))
	h.waitBotMessage(me, "Edited.", 60*time.Second)
	out, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\nthree\nfour\nFIVE & <5>\nsix\nseven\n", string(out))
}

// /cost after a turn with the real CLI shows the tokens and cost its
// result reported, and /sessions lists the session by its first prompt.
func TestClaudeCLICostAndSessionsThroughTelegram(t *testing.T) {
	h, api, _ := claudeHarness(t)
	api.Reply(fakeapi.Text("Hello there."))
	h.fake.Text(me, me, "say hello")
	h.waitBotMessage(me, "Hello there.", 90*time.Second)
	h.waitBotMessage(me, "<i>Done", 60*time.Second)
	h.fake.Text(me, me, "/cost")
	c := h.waitBotMessage(me, "This session:", 30*time.Second)
	t.Logf("/cost: %s", c.Text)
	assert.Regexp(t, `This session: 1 turn · [1-9][0-9,]* tokens in, [1-9][0-9,]* out · \$[0-9.]+\nToday in this chat: 1 turn · `, c.Text)
	h.fake.Text(me, me, "/sessions")
	s := h.waitBotMessage(me, "Sessions in this chat", 30*time.Second)
	assert.Contains(t, s.Text, `· &quot;say hello&quot; · $`)
	assert.Contains(t, s.Text, "1 turn ← current")
}
