package slack_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/slack"
)

// validSlack is the default settings (valid) of a leashd that serves HTTP.
func validSlack(t *testing.T) (*slack.Config, *connectors.Host) {
	t.Helper()
	app := &slack.App{}
	config.Section{Name: app.Name(), Settings: app.Settings()}.Defaults()
	h := &connectors.Host{HTTP: true}
	require.NoError(t, app.Config.Validate(*h))
	return &app.Config, h
}

// slackRejects each make one setting bad; want are substrings of the one
// error line.
var slackRejects = []struct {
	name   string
	mutate func(*slack.Config, *connectors.Host)
	want   []string
}{
	{"slack bot token alone", func(c *slack.Config, h *connectors.Host) { c.BotToken = "xoxb-1" },
		[]string{"LEASHD_SLACK_BOT_TOKEN is set", "LEASHD_SLACK_APP_TOKEN (Socket Mode)", "LEASHD_SLACK_SIGNING_SECRET (HTTP mode)"}},
	{"slack app token without bot token", func(c *slack.Config, h *connectors.Host) { c.AppToken = "xapp-1" },
		[]string{"without LEASHD_SLACK_BOT_TOKEN"}},
	{"slack signing secret without bot token", func(c *slack.Config, h *connectors.Host) { c.SigningSecret = "sig" },
		[]string{"without LEASHD_SLACK_BOT_TOKEN"}},
	{"slack HTTP mode with the web page off", func(c *slack.Config, h *connectors.Host) {
		h.HTTP = false
		c.BotToken = "xoxb-1"
		c.SigningSecret = "sig"
	}, []string{"LEASHD_SLACK_SIGNING_SECRET=", "LEASHD_WEB_ADDR", "Socket Mode"}},
	{"slack API URL", func(c *slack.Config, h *connectors.Host) { c.ApiURL = "slack.com/api" },
		[]string{`LEASHD_SLACK_API_URL="slack.com/api"`, "http(s)"}},
}

func TestConfigValidateRejects(t *testing.T) {
	for _, tt := range slackRejects {
		t.Run(tt.name, func(t *testing.T) {
			c, h := validSlack(t)
			tt.mutate(c, h)
			err := c.Validate(*h)
			testenv.OneProblem(t, err, tt.want, c.Secrets())
		})
	}
}

var slackAccepts = []struct {
	name   string
	mutate func(*slack.Config, *connectors.Host)
}{
	{"defaults", func(*slack.Config, *connectors.Host) {}},
	{"Slack Socket Mode with the web page off", func(c *slack.Config, h *connectors.Host) {
		h.HTTP = false
		c.BotToken = "xoxb-1"
		c.AppToken = "xapp-1"
	}},
	{"Slack HTTP mode", func(c *slack.Config, h *connectors.Host) { c.BotToken = "xoxb-1"; c.SigningSecret = "sig" }},
	{"Slack API URL", func(c *slack.Config, h *connectors.Host) { c.ApiURL = "http://127.0.0.1:9/api/" }},
}

func TestConfigValidateAccepts(t *testing.T) {
	for _, tt := range slackAccepts {
		t.Run(tt.name, func(t *testing.T) {
			c, h := validSlack(t)
			tt.mutate(c, h)
			assert.NoError(t, c.Validate(*h))
		})
	}
}

func TestConfigModesDecidersAndSecrets(t *testing.T) {
	c, _ := validSlack(t)
	assert.False(t, c.Enabled())
	assert.Empty(t, c.Secrets())
	c.BotToken, c.AppToken, c.SigningSecret = "xoxb-1", "xapp-1", "signing"
	c.AllowedUsers = []string{"U1", "U2"}
	assert.True(t, c.Enabled())
	assert.True(t, c.SocketMode())
	assert.Equal(t, []string{"U1", "U2"}, c.Deciders(), "approvers default to the allowed users")
	c.Approvers = []string{"U2"}
	assert.Equal(t, []string{"U2"}, c.Deciders())
	assert.ElementsMatch(t, []string{"xoxb-1", "xapp-1", "signing"}, c.Secrets())
}
