package telegram_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/store"
	"github.com/leashd/leashd/interactions"
)

// A multi-select question pending when leashd stops: its message says
// leashd restarted and keeps its buttons with the selection so far; after
// the restart (a new connector and engine on the same SQLite file), Done
// sends that selection to the agent.
func TestMultiSelectSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "leashd.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	fake := tgfake.New()
	t.Cleanup(fake.Close)
	persist := setup{
		fakeServer: fake,
		coordOpts:  []interactions.Opt{interactions.WithJournal(st)},
		engineOpts: []engine.Option{engine.WithRecovery(st), engine.WithSessionStore(st)},
	}

	var h1 *harness
	s1 := persist
	s1.turn = askTurn(&h1, engine.ToolAskUserQuestion, func() any {
		return map[string]any{"questions": []map[string]any{{
			"question": "Which checks?", "multiSelect": true,
			"options": []map[string]any{{"label": "lint"}, {"label": "test"}, {"label": "vet"}},
		}}}
	})
	h1 = newHarness(t, s1)
	fake.Text(me, me, "check")
	m := h1.botMessage(me, "Which checks?")
	h1.answer(h1.tap(me, me, m.ID, "lint"))
	h1.waitMessage(me, m.ID, "lint checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ lint") })
	h1.answer(h1.tap(me, me, m.ID, "vet"))
	h1.waitMessage(me, m.ID, "vet checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ vet") })

	h1.stop()
	m = h1.message(me, m.ID) // edited before the engine's Run returned
	assert.Contains(t, m.Text, telegram.InterruptedText)
	assert.Equal(t, []string{"✅ lint", "test", "✅ vet", "Done"}, m.Buttons(), "the buttons stay, with the selection")

	var done string
	for _, row := range m.Markup.InlineKeyboard {
		if row[0].Text == "Done" {
			done = *row[0].CallbackData
		}
	}
	h2 := newHarness(t, persist)
	assert.Empty(t, h2.prompts(), "updates handled before the stop are not handled again")
	// Toggling still works on the message itself.
	h2.answer(h2.tap(me, me, m.ID, "test"))
	h2.waitMessage(me, m.ID, "test checked", func(m tgfake.Message) bool { return contains(m.Buttons(), "✅ test") })
	q := h2.tap(me, me, m.ID, "Done")
	assert.Equal(t, "✓", h2.answer(q).Text)
	m = h2.waitMessage(me, m.ID, "the answer shown", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "✅ <b>lint, test, vet</b>")
	h2.waitFor("the answer to reach the agent", func() bool { return len(h2.prompts()) > 0 })
	assert.Contains(t, h2.prompts()[0], "lint, test, vet")

	// A second tap on the same message is stale, never a second prompt.
	q = fake.Tap(me, me, m.ID, done)
	assert.Equal(t, telegram.StaleText, h2.answer(q).Text)
	assert.Len(t, h2.prompts(), 1)
}

// The restart notice is sent before the engine's Run returns, but a chat
// paused by Telegram (429 retry_after) does not hold the shutdown past the
// engine's close timeout: Run returns, and the log says what was not sent.
func TestShutdownDoesNotWaitPastTheCloseTimeoutForAPausedChat(t *testing.T) {
	var h *harness
	h = newHarness(t, setup{
		turn:       askTurn(&h, engine.ToolAskUserQuestion, func() any { return dbQuestion() }),
		engineOpts: []engine.Option{engine.WithCloseTimeout(300 * time.Millisecond)},
	})
	h.fake.Text(me, me, "pick")
	m := h.botMessage(me, "Which database")
	// The next request to the chat is answered 429, retry after a minute.
	h.fake.SetLimits(tgfake.Limits{PerChat: 1, PerChatWindow: time.Minute, RetryAfter: 60})

	h.stop() // fails the test if Run takes 20s (the retry_after is 60s)
	assert.NotContains(t, h.message(me, m.ID).Text, telegram.InterruptedText, "the edit is still waiting for retry_after")
	assert.Contains(t, h.logs.String(), "output not sent before shutdown")
	assert.Contains(t, h.logs.String(), "1 background messages or edits not sent yet: context deadline exceeded")
}
