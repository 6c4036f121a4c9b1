package telegram_test

import (
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

// A tap in one chat reaches its agent while Telegram hangs on everything
// for another chat: that chat's answerCallbackQuery, the edit of its
// answered question and the message with its next question never return.
// The other chat's whole question round (message, two questions, three
// taps) goes through meanwhile, and the hung chat carries on once Telegram
// answers again.
func TestATapIsHandledWhileAnotherChatsCallsHang(t *testing.T) {
	rig := newE2ERig(t, 2, nil, telegram.WithLimits(telegram.Limits{}))
	defer rig.stop()
	a, b := rig.chats[1000], rig.chats[1001]

	rig.fake.Text(b.id, b.id, "ask me a question")
	q1, err := b.next("first question", hasButton("SQLite"))
	require.NoError(t, err)
	release := rig.fake.Stall(func(r tgfake.Request) bool { return r.ChatID == b.id })
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	_, data, _ := button(q1, "SQLite")
	rig.fake.Tap(b.id, b.id, q1.MessageID, data)
	require.True(t, rig.fake.Wait(e2eStep, func() bool { return rig.fake.Held() >= 2 }),
		"the tap's answerCallbackQuery and its chat's next message hang")

	lastQ := 0
	_, _, err = rig.round(a, &lastQ)
	require.NoError(t, err, "the other chat's agent got its answers while chat %d's calls hung", b.id)
	assert.GreaterOrEqual(t, rig.fake.Held(), 2, "chat %d's calls were still hanging when the other chat's round ended", b.id)

	release()
	released = true
	q2, err := b.next("second question after Telegram answered again", func(m tgbotapi.Message) bool {
		return strings.Contains(m.Text, "Which features?") && hasButton("Done")(m)
	})
	require.NoError(t, err)
	assert.Greater(t, q2.MessageID, q1.MessageID)
}
