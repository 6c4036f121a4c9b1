package telegram_test

import (
	"context"
	"encoding/json"
	"github.com/leashd/leashd/engine/agent"
	"net/http"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

const (
	me       = int64(42) // the allowed user, in a private chat with the bot
	stranger = int64(99)
)

func dbQuestion() map[string]any {
	return map[string]any{"questions": []map[string]any{{
		"header":   "Database",
		"question": "Which database should the service use?",
		"options": []map[string]any{
			{"label": "Postgres", "description": "Relational & battle-tested"},
			{"label": "SQLite", "description": "One <file>, no server"},
		},
	}}}
}

// askTurn makes every turn ask input with tool and end with the
// agent's view of the answer.
func askTurn(tool string, input func() any) func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
	return func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
		resp := ask(ctx, th, tool, input())
		return agent.Result{Text: "allowed=" + boolText(resp.Allow), NumTurns: 1}, nil
	}
}

func boolText(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func TestStrangerMessageIsRefusedAndNothingReachesTheAgent(t *testing.T) {
	h := newHarness(t, setup{})
	h.fake.Text(stranger, stranger, "rm -rf /")
	h.botMessage(stranger, telegram.NotAllowedText(stranger))
	assert.Equal(t, "Not allowed. Your user ID is 99 — add it to LEASHD_TELEGRAM_ALLOWED_USERS.", telegram.NotAllowedText(stranger))

	// A second message gets no second reply (a stranger cannot flood the
	// chat), and still nothing reaches the agent.
	h.fake.Text(stranger, stranger, "please")
	h.fake.Text(me, me, "hello")
	h.botMessage(me, "echo: hello")
	assert.Len(t, h.fake.BotMessages(stranger), 1)
	assert.Equal(t, []string{"hello"}, h.prompts())
}

func TestEmptyAllowListServesNobody(t *testing.T) {
	h := newHarness(t, setup{allowed: []int64{}})
	h.fake.Text(me, me, "hello")
	h.botMessage(me, telegram.NotAllowedText(me))
	assert.Empty(t, h.prompts())
	assert.Contains(t, h.logs.String(), "LEASHD_TELEGRAM_ALLOWED_USERS is empty")
}

func TestCommandsAreRegisteredAndAnswered(t *testing.T) {
	h := newHarness(t, setup{})
	h.waitFor("setMyCommands", func() bool { return len(h.fake.Commands()) > 0 })
	var names []string
	for _, c := range h.fake.Commands() {
		names = append(names, c.Command)
		assert.NotEmpty(t, c.Description)
	}
	for _, c := range engine.Commands {
		assert.Contains(t, names, c.Name)
	}
	h.fake.Text(me, me, "/frobnicate")
	h.botMessage(me, "Unknown command /frobnicate")
	assert.Empty(t, h.prompts())
}

func TestAgentOutputIsRenderedAsHTML(t *testing.T) {
	h := newHarness(t, setup{turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
		th.Text("## Result\nUse **bold** and `a < b` & [docs](https://example.com)")
		return agent.Result{Text: "done", NumTurns: 2, CostUSD: 0.0123}, nil
	}})
	h.fake.Text(me, me, "go")
	m := h.botMessage(me, "<b>Result</b>")
	assert.Equal(t, "<b>Result</b>\nUse <b>bold</b> and <code>a &lt; b</code> &amp; <a href=\"https://example.com\">docs</a>", m.Text)
	assert.Equal(t, "HTML", m.ParseMode)
	sum := h.botMessage(me, "Done")
	assert.Equal(t, "<i>Done · $0.0123 · 2 steps</i>", sum.Text)
}

