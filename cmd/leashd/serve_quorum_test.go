package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/slack/slackfake"
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
	_, logs, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_TELEGRAM_BOT_TOKEN="+fake.Token(),
		"LEASHD_TELEGRAM_API_URL="+fake.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=11,12,13,14",
		"LEASHD_TELEGRAM_APPROVERS=11,12,13",
		"LEASHD_APPROVAL_QUORUM=2")
	defer func() { require.NoError(t, stop()) }()

	c := tgQuorumChat{t: t, fake: fake, logs: logs, group: group}
	review := c.firstReviewNeedsTwo(alice, bob, carol, dave)
	c.secondReviewAdjusted(review.ID, alice, bob, carol)

	// A private chat needs one approval.
	fake.Text(alice, alice, "bash please")
	own := c.waitBot(alice, "the private tool approval", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "echo hello") && len(m.Buttons()) > 0
	})
	_, err := fake.TapButton(alice, alice, own.ID, "Allow")
	require.NoError(t, err)
	c.waitBot(alice, "the command run", func(m tgfake.Message) bool { return strings.Contains(m.Text, "Output: hello") })
}

// tgReviewApprove is the plan review's approving button in Telegram.
const tgReviewApprove = "Approve, review edits"

// tgQuorumChat is the Telegram group of TestServeTelegramGroupQuorum: it
// waits for the bot's messages, finds them and taps their buttons.
type tgQuorumChat struct {
	t     *testing.T
	fake  *tgfake.Server
	logs  *testenv.Buffer
	group int64
}

// waitBot waits up to a minute for a bot message in chat that match
// accepts and returns it, failing the test (with the log) if none comes.
func (c tgQuorumChat) waitBot(chat int64, what string, match func(tgfake.Message) bool) tgfake.Message {
	c.t.Helper()
	// A group gets a message every 3 s (Telegram's 20 a minute).
	found, ok := waitBotMessage(c.fake, chat, time.Minute, match)
	require.True(c.t, ok, "no bot message in chat %d with %s; messages: %+v\nlog:\n%s", chat, what, c.fake.BotMessages(chat), c.logs)
	return found
}

// message returns the bot's message id in chat as it is now, failing the
// test if it is gone.
func (c tgQuorumChat) message(chat int64, id int) tgfake.Message {
	for _, m := range c.fake.BotMessages(chat) {
		if m.ID == id {
			return m
		}
	}
	c.t.Fatalf("message %d gone", id)
	return tgfake.Message{}
}

// tap taps button on message msg in the group as user and returns the
// answer to the tap, failing the test if there is none within 10 s.
func (c tgQuorumChat) tap(user int64, msg int, button string) tgfake.CallbackAnswer {
	c.t.Helper()
	q, err := c.fake.TapButton(c.group, user, msg, button)
	require.NoError(c.t, err)
	var a tgfake.CallbackAnswer
	require.True(c.t, c.fake.Wait(10*time.Second, func() bool {
		var ok bool
		a, ok = c.fake.CallbackAnswer(q)
		return ok
	}), "tap %s by %d not answered", button, user)
	return a
}

// firstReviewNeedsTwo checks the first plan review, asked for by carol:
// dave, no approver, is refused; alice's approval leaves it pending at
// "1 of 2 approvals — Alice" with the buttons kept; her repeat is told and
// not counted; bob's approval resolves it and the agent goes ahead. It
// returns the review's message.
func (c tgQuorumChat) firstReviewNeedsTwo(alice, bob, carol, dave int64) tgfake.Message {
	c.t.Helper()
	t, group, approve := c.t, c.group, tgReviewApprove
	c.fake.Text(group, carol, "plan")
	review := c.waitBot(group, "the plan review", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Plan review") && len(m.Buttons()) > 0
	})
	// Dave may prompt but is no approver.
	a := c.tap(dave, review.ID, approve)
	assert.Contains(t, a.Text, "only approvers")

	a = c.tap(alice, review.ID, approve)
	assert.Contains(t, a.Text, "more approvers are needed")
	c.waitBot(group, "1 of 2 approvals", func(m tgfake.Message) bool {
		return m.ID == review.ID && strings.Contains(m.Text, "1 of 2 approvals — Alice")
	})
	assert.Contains(t, c.message(group, review.ID).Buttons(), approve, "the buttons stay for the others")

	a = c.tap(alice, review.ID, approve)
	assert.Contains(t, a.Text, "approved this already")
	assert.Contains(t, c.message(group, review.ID).Text, "1 of 2 approvals — Alice", "a repeat does not count")
	assert.NotContains(t, c.logs.String(), "Going ahead with the plan")

	c.tap(bob, review.ID, approve)
	c.waitBot(group, "the agent going ahead", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Going ahead with the plan")
	})
	c.waitBot(group, "both approvers on the review", func(m tgfake.Message) bool {
		return m.ID == review.ID && strings.Contains(m.Text, "approved by Alice, Bob") && len(m.Buttons()) == 0
	})
	return review
}

