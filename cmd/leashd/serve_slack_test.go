package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/slack/slackfake"
)

// TestServeSlackSocketMode runs leashd configured only by LEASHD_SLACK_*
// variables against a fake Slack (Web API and Socket Mode websocket,
// driven through slack-go): a teammate mentions the bot in a channel, the
// agent's plan is posted in the thread, a tap by someone who is not an
// approver is refused and changes nothing, and the approver's tap approves
// it so the agent goes on.
func TestServeSlackSocketMode(t *testing.T) {
	const bot, app = "xoxb-serve-test", "xapp-serve-test"
	fake := slackfake.New(bot, app)
	defer fake.Close()
	const dev, lead = "UDEV", "ULEAD"
	_, logs, stop := startServe(t, t.TempDir(),
		"LEASHD_SLACK_BOT_TOKEN="+bot,
		"LEASHD_SLACK_APP_TOKEN="+app,
		"LEASHD_SLACK_API_URL="+fake.APIURL(),
		"LEASHD_SLACK_ALLOWED_USERS="+dev,
		"LEASHD_SLACK_APPROVERS="+lead)
	defer func() { assert.NoError(t, stop()) }()
	require.True(t, fake.WaitFor(10*time.Second, func() bool { return fake.Connected() > 0 }), "Socket Mode connected")

	var seq int
	push := func(typ string, payload any) {
		t.Helper()
		env, err := fake.Push(typ, payload, 0)
		require.NoError(t, err)
		require.True(t, fake.WaitFor(10*time.Second, func() bool { _, ok := fake.Acked(env); return ok }), "envelope %s acknowledged", env)
	}
	waitMsg := func(what string, ok func(slackfake.Message) bool) slackfake.Message {
		t.Helper()
		var found slackfake.Message
		require.True(t, fake.WaitFor(10*time.Second, func() bool {
			for _, m := range fake.Messages("C1") {
				if ok(m) {
					found = m
					return true
				}
			}
			return false
		}), "no message in C1 with %s; messages:\n%s", what, dumpSlack(fake))
		return found
	}
	tap := func(user string, m slackfake.Message, label string) {
		t.Helper()
		for _, b := range slackfake.Buttons(m.Blocks) {
			if b.Text == label {
				push("interactive", slackfake.BlockAction(user, m, b.ActionID, b.Value))
				return
			}
		}
		t.Fatalf("no button %q on %s: %+v", label, m.TS, slackfake.Buttons(m.Blocks))
	}

	seq++
	ts := fmt.Sprintf("1700000000.%06d", seq)
	text := "<@" + slackfake.BotUserID + "> plan"
	push("events_api", slackfake.EventCallback("Ev1", slackfake.MentionEvent("C1", dev, ts, "", text)))
	push("events_api", slackfake.EventCallback("Ev2", slackfake.MessageEvent("C1", "channel", dev, ts, "", text)))

	waitMsg("the plan in the thread", func(m slackfake.Message) bool {
		return m.ThreadTS == ts && strings.Contains(slackfake.Texts(m.Blocks), "Plan: add a greeting")
	})
	plan := waitMsg("the plan's buttons in the thread", func(m slackfake.Message) bool {
		return m.ThreadTS == ts && len(slackfake.Buttons(m.Blocks)) == 4 && strings.Contains(slackfake.Texts(m.Blocks), "Only approvers can decide")
	})
	tap(dev, plan, "Approve, auto-accept edits")
	require.True(t, fake.WaitFor(10*time.Second, func() bool {
		for _, e := range fake.Ephemerals() {
			if e.User == dev && strings.Contains(e.Text, "approver") {
				return true
			}
		}
		return false
	}), "the non-approver is told only approvers decide: %+v", fake.Ephemerals())
	for _, m := range fake.Messages("C1") {
		if m.TS == plan.TS {
			assert.NotEmpty(t, slackfake.Buttons(m.Blocks), "a refused tap leaves the plan waiting")
		}
	}

	tap(lead, plan, "Approve, auto-accept edits")
	waitMsg("the approval recorded on the plan", func(m slackfake.Message) bool {
		return m.TS == plan.TS && len(slackfake.Buttons(m.Blocks)) == 0 && strings.Contains(slackfake.Texts(m.Blocks), lead)
	})
	waitMsg("the agent going on in the thread", func(m slackfake.Message) bool {
		return m.ThreadTS == ts && strings.Contains(m.Text+slackfake.Texts(m.Blocks), "hello.txt") && m.TS != plan.TS
	})
	assert.NotContains(t, logs.String(), bot)
	assert.NotContains(t, logs.String(), app)
}

func dumpSlack(fake *slackfake.Server) string {
	var b strings.Builder
	for _, m := range fake.Messages("C1") {
		fmt.Fprintf(&b, "[%s thread=%s] %q %q buttons=%+v\n", m.TS, m.ThreadTS, m.Text, slackfake.Texts(m.Blocks), slackfake.Buttons(m.Blocks))
	}
	return b.String()
}