func TestQuestionTappedShowsAnswerAndRemovesButtons(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn(agent.ToolAskUserQuestion, func() any { return dbQuestion() })})
	h.fake.Text(me, me, "pick a db")
	m := h.botMessage(me, "Which database")
	assert.Contains(t, m.Text, "<b>Database</b>")
	assert.Contains(t, m.Text, "• <b>SQLite</b> — One &lt;file&gt;, no server")
	assert.Contains(t, m.Text, "type to answer in your own words")
	assert.Equal(t, []string{"Postgres", "SQLite"}, m.Buttons())
	for _, row := range m.Markup.InlineKeyboard {
		assert.NotContains(t, *row[0].CallbackData, row[0].Text, "labels never travel in callback data")
	}

	q := h.tap(me, me, m.ID, "SQLite")
	assert.Equal(t, "✓", h.answer(q).Text)
	resp := h.response(1)
	require.True(t, resp.Allow)
	var in struct {
		Answers map[string]string `json:"answers"`
	}
	require.NoError(t, json.Unmarshal(resp.UpdatedInput, &in))
	assert.Equal(t, map[string]string{"Which database should the service use?": "SQLite"}, in.Answers)

	m = h.waitMessage(me, m.ID, "the question to show its answer", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "Which database should the service use?")
	assert.Contains(t, m.Text, "✅ <b>SQLite</b>")
	assert.NotContains(t, m.Text, "— by", "no 'by' in a private chat")
	h.botMessage(me, "allowed=yes")
}

func TestTypedTextAnswersThePendingQuestion(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn(agent.ToolAskUserQuestion, func() any { return dbQuestion() })})
	h.fake.Text(me, me, "pick a db")
	m := h.botMessage(me, "Which database")
	h.fake.Text(me, me, "MariaDB, please")
	h.botMessage(me, "Response received.")
	resp := h.response(1)
	require.True(t, resp.Allow)
	assert.Contains(t, string(resp.UpdatedInput), "MariaDB, please")
	m = h.waitMessage(me, m.ID, "buttons removed", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "✅ <b>MariaDB, please</b>")
	assert.Equal(t, []string{"pick a db"}, h.prompts(), "the typed answer is not a prompt")
}

func TestStaleForgedAndDuplicateTapsAreNeverText(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn(agent.ToolAskUserQuestion, func() any { return dbQuestion() })})
	h.fake.Text(me, me, "pick a db")
	m := h.botMessage(me, "Which database")
	data := *m.Markup.InlineKeyboard[0][0].CallbackData

	// Forged data: not a leashd key at all.
	q := h.fake.Tap(me, me, m.ID, "Postgres")
	assert.Equal(t, telegram.StaleText, h.answer(q).Text)
	// A real key of this interaction, tapped from another chat.
	q = h.fake.Tap(me+1, me, 1, data)
	assert.Equal(t, telegram.StaleText, h.answer(q).Text)
	assert.Len(t, h.coord.Pending("telegram:42"), 1, "the question is still pending")

	// The real tap, then the same update delivered again, then the old
	// button tapped again.
	q = h.tap(me, me, m.ID, "Postgres")
	assert.Equal(t, "✓", h.answer(q).Text)
	h.response(1)
	h.botMessage(me, "allowed=yes")
	q2 := h.fake.Tap(me, me, m.ID, data)
	assert.Equal(t, telegram.StaleText, h.answer(q2).Text)

	assert.Equal(t, []string{"pick a db"}, h.prompts(), "no tap ever became a prompt")
	assert.Len(t, h.agent.Responses(), 1)
}

func TestDuplicateUpdateIsProcessedOnce(t *testing.T) {
	h := newHarness(t, setup{})
	id := h.fake.Text(me, me, "once")
	h.botMessage(me, "echo: once")
	h.fake.Push(tgbotapi.Update{UpdateID: id, Message: &tgbotapi.Message{MessageID: 77, From: &tgbotapi.User{ID: me}, Chat: &tgbotapi.Chat{ID: me, Type: "private"}, Text: "once"}})
	h.fake.Text(me, me, "twice")
	h.botMessage(me, "echo: twice")
	assert.Equal(t, []string{"once", "twice"}, h.prompts())
}