// secondReviewAdjusted checks a second plan review (not the first, id
// first): alice's approval counts one of two, and bob's Adjust rejects it
// at once, the agent told his feedback and the review who adjusted and why.
func (c tgQuorumChat) secondReviewAdjusted(first int, alice, bob, carol int64) {
	c.t.Helper()
	group := c.group
	// Back to plan mode for a second review: Alice approves, Bob adjusts.
	c.fake.Text(group, carol, "/plan")
	c.waitBot(group, "plan mode", func(m tgfake.Message) bool { return strings.Contains(m.Text, "Mode: plan") })
	c.fake.Text(group, carol, "plan again")
	second := c.waitBot(group, "the second plan review", func(m tgfake.Message) bool {
		return m.ID != first && strings.Contains(m.Text, "Plan review") && len(m.Buttons()) > 0
	})
	c.tap(alice, second.ID, tgReviewApprove)
	c.waitBot(group, "1 of 2 on the second", func(m tgfake.Message) bool {
		return m.ID == second.ID && strings.Contains(m.Text, "1 of 2 approvals — Alice")
	})
	c.tap(bob, second.ID, "Adjust")
	c.fake.Text(group, bob, "add tests first")
	c.waitBot(group, "the agent told of Bob's feedback", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Your feedback: &quot;add tests first&quot;")
	})
	c.waitBot(group, "who adjusted and why", func(m tgfake.Message) bool {
		return m.ID == second.ID && strings.Contains(m.Text, "Adjust — by Bob: add tests first")
	})
}

// TestServeSlackChannelQuorum: in a Slack channel with
// LEASHD_APPROVAL_QUORUM=2 and three approvers, a plan review needs two:
// one approval leaves it pending and shows "1 of 2 approvals" with the
// buttons kept, a repeat tap is told privately and not counted, the second
// approver resolves it and the agent goes on. A tool approval allowed by
// one approver is denied at once by another's Deny.
func TestServeSlackChannelQuorum(t *testing.T) {
	const bot, app = "xoxb-quorum-test", "xapp-quorum-test"
	fake := slackfake.New(bot, app)
	defer fake.Close()
	const dev, ua, ub, uc = "UDEV", "UA", "UB", "UC"
	_, _, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_SLACK_BOT_TOKEN="+bot,
		"LEASHD_SLACK_APP_TOKEN="+app,
		"LEASHD_SLACK_API_URL="+fake.APIURL(),
		"LEASHD_SLACK_ALLOWED_USERS="+dev,
		"LEASHD_SLACK_APPROVERS=UA,UB,UC",
		"LEASHD_APPROVAL_QUORUM=2")
	defer func() { assert.NoError(t, stop()) }()
	require.True(t, fake.WaitFor(10*time.Second, func() bool { return fake.Connected() > 0 }), "Socket Mode connected")

	slk := slackDriver{t, fake}
	slackPlanNeedsTwo(slk, dev, ua, ub)
	slackToolDeniedByOne(slk, dev, ua, uc)
}

