package telegram_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/telegram"
)

// strongSecret passes config.WeakSecret.
const strongSecret = "Zq3-vL8_kT2mW9xR4nB7"

// validTelegram is the default settings (valid) of a leashd that serves
// HTTP.
func validTelegram(t *testing.T) (*telegram.Config, *connectors.Host) {
	t.Helper()
	app := &telegram.App{}
	config.Section{Name: app.Name(), Settings: app.Settings()}.Defaults()
	h := &connectors.Host{HTTP: true}
	require.NoError(t, app.Config.Validate(*h))
	return &app.Config, h
}

// telegramRejects each make one setting bad; want are substrings of the
// one error line: variable, value, what is accepted.
var telegramRejects = []struct {
	name   string
	mutate func(*telegram.Config, *connectors.Host)
	want   []string
}{
	{"non-numeric Telegram user ID", func(c *telegram.Config, h *connectors.Host) { c.AllowedUsers = []string{"123", "@alice"} },
		[]string{`LEASHD_TELEGRAM_ALLOWED_USERS="@alice"`, "numbers"}},
	{"Telegram API URL without scheme", func(c *telegram.Config, h *connectors.Host) { c.BotToken = "1:a"; c.ApiURL = "api.telegram.org" },
		[]string{`LEASHD_TELEGRAM_API_URL="api.telegram.org"`, "http(s)"}},
	{"Telegram API URL ftp", func(c *telegram.Config, h *connectors.Host) { c.BotToken = "1:a"; c.ApiURL = "ftp://api.telegram.org" },
		[]string{`LEASHD_TELEGRAM_API_URL="ftp://api.telegram.org"`, "http(s)"}},
	{"webhook URL without secret", func(c *telegram.Config, h *connectors.Host) {
		c.BotToken = "1:a"
		c.WebhookURL = "https://bot.example.com/tg"
	},
		[]string{"LEASHD_TELEGRAM_WEBHOOK_SECRET is empty", "A-Z, a-z, 0-9"}},
	{"webhook URL not https", func(c *telegram.Config, h *connectors.Host) {
		c.BotToken = "1:a"
		c.WebhookURL = "http://bot.example.com/tg"
		c.WebhookSecret = strongSecret
	}, []string{`LEASHD_TELEGRAM_WEBHOOK_URL="http://bot.example.com/tg"`, "https://"}},
	{"webhook with the web page off", func(c *telegram.Config, h *connectors.Host) {
		h.HTTP = false
		c.BotToken = "1:a"
		c.WebhookURL = "https://bot.example.com/tg"
		c.WebhookSecret = strongSecret
	}, []string{`LEASHD_TELEGRAM_WEBHOOK_URL="https://bot.example.com/tg"`, "LEASHD_WEB_ADDR", "off", "long polling"}},
	{"weak webhook secret", func(c *telegram.Config, h *connectors.Host) {
		c.BotToken = "1:a"
		c.WebhookURL = "https://bot.example.com/tg"
		c.WebhookSecret = "abc"
	}, []string{`LEASHD_TELEGRAM_WEBHOOK_SECRET="…" is invalid`, "weak (it is 3 characters long)", "16 to 256"}},
	{"webhook secret of one repeated character", func(c *telegram.Config, h *connectors.Host) {
		c.BotToken = "1:a"
		c.WebhookURL = "https://bot.example.com/tg"
		c.WebhookSecret = strings.Repeat("x", 40)
	}, []string{`LEASHD_TELEGRAM_WEBHOOK_SECRET="…" is invalid`, "one character repeated"}},
	{"webhook secret with bad characters", func(c *telegram.Config, h *connectors.Host) { c.WebhookSecret = "has space!" },
		[]string{`LEASHD_TELEGRAM_WEBHOOK_SECRET="…"`, "1-256 characters"}},
	{"webhook secret too long", func(c *telegram.Config, h *connectors.Host) { c.WebhookSecret = strings.Repeat("a", 257) },
		[]string{`LEASHD_TELEGRAM_WEBHOOK_SECRET="…"`, "1-256 characters"}},
}

func TestConfigValidateRejects(t *testing.T) {
	for _, tt := range telegramRejects {
		t.Run(tt.name, func(t *testing.T) {
			c, h := validTelegram(t)
			tt.mutate(c, h)
			err := c.Validate(*h)
			testenv.OneProblem(t, err, tt.want, c.Secrets())
		})
	}
}

var telegramAccepts = []struct {
	name   string
	mutate func(*telegram.Config, *connectors.Host)
}{
	{"defaults", func(*telegram.Config, *connectors.Host) {}},
	{"a weak webhook secret without a webhook", func(c *telegram.Config, h *connectors.Host) { c.WebhookSecret = "abc" }},
	{"Telegram long polling", func(c *telegram.Config, h *connectors.Host) {
		c.BotToken = "1:a"
		c.AllowedUsers = []string{"123456789", "-100200300"}
	}},
	{"Telegram webhook", func(c *telegram.Config, h *connectors.Host) {
		c.BotToken = "1:a"
		c.WebhookURL = "https://bot.example.com/tg"
		c.WebhookSecret = "Abc_-09" + strings.Repeat("x", 9)
	}},
	{"Telegram API URL of a fake server", func(c *telegram.Config, h *connectors.Host) { c.BotToken = "1:a"; c.ApiURL = "http://127.0.0.1:1234" }},
}

func TestConfigValidateAccepts(t *testing.T) {
	for _, tt := range telegramAccepts {
		t.Run(tt.name, func(t *testing.T) {
			c, h := validTelegram(t)
			tt.mutate(c, h)
			assert.NoError(t, c.Validate(*h))
		})
	}
}

// Every problem is reported at once, one line each.
func TestConfigValidateReportsEverything(t *testing.T) {
	c, h := validTelegram(t)
	c.AllowedUsers = []string{"alice", "bob"}
	c.Approvers = []string{"42", "@bob"}
	err := c.Validate(*h)
	var joined interface{ Unwrap() []error }
	require.True(t, errors.As(err, &joined))
	assert.Len(t, joined.Unwrap(), 3)
	for _, want := range []string{`LEASHD_TELEGRAM_ALLOWED_USERS="alice"`, `"bob"`, `LEASHD_TELEGRAM_APPROVERS="@bob"`, "Telegram user IDs are numbers"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestConfigEnabledDecidersAndSecrets(t *testing.T) {
	c, _ := validTelegram(t)
	assert.False(t, c.Enabled())
	assert.Empty(t, c.Secrets())
	c.BotToken, c.WebhookSecret = "123:abc", "s3cr3t_-0123456789"
	c.AllowedUsers = []string{"7"}
	assert.True(t, c.Enabled())
	assert.Equal(t, []string{"7"}, c.Deciders(), "without approvers the allowed users decide")
	c.Approvers = []string{"43", "44"}
	assert.Equal(t, []string{"43", "44"}, c.Deciders())
	assert.ElementsMatch(t, []string{"123:abc", "s3cr3t_-0123456789"}, c.Secrets())
}