func TestStrangerTapGetsAnAlertAndChangesNothing(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn(agent.ToolAskUserQuestion, func() any { return dbQuestion() })})
	h.fake.Text(me, me, "pick a db")
	m := h.botMessage(me, "Which database")
	q := h.tap(me, stranger, m.ID, "Postgres")
	a := h.answer(q)
	assert.True(t, a.ShowAlert)
	assert.Equal(t, telegram.NotAllowedText(stranger), a.Text)
	assert.Len(t, h.coord.Pending("telegram:42"), 1)
	assert.Empty(t, h.agent.Responses())
	assert.NotNil(t, h.message(me, m.ID).Markup, "the buttons stay")
}

func TestMultiSelectTogglesThenDone(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn(agent.ToolAskUserQuestion, func() any {
		return map[string]any{"questions": []map[string]any{{
			"question": "Which checks?", "multiSelect": true,
			"options": []map[string]any{{"label": "lint"}, {"label": "test"}, {"label": "vet"}},
		}}}
	})})
	h.fake.Text(me, me, "check")
	m := h.botMessage(me, "Which checks?")
	assert.Equal(t, []string{"lint", "test", "vet", "Done"}, m.Buttons())

	q := h.tap(me, me, m.ID, "lint")
	h.answer(q)
	h.waitMessage(me, m.ID, "lint checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ lint") })
	q = h.tap(me, me, m.ID, "vet")
	h.answer(q)
	h.waitMessage(me, m.ID, "vet checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ vet") })
	q = h.tap(me, me, m.ID, "✅ lint") // untoggle
	h.answer(q)
	m = h.waitMessage(me, m.ID, "lint unchecked", func(m tgfake.Message) bool { return contains(m.Buttons(), "lint") })
	assert.Equal(t, []string{"lint", "test", "✅ vet", "Done"}, m.Buttons())
	q = h.tap(me, me, m.ID, "test")
	h.answer(q)
	h.waitMessage(me, m.ID, "test checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ test") })
	assert.Empty(t, h.agent.Responses(), "toggling does not answer")

	q = h.tap(me, me, m.ID, "Done")
	assert.Equal(t, "✓", h.answer(q).Text)
	resp := h.response(1)
	assert.Contains(t, string(resp.UpdatedInput), `"Which checks?":"test, vet"`)
	m = h.waitMessage(me, m.ID, "answered", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "✅ <b>test, vet</b>")
}