// slackMention pushes an app_mention event id of the bot by user at ts in
// channel C1, with text after the mention.
func slackMention(d slackDriver, user, id, ts, text string) {
	d.t.Helper()
	text = "<@" + slackfake.BotUserID + "> " + text
	d.push("events_api", slackfake.EventCallback(id, slackfake.MentionEvent("C1", user, ts, "", text)))
}

// slackMessage returns the message ts in channel C1 as it is now, failing
// the test if it is gone.
func slackMessage(d slackDriver, ts string) slackfake.Message {
	for _, m := range d.fake.Messages("C1") {
		if m.TS == ts {
			return m
		}
	}
	d.t.Fatalf("message %s gone", ts)
	return slackfake.Message{}
}

// slackPlanNeedsTwo checks a plan review asked for by dev: ua's approval
// leaves it at "1 of 2 approvals" with the buttons kept, ua's repeat is
// told privately and not counted, and ub's approval resolves it so the
// agent goes on.
func slackPlanNeedsTwo(d slackDriver, dev, ua, ub string) {
	d.t.Helper()
	t, fake := d.t, d.fake
	const approve = "Approve, auto-accept edits"
	const ts1 = "1700000000.000001"
	slackMention(d, dev, "EvQ1", ts1, "plan")
	plan := d.waitMsg("the plan's buttons", func(m slackfake.Message) bool {
		return m.ThreadTS == ts1 && len(slackfake.Buttons(m.Blocks)) == 4
	})
	d.tap(ua, plan, approve)
	plan = d.waitMsg("1 of 2 approvals", func(m slackfake.Message) bool {
		return m.TS == plan.TS && strings.Contains(slackfake.Texts(m.Blocks), "1 of 2 approvals — <@UA>")
	})
	assert.Len(t, slackfake.Buttons(plan.Blocks), 4, "the buttons stay for the others")

	d.tap(ua, plan, approve)
	require.True(t, fake.WaitFor(10*time.Second, func() bool {
		for _, e := range fake.Ephemerals() {
			if e.User == ua && strings.Contains(e.Text, "approved this already") {
				return true
			}
		}
		return false
	}), "the repeat tap is told: %+v", fake.Ephemerals())
	assert.Contains(t, slackfake.Texts(slackMessage(d, plan.TS).Blocks), "1 of 2 approvals — <@UA>", "a repeat does not count")
	assert.NotEmpty(t, slackfake.Buttons(slackMessage(d, plan.TS).Blocks))

	d.tap(ub, plan, approve)
	d.waitMsg("both approvers on the plan", func(m slackfake.Message) bool {
		return m.TS == plan.TS && len(slackfake.Buttons(m.Blocks)) == 0 &&
			strings.Contains(slackfake.Texts(m.Blocks), "approved by <@UA>, <@UB>")
	})
	d.waitMsg("the agent going on", func(m slackfake.Message) bool {
		return m.ThreadTS == ts1 && m.TS != plan.TS && strings.Contains(m.Text+slackfake.Texts(m.Blocks), "hello.txt")
	})
}

// slackToolDeniedByOne checks a tool approval asked for by dev: ua's
// Allow counts one of two, and uc's Deny denies it at once and the agent
// is told.
func slackToolDeniedByOne(d slackDriver, dev, ua, uc string) {
	d.t.Helper()
	const ts2 = "1700000000.000002"
	slackMention(d, dev, "EvQ2", ts2, "bash please")
	tool := d.waitMsg("the tool approval", func(m slackfake.Message) bool {
		return m.ThreadTS == ts2 && len(slackfake.Buttons(m.Blocks)) > 0
	})
	d.tap(ua, tool, "Allow")
	d.waitMsg("1 of 2 on the tool", func(m slackfake.Message) bool {
		return m.TS == tool.TS && strings.Contains(slackfake.Texts(m.Blocks), "1 of 2 approvals — <@UA>")
	})
	d.tap(uc, tool, "Deny")
	d.waitMsg("denied at once by UC", func(m slackfake.Message) bool {
		return m.TS == tool.TS && len(slackfake.Buttons(m.Blocks)) == 0 && strings.Contains(slackfake.Texts(m.Blocks), "Deny* — <@UC>")
	})
	d.waitMsg("the agent told it was denied", func(m slackfake.Message) bool {
		return m.ThreadTS == ts2 && strings.Contains(m.Text+slackfake.Texts(m.Blocks), "denied")
	})
}

