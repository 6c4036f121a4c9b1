package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

// TestServeTelegramGroupQuorum: in a Telegram group with
// LEASHD_APPROVAL_QUORUM=2 and three approvers, a plan review needs two of
// them. One approval leaves it pending and shows "1 of 2 approvals —
// Alice" with the buttons kept; Alice tapping again is told and not
// counted; Bob's approval resolves it and the agent goes ahead. A second
// plan, approved by Alice, is rejected at once by Bob's Adjust with his
// feedback. In a private chat one approval is enough.
func TestServeTelegramGroupQuorum(t *testing.T) {
	fake := tgfake.New()
	defer fake.Close()
	const group, alice, bob, carol, dave = int64(-500), int64(11), int64(12), int64(13), int64(14)
	fake.SetUserName(alice, "Alice")
	fake.SetUserName(bob, "Bob")
	fake.SetUserName(carol, "Carol")
	fake.SetUserName(dave, "Dave")
	_, logs, stop := startServe(t, t.TempDir(),
		"LEASHD_TELEGRAM_BOT_TOKEN="+fake.Token(),
		"LEASHD_TELEGRAM_API_URL="+fake.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=11,12,13,14",
		"LEASHD_TELEGRAM_APPROVERS=11,12,13",
		"LEASHD_APPROVAL_QUORUM=2")
	defer func() { require.NoError(t, stop()) }()

	waitBot := func(chat int64, what string, match func(tgfake.Message) bool) tgfake.Message {
		t.Helper()
		var found tgfake.Message
		// A group gets a message every 3 s (Telegram's 20 a minute).
		ok := fake.Wait(time.Minute, func() bool {
			for _, m := range fake.BotMessages(chat) {
				if match(m) {
					found = m
					return true
				}
			}
			return false
		})
		require.True(t, ok, "no bot message in chat %d with %s; messages: %+v\nlog:\n%s", chat, what, fake.BotMessages(chat), logs)
		return found
	}
	message := func(chat int64, id int) tgfake.Message {
		for _, m := range fake.BotMessages(chat) {
			if m.ID == id {
				return m
			}
		}
		t.Fatalf("message %d gone", id)
		return tgfake.Message{}
	}
	tap := func(user int64, msg int, button string) tgfake.CallbackAnswer {
		t.Helper()
		q, err := fake.TapButton(group, user, msg, button)
		require.NoError(t, err)
		var a tgfake.CallbackAnswer
		require.True(t, fake.Wait(10*time.Second, func() bool {
			var ok bool
			a, ok = fake.CallbackAnswer(q)
			return ok
		}), "tap %s by %d not answered", button, user)
		return a
	}
	const approve = "Approve, review edits"

	fake.Text(group, carol, "plan")
	review := waitBot(group, "the plan review", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Plan review") && len(m.Buttons()) > 0
	})
	// Dave may prompt but is no approver.
	a := tap(dave, review.ID, approve)
	assert.Contains(t, a.Text, "only approvers")

	a = tap(alice, review.ID, approve)
	assert.Contains(t, a.Text, "more approvers are needed")
	waitBot(group, "1 of 2 approvals", func(m tgfake.Message) bool {
		return m.ID == review.ID && strings.Contains(m.Text, "1 of 2 approvals — Alice")
	})
	assert.Contains(t, message(group, review.ID).Buttons(), approve, "the buttons stay for the others")

	a = tap(alice, review.ID, approve)
	assert.Contains(t, a.Text, "approved this already")
	assert.Contains(t, message(group, review.ID).Text, "1 of 2 approvals — Alice", "a repeat does not count")
	assert.NotContains(t, logs.String(), "Going ahead with the plan")

	tap(bob, review.ID, approve)
	waitBot(group, "the agent going ahead", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Going ahead with the plan")
	})
	waitBot(group, "both approvers on the review", func(m tgfake.Message) bool {
		return m.ID == review.ID && strings.Contains(m.Text, "approved by Alice, Bob") && len(m.Buttons()) == 0
	})

	// Back to plan mode for a second review: Alice approves, Bob adjusts.
	fake.Text(group, carol, "/plan")
	waitBot(group, "plan mode", func(m tgfake.Message) bool { return strings.Contains(m.Text, "Mode: plan") })
	fake.Text(group, carol, "plan again")
	second := waitBot(group, "the second plan review", func(m tgfake.Message) bool {
		return m.ID != review.ID && strings.Contains(m.Text, "Plan review") && len(m.Buttons()) > 0
	})
	tap(alice, second.ID, approve)
	waitBot(group, "1 of 2 on the second", func(m tgfake.Message) bool {
		return m.ID == second.ID && strings.Contains(m.Text, "1 of 2 approvals — Alice")
	})
	tap(bob, second.ID, "Adjust")
	fake.Text(group, bob, "add tests first")
	waitBot(group, "the agent told of Bob's feedback", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Your feedback: &quot;add tests first&quot;")
	})
	waitBot(group, "who adjusted and why", func(m tgfake.Message) bool {
		return m.ID == second.ID && strings.Contains(m.Text, "Adjust — by Bob: add tests first")
	})

	// A private chat needs one approval.
	fake.Text(alice, alice, "bash please")
	own := waitBot(alice, "the private tool approval", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "echo hello") && len(m.Buttons()) > 0
	})
	_, err := fake.TapButton(alice, alice, own.ID, "Allow")
	require.NoError(t, err)
	waitBot(alice, "the command run", func(m tgfake.Message) bool { return strings.Contains(m.Text, "Output: hello") })
}
