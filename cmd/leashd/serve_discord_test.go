package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/discord/discordfake"
)

// TestServeDiscord runs leashd configured only by LEASHD_DISCORD_*
// variables against a fake Discord, the real discordgo client on both the
// Gateway and the REST API: the chat commands are registered as
// application commands; a teammate's mention starts a thread where the
// demo agent's plan is posted with its decisions; a tap by someone who is
// not an approver is refused privately and changes nothing; the
// approver's tap approves it and the agent goes on; a stranger's DM gets
// their user ID once; the token never reaches the log.
func TestServeDiscord(t *testing.T) {
	const bot = "serve-discord-SECRET-token"
	const dev, lead, stranger, channel = "1001", "1002", "1003", "2001"
	fake := discordfake.New(bot)
	defer fake.Close()
	url, logs, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_DISCORD_BOT_TOKEN="+bot,
		"LEASHD_DISCORD_API_URL="+fake.URL(),
		"LEASHD_DISCORD_ALLOWED_USERS="+dev,
		"LEASHD_DISCORD_APPROVERS="+lead)
	defer func() { assert.NoError(t, stop()) }()
	const limit = 15 * time.Second
	require.True(t, fake.WaitFor(limit, func() bool { return fake.Connected() > 0 && len(fake.Commands()) > 0 }), "Gateway connected, commands registered:\n%s", logs)
	assert.Contains(t, string(fake.Commands()), `"name":"clear"`)
	require.Eventually(t, func() bool { return getJSON(t, url+"/readyz", nil) == http.StatusOK }, limit, 10*time.Millisecond)

	msg, err := fake.Post(dev, channel, "plan please", true)
	require.NoError(t, err)
	var thread string
	require.True(t, fake.WaitFor(limit, func() bool { thread = fake.ThreadOf(msg); return thread != "" }), "a thread for the session")
	find := func(what string, ok func(discordfake.Message) bool) discordfake.Message {
		t.Helper()
		var found discordfake.Message
		require.True(t, fake.WaitFor(limit, func() bool {
			for _, m := range fake.Messages(thread) {
				if ok(m) {
					found = m
					return true
				}
			}
			return false
		}), "%s; messages: %+v", what, fake.Messages(""))
		return found
	}
	plan := find("the plan's decisions", func(m discordfake.Message) bool {
		return len(discordfake.Buttons(m.Components)) == 4 && strings.Contains(m.Content, "Only approvers can decide")
	})
	click := func(user string) string {
		t.Helper()
		for _, b := range discordfake.Buttons(plan.Components) {
			if b.Label == "Approve, auto-accept edits" {
				id, err := fake.Click(user, plan, b.CustomID)
				require.NoError(t, err)
				return id
			}
		}
		t.Fatalf("no approve button: %+v", plan)
		return ""
	}
	click(dev)
	require.True(t, fake.WaitFor(limit, func() bool {
		for _, e := range fake.Ephemerals() {
			if e.User == dev && strings.Contains(e.Content, "approver") {
				return true
			}
		}
		return false
	}), "the non-approver is told only approvers decide: %+v", fake.Ephemerals())
	now, _ := fake.Message(plan.ID)
	assert.True(t, now.HasComponents(), "a refused tap leaves the plan waiting")

	click(lead)
	find("the approval on the plan", func(m discordfake.Message) bool {
		return m.ID == plan.ID && !m.HasComponents() && strings.Contains(m.Content, "<@"+lead+">")
	})
	find("the agent going on", func(m discordfake.Message) bool { return m.ID != plan.ID && strings.Contains(m.Content, "hello.txt") })
	for _, it := range fake.Interactions() {
		assert.Less(t, it.Responded.Sub(it.Sent), discordfake.AckDeadline, "every tap acknowledged within 3 s")
	}

	strangerTold(t, fake, stranger)
	assert.Empty(t, fake.Rejected(), "Discord would refuse a request leashd sent")
	assert.NotContains(t, logs.String(), bot)
}

// strangerTold checks a stranger's DM is answered with their user ID and
// the variable to add it to.
func strangerTold(t *testing.T, fake *discordfake.Server, stranger string) {
	t.Helper()
	_, err := fake.DM(stranger, "3001", "hi")
	require.NoError(t, err)
	require.True(t, fake.WaitFor(15*time.Second, func() bool {
		for _, m := range fake.Messages("3001") {
			if strings.Contains(m.Content, "Your Discord user ID is "+stranger) && strings.Contains(m.Content, "LEASHD_DISCORD_ALLOWED_USERS") {
				return true
			}
		}
		return false
	}), "the stranger is told their ID")
}
