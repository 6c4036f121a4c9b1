package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/slack/slackfake"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// TestPhoneSlackClaude: in a Slack DM, a shared picture reaches the real
// Claude Code CLI as an image block with its bytes (files.info, then the
// private URL with the bot token), and the agent's send_file shares a
// file in the DM through Slack's external upload flow.
func TestPhoneSlackClaude(t *testing.T) {
	const bot, app, user, dm = "xoxb-phone-test", "xapp-phone-test", "U1", "D1"
	sf := slackfake.New(bot, app)
	defer sf.Close()
	p := startPhone(t, "claude", "LEASHD_SLACK_BOT_TOKEN="+bot, "LEASHD_SLACK_APP_TOKEN="+app,
		"LEASHD_SLACK_API_URL="+sf.APIURL(), "LEASHD_SLACK_ALLOWED_USERS="+user)
	require.True(t, sf.WaitFor(30*time.Second, func() bool { return sf.Connected() > 0 }), "Socket Mode connected")
	slk := slackDriver{t, sf}
	waitDM := func(what string, ok func(slackfake.Message) bool) slackfake.Message {
		t.Helper()
		var found slackfake.Message
		require.True(t, sf.WaitFor(90*time.Second, func() bool {
			for _, m := range sf.Messages(dm) {
				if ok(m) {
					found = m
					return true
				}
			}
			return false
		}), "no message in the DM with %s; messages:\n%s", what, dumpSlack(sf))
		return found
	}
	says := func(s string) func(slackfake.Message) bool {
		return func(m slackfake.Message) bool {
			return strings.Contains(m.Text, s) || strings.Contains(slackfake.Texts(m.Blocks), s)
		}
	}

	pic := testPNG(t, 32, 24, 9)
	p.api.Reply(fakeapi.Text("A screenshot of a gradient."))
	shared := sf.AddFile("screen.png", "image/png", pic)
	slk.push("events_api", slackfake.EventCallback("EvF1", slackfake.FileMessageEvent(dm, "im", user, "1700000001.000100", "", "what is on my screen?", shared)))
	waitDM("the agent's answer", says("A screenshot of a gradient."))
	imgs, err := p.callWith(t, "what is on my screen?").UserImages()
	require.NoError(t, err)
	require.Len(t, imgs, 1)
	assert.Equal(t, pic, imgs[0].Data)

	log := []byte("all green\n")
	require.NoError(t, os.WriteFile(filepath.Join(p.dir, "ci.log"), log, 0o644))
	p.api.Reply(fakeapi.Tool(sendFileTool, map[string]string{"path": "ci.log", "caption": "the CI log"}), fakeapi.Text("Shared the log."))
	slk.push("events_api", slackfake.EventCallback("EvF2", slackfake.MessageEvent(dm, "im", user, "1700000002.000100", "", "send me the CI log")))
	ask := waitDM("the tool approval", func(m slackfake.Message) bool {
		for _, b := range slackfake.Buttons(m.Blocks) {
			if b.Text == "Allow" {
				return true
			}
		}
		return false
	})
	slk.tap(user, ask, "Allow")
	waitDM("the agent's last words", says("Shared the log."))
	files := sf.Shared()
	require.Len(t, files, 1)
	assert.Equal(t, slackfake.SharedFile{Channel: dm, Name: "ci.log", Title: "ci.log", Comment: "the CI log", Data: log}, files[0])
}
