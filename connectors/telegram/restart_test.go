package telegram_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// A multi-select question pending when leashd stops: its message says
// leashd restarted and keeps its buttons with the selection so far. After
// the restart (a new store, connector and engine on the same SQLite file)
// it is pending again: two quick taps both count (the selection is kept by
// leashd and journaled, not read back from the message), it survives a
// second restart, a forged tap from another chat is refused, and Done
// sends every checked option to the agent, once.
func TestMultiSelectSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "leashd.db")
	fake := tgfake.New()
	t.Cleanup(fake.Close)
	run := func(turn func(ctx context.Context, prompt string, h agent.TurnHandler) (agent.Result, error)) *harness {
		st, err := sqlite.Open(ctx, path)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return newHarness(t, setup{
			fakeServer: fake,
			turn:       turn,
			coordOpts:  []interactions.Opt{interactions.WithJournal(st)},
			engineOpts: []enginetest.Setup{func(d *engine.Deps, _ *engine.Config) { d.Store = st }},
		})
	}

	h1 := run(askTurn(agent.ToolAskUserQuestion, func() any {
		return map[string]any{"questions": []map[string]any{{
			"question": "Which checks?", "multiSelect": true,
			"options": []map[string]any{{"label": "lint"}, {"label": "test"}, {"label": "vet"}},
		}}}
	}))
	fake.Text(me, me, "check")
	m := h1.botMessage(me, "Which checks?")
	h1.answer(h1.tap(me, me, m.ID, "lint"))
	h1.waitMessage(me, m.ID, "lint checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ lint") })
	h1.stop()
	m = h1.message(me, m.ID) // edited before the engine's Run returned
	assert.Contains(t, m.Text, telegram.InterruptedText)
	assert.Equal(t, []string{"✅ lint", "test", "vet", "Done"}, m.Buttons(), "the buttons stay, with the selection")
	var done string
	for _, row := range m.Markup.InlineKeyboard {
		if row[0].Text == "Done" {
			done = *row[0].CallbackData
		}
	}

	// Run 2: two taps in quick succession, before either edit is shown.
	h2 := run(nil)
	assert.Empty(t, h2.prompts(), "updates handled before the stop are not handled again")
	q1 := h2.tap(me, me, m.ID, "test")
	q2 := h2.tap(me, me, m.ID, "vet")
	assert.Empty(t, h2.answer(q1).Text)
	assert.Empty(t, h2.answer(q2).Text)
	h2.waitMessage(me, m.ID, "all three checked", func(m tgfake.Message) bool {
		return slices.Equal(m.Buttons(), []string{"✅ lint", "✅ test", "✅ vet", "Done"})
	})
	assert.Empty(t, h2.prompts(), "a toggle answers nothing")
	h2.stop() // a second restart

	// Run 3: a forged tap from another chat is refused; Done sends all.
	h3 := run(nil)
	fake.Push(tgbotapi.Update{CallbackQuery: &tgbotapi.CallbackQuery{ID: "forged", From: &tgbotapi.User{ID: me},
		Message: &tgbotapi.Message{MessageID: m.ID, Chat: &tgbotapi.Chat{ID: 777, Type: "private"}}, Data: done}})
	assert.Equal(t, telegram.StaleText, h3.answer("forged").Text, "a tap from another chat")
	assert.Empty(t, h3.prompts())
	q := h3.tap(me, me, m.ID, "Done")
	assert.Equal(t, "✓", h3.answer(q).Text)
	m = h3.waitMessage(me, m.ID, "the answer shown", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "✅ <b>lint, test, vet</b>")
	h3.waitFor("the answer to reach the agent", func() bool { return len(h3.prompts()) > 0 })
	assert.Contains(t, h3.prompts()[0], `The user answered: "lint, test, vet"`)

	// A second tap on the same message is stale, never a second prompt.
	q = fake.Tap(me, me, m.ID, done)
	assert.Equal(t, telegram.StaleText, h3.answer(q).Text)
	assert.Len(t, h3.prompts(), 1)
}

// The restart notice is sent before the engine's Run returns, but a chat
// paused by Telegram (429 retry_after) does not hold the shutdown past the
// engine's close timeout: Run returns, and the log says what was not sent.
func TestShutdownDoesNotWaitPastTheCloseTimeoutForAPausedChat(t *testing.T) {
	h := newHarness(t, setup{
		turn:       askTurn(agent.ToolAskUserQuestion, func() any { return dbQuestion() }),
		engineOpts: []enginetest.Setup{func(_ *engine.Deps, c *engine.Config) { c.CloseTimeout = 300 * time.Millisecond }},
	})
	h.fake.Text(me, me, "pick")
	m := h.botMessage(me, "Which database")
	// The next request to the chat, whichever it is, is answered 429,
	// retry after a minute.
	h.fake.SetLimits(tgfake.Limits{PerChat: 1, PerChatWindow: time.Minute, RetryAfter: 60})
	h.fake.ExhaustChat(me)

	h.stop() // fails the test if Run takes 20s (the retry_after is 60s)
	assert.NotContains(t, h.message(me, m.ID).Text, telegram.InterruptedText, "the edit is still waiting for retry_after")
	assert.Contains(t, h.logs.String(), "output not sent before shutdown")
	assert.Contains(t, h.logs.String(), "1 background messages or edits not sent yet: context deadline exceeded")
}

// A question too long for one Telegram message (2500 emoji are 5000
// UTF-16 units; the limit is 4096) is split over two messages, the buttons
// on the last, never refused: a tap answers it and the agent gets it.
func TestTooLongQuestionIsSplitNotDenied(t *testing.T) {
	long := strings.Repeat("😀", 2500)
	h := newHarness(t, setup{turn: askTurn(agent.ToolAskUserQuestion, func() any {
		return map[string]any{"questions": []map[string]any{{
			"question": long, "options": []map[string]any{{"label": "yes"}, {"label": "no"}},
		}}}
	})})
	h.fake.Text(me, me, "ask")
	var parts []tgfake.Message
	h.waitFor("the question in two messages", func() bool {
		parts = nil
		for _, m := range h.fake.BotMessages(me) {
			if strings.Contains(m.Text, "😀") {
				parts = append(parts, m)
			}
		}
		return len(parts) == 2 && len(parts[1].Buttons()) > 0
	})
	assert.Empty(t, parts[0].Buttons())
	assert.Equal(t, []string{"yes", "no"}, parts[1].Buttons())
	assert.Empty(t, h.fake.Violations(), "nothing Telegram would refuse")
	assert.Equal(t, "✓", h.answer(h.tap(me, me, parts[1].ID, "yes")).Text)
	r := h.response(1)
	assert.True(t, r.Allow, "answered, not denied")
	assert.Contains(t, string(r.UpdatedInput), `"answers":{"`+long+`":"yes"}`)
	m := h.waitMessage(me, parts[1].ID, "the answer shown", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "yes")
}