// TestServeQuorumSurvivesRestart: a channel's plan review has one of two
// approvals when leashd stops; after the restart the same approver's tap
// is still told it counts already (and the web page shows "1 of 2
// approvals — UA" again), and a second approver's tap completes
// the quorum; the audit log names both.
func TestServeQuorumSurvivesRestart(t *testing.T) {
	const bot, app = "xoxb-quorum-restart", "xapp-quorum-restart"
	fake := slackfake.New(bot, app)
	defer fake.Close()
	dir := testenv.PrivateDir(t)
	env := []string{
		"LEASHD_SLACK_BOT_TOKEN=" + bot, "LEASHD_SLACK_APP_TOKEN=" + app, "LEASHD_SLACK_API_URL=" + fake.APIURL(),
		"LEASHD_SLACK_ALLOWED_USERS=UDEV", "LEASHD_SLACK_APPROVERS=UA,UB", "LEASHD_APPROVAL_QUORUM=2",
	}
	slk := slackDriver{t, fake}
	push := slk.push
	waitMsg := slk.waitMsg
	tap := slk.tap
	const approve, ts = "Approve, review edits", "1700000000.000009"

	_, _, stop := startServe(t, dir, env...)
	require.True(t, fake.WaitFor(10*time.Second, func() bool { return fake.Connected() > 0 }), "Socket Mode connected")
	push("events_api", slackfake.EventCallback("EvR1", slackfake.MentionEvent("C1", "UDEV", ts, "", "<@"+slackfake.BotUserID+"> plan")))
	plan := waitMsg("the plan's buttons", func(m slackfake.Message) bool {
		return m.ThreadTS == ts && len(slackfake.Buttons(m.Blocks)) == 4
	})
	tap("UA", plan, approve)
	plan = waitMsg("1 of 2 approvals", func(m slackfake.Message) bool {
		return m.TS == plan.TS && strings.Contains(slackfake.Texts(m.Blocks), "1 of 2 approvals — <@UA>")
	})
	require.NoError(t, stop())
	connected := fake.Connected()

	url, logs, stop := startServe(t, dir, env...)
	defer func() { assert.NoError(t, stop()) }()
	require.True(t, fake.WaitFor(10*time.Second, func() bool { return fake.Connected() > connected }), "Socket Mode connected again")
	plan = waitMsg("the plan's buttons after the restart", func(m slackfake.Message) bool {
		return m.TS == plan.TS && len(slackfake.Buttons(m.Blocks)) == 4
	})
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "answerable again") }, 10*time.Second, 10*time.Millisecond,
		"the plan review is pending again: %s", logs)
	// The web page shows it again, with the approval it had.
	waitEvent(t, url, "", `"quorum_text":"1 of 2 approvals — UA"`)
	tap("UA", plan, approve)
	require.True(t, fake.WaitFor(10*time.Second, func() bool {
		for _, e := range fake.Ephemerals() {
			if e.User == "UA" && strings.Contains(e.Text, "approved this already") {
				return true
			}
		}
		return false
	}), "UA's approval from before the restart still counts: %+v", fake.Ephemerals())
	tap("UB", plan, approve)
	waitMsg("both approvers on the plan", func(m slackfake.Message) bool {
		return m.TS == plan.TS && len(slackfake.Buttons(m.Blocks)) == 0 &&
			strings.Contains(slackfake.Texts(m.Blocks), "approved by <@UA>, <@UB>")
	})
	require.Eventually(t, func() bool {
		var out bytes.Buffer
		if err := run(t.Context(), []string{"audit", "--json"}, nil, &out, io.Discard); err != nil {
			return false
		}
		s := out.String()
		return strings.Contains(s, `"status":"answered"`) && strings.Contains(s, `"by":"UA"`) && strings.Contains(s, `"by":"UB"`)
	}, 10*time.Second, 50*time.Millisecond, "the audit log names both approvers")
}