func TestMultiSelectDoneWithNothingSelectedIsExplained(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn(agent.ToolAskUserQuestion, func() any {
		return map[string]any{"questions": []map[string]any{{
			"question": "Which?", "multiSelect": true,
			"options": []map[string]any{{"label": "a"}, {"label": "b"}},
		}}}
	})})
	h.fake.Text(me, me, "x")
	m := h.botMessage(me, "Which?")
	a := h.answer(h.tap(me, me, m.ID, "Done"))
	assert.True(t, a.ShowAlert)
	assert.Contains(t, a.Text, "select at least one option")
	assert.Len(t, h.coord.Pending("telegram:42"), 1)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func longPlan() string {
	var b strings.Builder
	b.WriteString("# Migration plan\n\n")
	for i := range 120 {
		b.WriteString("## Step " + itoa(i) + "\n- change `file_" + itoa(i) + ".go` so that a < b && c > d\n- run **tests**\n")
	}
	b.WriteString("```sh\ngo test ./...\n```\n")
	return b.String()
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

func TestLongPlanIsSplitAndAdjustTakesFeedback(t *testing.T) {
	var h *harness
	plan := longPlan()
	h = newHarness(t, setup{turn: askTurn(agent.ToolExitPlanMode, func() any { return map[string]any{"plan": plan} })})
	h.fake.Text(me, me, "plan it")
	last := h.botMessage(me, "Tap a decision")
	msgs := h.fake.BotMessages(me)
	require.Greater(t, len(msgs), 2, "a long plan takes several messages")
	assert.Contains(t, msgs[0].Text, "<b>📋 Plan review</b>")
	var visible strings.Builder
	for i, m := range msgs {
		v, err := tgfake.ParseHTML(m.Text)
		require.NoError(t, err)
		assert.LessOrEqual(t, tgfake.Len(v), 4096)
		visible.WriteString(v)
		if m.ID != last.ID {
			assert.Nil(t, m.Markup, "only the last part has buttons (part %d)", i)
		}
	}
	assert.Contains(t, visible.String(), "change file_119.go so that a < b && c > d")
	assert.Equal(t, []string{"Approve, fresh session (recommended)", "Approve, auto-accept edits", "Approve, review edits", "Adjust"}, last.Buttons())

	q := h.tap(me, me, last.ID, "Adjust")
	assert.Equal(t, telegram.FeedbackPrompt, h.answer(q).Text)
	h.botMessage(me, "What should change?")
	assert.Empty(t, h.agent.Responses(), "adjust waits for the feedback")
	h.fake.Text(me, me, "split step 3 in two")
	resp := h.response(1)
	assert.False(t, resp.Allow)
	assert.Equal(t, "split step 3 in two", resp.Message)
	m := h.waitMessage(me, last.ID, "the plan to show the decision", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "✏️ Adjust: split step 3 in two")
}

func TestPlanApproved(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn(agent.ToolExitPlanMode, func() any { return map[string]any{"plan": "1. do *it*"} })})
	h.fake.Text(me, me, "plan it")
	m := h.botMessage(me, "Plan review")
	assert.Contains(t, m.Text, "1. do <i>it</i>")
	h.answer(h.tap(me, me, m.ID, "Approve, review edits"))
	assert.True(t, h.response(1).Allow)
	m = h.waitMessage(me, m.ID, "decision shown", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "✅ Approve, review edits")
}

func TestToolApprovalButtonsAndTypedDenial(t *testing.T) {
	h := newHarness(t, setup{turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
		ask(ctx, th, "Bash", map[string]any{"command": "rm -rf build && make <all>", "description": "Rebuild"})
		ask(ctx, th, "Edit", map[string]any{"file_path": "/src/main.go", "old_string": "a := 1", "new_string": "a := 2"})
		return agent.Result{Text: "ok"}, nil
	}})
	h.fake.Text(me, me, "build")
	m := h.botMessage(me, "The agent wants to run a command")
	assert.Contains(t, m.Text, "<pre>rm -rf build &amp;&amp; make &lt;all&gt;</pre>")
	assert.Equal(t, []string{"Allow", "Allow for this session", "Deny"}, m.Buttons())
	h.answer(h.tap(me, me, m.ID, "Allow for this session"))
	resp := h.response(1)
	assert.True(t, resp.Allow)
	require.NotEmpty(t, resp.UpdatedPermissions)
	m = h.waitMessage(me, m.ID, "decision shown", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "✅ Allowed for this session")

	e := h.botMessage(me, "The agent wants to edit a file")
	// Outside the working directory: the edit's own text as a diff.
	assert.Contains(t, e.Text, `<blockquote expandable><pre><code class="language-diff">--- /src/main.go
+++ /src/main.go
@@ -1 +1 @@
-a := 1
+a := 2</code></pre></blockquote>`)
	h.fake.Text(me, me, "not that file")
	h.botMessage(me, "Response received.")
	resp = h.response(2)
	assert.False(t, resp.Allow)
	assert.Equal(t, "not that file", resp.Message)
	e = h.waitMessage(me, e.ID, "denial shown", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, e.Text, "🚫 Denied: not that file")
}

