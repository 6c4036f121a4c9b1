package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

// TestServeTelegram runs leashd as an operator would, configured only by
// LEASHD_TELEGRAM_* variables against a Bot-API-compatible server (tgfake,
// driven through the real client library): a stranger is refused with
// their ID, the allowed user's prompt gets Allow/Deny buttons, a tap
// reaches the demo agent, and a question still pending at SIGTERM is
// edited to say the buttons keep working before leashd exits.
func TestServeTelegram(t *testing.T) {
	fake := tgfake.New()
	defer fake.Close()
	const me, stranger = int64(1001), int64(666)
	url, logs, stop := startServe(t, t.TempDir(),
		"LEASHD_TELEGRAM_BOT_TOKEN="+fake.Token(),
		"LEASHD_TELEGRAM_API_URL="+fake.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=1001")
	stopped := false
	defer func() {
		if !stopped {
			_ = stop()
		}
	}()

	waitBot := func(chat int64, what string, match func(tgfake.Message) bool) tgfake.Message {
		t.Helper()
		var found tgfake.Message
		ok := fake.Wait(10*time.Second, func() bool {
			for _, m := range fake.BotMessages(chat) {
				if match(m) {
					found = m
					return true
				}
			}
			return false
		})
		require.True(t, ok, "no bot message in chat %d with %s; messages: %+v", chat, what, fake.BotMessages(chat))
		return found
	}

	fake.Text(stranger, stranger, "hello")
	waitBot(stranger, "a refusal naming the stranger's ID", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "666")
	})

	fake.Text(me, me, "bash please")
	ask := waitBot(me, "Allow and Deny buttons", func(m tgfake.Message) bool {
		return len(m.Buttons()) > 0 && strings.Contains(m.Text, "echo hello")
	})
	assert.Contains(t, ask.Buttons(), "Allow")
	assert.Contains(t, ask.Buttons(), "Deny")
	_, err := fake.TapButton(me, me, ask.ID, "Allow")
	require.NoError(t, err)
	waitBot(me, "the agent's reply to the allowed command", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "allowed") && strings.Contains(m.Text, "Output: hello")
	})

	var ready struct {
		Ready  bool `json:"ready"`
		Checks []struct {
			Name string `json:"name"`
		} `json:"checks"`
	}
	assert.Equal(t, http.StatusOK, getJSON(t, url+"/readyz", &ready))
	var names []string
	for _, c := range ready.Checks {
		names = append(names, c.Name)
	}
	assert.ElementsMatch(t, []string{"telegram", "web"}, names)

	fake.Text(me, me, "question")
	q := waitBot(me, "the first question's buttons", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Which database?") && len(m.Buttons()) > 0
	})
	stopped = true
	require.NoError(t, stop())
	for _, m := range fake.BotMessages(me) {
		if m.ID == q.ID {
			assert.Contains(t, m.Text, "leashd restarted", "the chat is told before leashd exits")
			assert.Contains(t, m.Buttons(), "SQLite", "the buttons stay: they work after the restart")
		}
	}
	assert.NotContains(t, logs.String(), fake.Token(), "the bot token never reaches the log")
}
