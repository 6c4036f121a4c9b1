package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/interactions"
	"github.com/leashd/leashd/interactions/client"
)

// Issue 30 item 6: forty programs ask in one Telegram chat at once, behind
// Telegram's pacing (about one message a second in a chat, which the fake
// enforces with 429s). Every caller gets its ID at once, well before the
// chat has shown the questions (the last after some 40 s, more than the
// server's write timeout), and every question is shown exactly once: no
// caller without an ID, no question without a caller.
func TestConcurrentAsksInOnePacedChatAllGetAnID(t *testing.T) {
	fake := tgfake.New(tgfake.WithLimits(tgfake.Limits{PerChat: 1, Global: 30}))
	t.Cleanup(fake.Close)
	url, _, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_TELEGRAM_BOT_TOKEN="+fake.Token(),
		"LEASHD_TELEGRAM_API_URL="+fake.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=1001",
		"LEASHD_WEB_TOKEN="+askToken)
	t.Cleanup(func() { require.NoError(t, stop()) })
	const n, me = 40, int64(1001)
	c := client.New(url, askToken)
	ids, errs, took := make([]string, n), make([]error, n), make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			began := time.Now()
			ids[i], errs[i] = c.Start(t.Context(), client.Request{ChatID: "telegram:1001", Question: question(i),
				Options: []interactions.Choice{{Label: "Yes"}, {Label: "No"}}})
			took[i] = time.Since(began)
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "caller %d", i)
		require.NotEmpty(t, ids[i], "caller %d", i)
		assert.Less(t, took[i], 5*time.Second, "caller %d waited for the chat", i)
	}
	shown := func() map[string]int {
		m := map[string]int{}
		for _, msg := range fake.BotMessages(me) {
			if len(msg.Buttons()) > 0 {
				for i := range n {
					if strings.Contains(msg.Text, question(i)) {
						m[question(i)]++
					}
				}
			}
		}
		return m
	}
	require.True(t, fake.Wait(120*time.Second, func() bool { return len(shown()) == n }), "shown: %v", shown())
	for q, k := range shown() {
		assert.Equal(t, 1, k, "%s shown %d times", q, k)
	}
	assert.Empty(t, fake.Violations(), "leashd kept to Telegram's pacing")
}

func question(i int) string { return fmt.Sprintf("Question number %02d?", i) }