func TestTimeoutAndStopEditTheMessage(t *testing.T) {
	h := newHarness(t, setup{
		coordOpts: []interactions.Opt{interactions.WithTimeout(300 * time.Millisecond)},
		turn:      askTurn(agent.ToolAskUserQuestion, func() any { return dbQuestion() }),
	})
	h.fake.Text(me, me, "pick")
	m := h.botMessage(me, "Which database")
	m = h.waitMessage(me, m.ID, "expired", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, telegram.ExpiredText)
	assert.False(t, h.response(1).Allow)
	q := h.fake.Tap(me, me, m.ID, "zzzzzzzz:0")
	assert.Equal(t, telegram.StaleText, h.answer(q).Text)
}

// /stop and /clear cancel a pending question: its message keeps the
// question, says Cancelled and loses its buttons, the agent is told it was
// not answered, the command says what it did, and an old tap is stale.
func TestStopAndClearCancelThePendingQuestion(t *testing.T) {
	for _, tc := range []struct{ command, says string }{
		{"/stop", "Stopped."},
		{"/clear", "Cleared. Pending questions were cancelled"},
	} {
		t.Run(tc.command, func(t *testing.T) {
			h := newHarness(t, setup{turn: askTurn(agent.ToolAskUserQuestion, func() any { return dbQuestion() })})
			h.fake.Text(me, me, "pick")
			m := h.botMessage(me, "Which database")
			data := *m.Markup.InlineKeyboard[0][0].CallbackData
			h.fake.Text(me, me, tc.command)
			m = h.waitMessage(me, m.ID, "cancelled", func(m tgfake.Message) bool { return m.Markup == nil })
			assert.Contains(t, m.Text, "Which database should the service use?", "the question stays readable")
			assert.Contains(t, m.Text, telegram.CancelledText)
			h.botMessage(me, tc.says)
			assert.False(t, h.response(1).Allow, "the agent is told the question was not answered")
			q := h.fake.Tap(me, me, m.ID, data)
			assert.Equal(t, telegram.StaleText, h.answer(q).Text)
			assert.Equal(t, []string{"pick"}, h.prompts(), "neither the command nor the old tap became a prompt")
		})
	}
}

// An edit that changes nothing gets Telegram's 400 "message is not
// modified": the message already shows what was meant, so it counts as
// sent — no retry, no warning.
func TestIdenticalEditIsSuccess(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn(agent.ToolAskUserQuestion, func() any { return dbQuestion() })})
	events, unsubscribe := h.coord.Subscribe()
	defer unsubscribe()
	h.fake.Text(me, me, "pick")
	m := h.botMessage(me, "Which database")
	h.answer(h.tap(me, me, m.ID, "Postgres"))
	var resolved interactions.Event
	for resolved.Type != interactions.EventResolved {
		select {
		case resolved = <-events:
		case <-time.After(waitLimit):
			t.Fatal("no resolved event")
		}
	}
	require.NotEmpty(t, resolved.Ref)
	answered := h.waitMessage(me, m.ID, "answered", func(m tgfake.Message) bool { return m.Markup == nil })
	h.botMessage(me, "allowed=yes")
	edits := len(h.requests("editMessageText"))

	// The same outcome shown again: the same text, the same (no) keyboard.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(t, h.conn.Update(ctx, resolved))
	require.NoError(t, h.conn.Flush(ctx), "the identical edit counts as sent")

	after := h.requests("editMessageText")
	require.Len(t, after, edits+1, "the identical edit was sent once, not retried")
	last := after[len(after)-1]
	assert.Equal(t, http.StatusBadRequest, last.Status)
	assert.Contains(t, last.Error, "message is not modified")
	assert.Equal(t, answered.Text, h.message(me, m.ID).Text)
	assert.NotContains(t, h.logs.String(), "level=WARN", "an identical edit is not worth a warning")
}

// requests returns the requests of method the fake received, in order.
func (h *harness) requests(method string) []tgfake.Request {
	var out []tgfake.Request
	for _, r := range h.fake.Requests() {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

func TestGroupShowsWhoAnswered(t *testing.T) {
	const group = int64(-100123)
	h := newHarness(t, setup{
		allowed: []int64{42, 43},
		turn:    askTurn(agent.ToolAskUserQuestion, func() any { return dbQuestion() }),
	})
	h.fake.SetUserName(43, "Ada")
	h.fake.Text(group, me, "pick a db")
	m := h.botMessage(group, "Which database")
	h.answer(h.tap(group, 43, m.ID, "Postgres"))
	m = h.waitMessage(group, m.ID, "answered", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "✅ <b>Postgres</b> — by Ada")
}

func TestGroupCommandsAddressedToTheBot(t *testing.T) {
	const group = int64(-100777)
	h := newHarness(t, setup{})
	h.fake.Text(group, me, "/stop@other_bot")
	h.fake.Text(group, me, "/stop@leashd_bot")
	h.botMessage(group, "Nothing is running.")
	h.fake.Text(group, me, "/frob@LEASHD_BOT now")
	h.botMessage(group, "Unknown command /frob")
	assert.Len(t, h.fake.BotMessages(group), 2, "the command for another bot was ignored")
	assert.Empty(t, h.prompts())
}

// slowSends delays the bot's view of sendMessage responses: Telegram has
// already shown the message, but the connector does not yet know its ID.
type slowSends struct{ d time.Duration }

func (s slowSends) Do(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(r)
	if err == nil && strings.HasSuffix(r.URL.Path, "/sendMessage") {
		time.Sleep(s.d)
	}
	return resp, err
}

// Taps that arrive before the connector knows the message's ID (a fast
// person, a slow network) are not lost, and their outcome is shown.
func TestTapsBeforePresentReturns(t *testing.T) {
	h := newHarness(t, setup{
		connOpts: []telegram.Option{telegram.WithHTTPClient(slowSends{400 * time.Millisecond})},
		turn: askTurn(agent.ToolAskUserQuestion, func() any {
			return map[string]any{"questions": []map[string]any{{
				"question": "Which checks?", "multiSelect": true,
				"options": []map[string]any{{"label": "lint"}, {"label": "test"}},
			}}}
		}),
	})
	h.fake.Text(me, me, "check")
	m := h.botMessage(me, "Which checks?")
	h.answer(h.tap(me, me, m.ID, "test"))
	m = h.waitMessage(me, m.ID, "test checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ test") })
	h.answer(h.tap(me, me, m.ID, "Done"))
	assert.Contains(t, string(h.response(1).UpdatedInput), `"Which checks?":"test"`)
	m = h.waitMessage(me, m.ID, "answered", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "✅ <b>test</b>")
}

// Streamed output edits one message at most once per stream interval.
func TestStreamingIsThrottledToOneEditPerInterval(t *testing.T) {
	h := newHarness(t, setup{
		connOpts: []telegram.Option{telegram.WithStreamInterval(500 * time.Millisecond)},
		turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
			for i := range 30 {
				th.Text("chunk " + fmtInt(i) + "\n\n")
				time.Sleep(50 * time.Millisecond)
			}
			return agent.Result{Text: "done"}, nil
		},
	})
	h.fake.Text(me, me, "stream")
	h.botMessage(me, "<i>Done")
	var at []time.Time
	for _, r := range h.fake.Requests() {
		if r.ChatID == me && (r.Method == "sendMessage" || r.Method == "editMessageText") && strings.Contains(r.Params.Get("text"), "chunk 0") {
			at = append(at, r.At)
		}
	}
	require.GreaterOrEqual(t, len(at), 2, "the message was edited as text came")
	assert.LessOrEqual(t, len(at), 5, "1.5s of text in at most ~4 edits at 500ms, not 30")
	for i := 1; i < len(at)-1; i++ { // the last sync (at Done) is immediate
		assert.GreaterOrEqual(t, at[i].Sub(at[i-1]), 450*time.Millisecond)
	}
	last := h.botMessage(me, "chunk 29")
	assert.Contains(t, last.Text, "chunk 0\n\nchunk 1\n\n")
}

func TestSeveralQuestionsShowTheirPosition(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn(agent.ToolAskUserQuestion, func() any {
		return map[string]any{"questions": []map[string]any{
			{"header": "DB", "question": "Which database?", "options": []map[string]any{{"label": "pg"}, {"label": "sqlite"}}},
			{"header": "Auth", "question": "Which auth?", "options": []map[string]any{{"label": "oauth"}, {"label": "none"}}},
		}}
	})})
	h.fake.Text(me, me, "two")
	m := h.botMessage(me, "Which database?")
	assert.Contains(t, m.Text, "<b>DB</b> · 1/2")
	h.answer(h.tap(me, me, m.ID, "sqlite"))
	m2 := h.botMessage(me, "Which auth?")
	assert.Contains(t, m2.Text, "<b>Auth</b> · 2/2")
	h.answer(h.tap(me, me, m2.ID, "none"))
	resp := h.response(1)
	assert.Contains(t, string(resp.UpdatedInput), `"Which database?":"sqlite"`)
	assert.Contains(t, string(resp.UpdatedInput), `"Which auth?":"none"`)
}

// When the plan's last part has no room for the outcome, the buttons are
// removed and the outcome follows in a message of its own.
func TestPlanOutcomeTooLongForTheLastPartGoesBelow(t *testing.T) {
	var h *harness
	plan := strings.Repeat("word ", 700) // one part with the decisions' meanings, nearly full
	h = newHarness(t, setup{turn: askTurn(agent.ToolExitPlanMode, func() any { return map[string]any{"plan": plan} })})
	h.fake.Text(me, me, "plan it")
	m := h.botMessage(me, "Tap a decision")
	h.answer(h.tap(me, me, m.ID, "Adjust"))
	h.botMessage(me, "What should change?")
	feedback := strings.Repeat("more detail ", 80)
	h.fake.Text(me, me, feedback)
	assert.Equal(t, strings.TrimSpace(feedback), h.response(1).Message)
	h.waitMessage(me, m.ID, "buttons removed", func(m tgfake.Message) bool { return m.Markup == nil })
	out := h.botMessage(me, "✏️ Adjust: more detail")
	assert.Greater(t, out.ID, m.ID)
	assert.Contains(t, h.message(me, m.ID).Text, "word word", "the plan itself stays")
}

func TestToolDeniedWithTheButton(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn("Bash", func() any { return map[string]any{"command": "rm -rf /"} })})
	h.fake.Text(me, me, "clean up")
	m := h.botMessage(me, "The agent wants to run a command")
	h.answer(h.tap(me, me, m.ID, "Deny"))
	resp := h.response(1)
	assert.False(t, resp.Allow)
	assert.Equal(t, "The user denied this tool call.", resp.Message)
	m = h.waitMessage(me, m.ID, "denied", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.True(t, strings.HasSuffix(m.Text, "\n\n🚫 Denied"), m.Text)
}

// Text the agent writes after a question goes below the question, not into
// the message above it.
func TestOutputAfterAQuestionStartsANewMessage(t *testing.T) {
	h := newHarness(t, setup{turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
		th.Text("Before the question.")
		ask(ctx, th, agent.ToolAskUserQuestion, dbQuestion())
		th.Text("After the answer.")
		return agent.Result{Text: "ok"}, nil
	}})
	h.fake.Text(me, me, "go")
	q := h.botMessage(me, "Which database")
	h.answer(h.tap(me, me, q.ID, "Postgres"))
	after := h.botMessage(me, "After the answer.")
	before := h.botMessage(me, "Before the question.")
	assert.Less(t, before.ID, q.ID)
	assert.Greater(t, after.ID, q.ID)
	assert.Equal(t, "Before the question.", h.message(me, before.ID).Text)
}
