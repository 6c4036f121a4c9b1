package telegram

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/connectors"
)

// Config is the Telegram app's settings, read from LEASHD_TELEGRAM_*
// variables (the field BotToken is LEASHD_TELEGRAM_BOT_TOKEN).
type Config struct {
	BotToken      string   `split_words:"true" desc:"Telegram bot token from @BotFather; enables the Telegram connector"`
	ApiURL        string   `split_words:"true" default:"https://api.telegram.org" desc:"Telegram Bot API base URL; leashd appends /bot<token>/<method>"` //nolint:revive // envconfig names it API_URL only when spelt ApiURL
	AllowedUsers  []string `split_words:"true" desc:"Comma-separated numeric Telegram user IDs allowed to use the bot (empty: nobody)"`
	WebhookURL    string   `split_words:"true" desc:"Public HTTPS URL for webhook mode (empty: long polling)"`
	WebhookSecret string   `split_words:"true" desc:"Secret Telegram sends in X-Telegram-Bot-Api-Secret-Token in webhook mode (required with the webhook URL): 16-256 characters A-Z, a-z, 0-9, _ and -, not one character repeated"`
	Approvers     []string `split_words:"true" desc:"Comma-separated numeric Telegram user IDs allowed to decide plan reviews, tool approvals and programs' approvals (default: the allowed users)"`
}

// Enabled reports whether the Telegram connector should run: a bot token
// is set.
func (c Config) Enabled() bool { return c.BotToken != "" }

// Deciders are the Telegram user IDs that may decide plan reviews and tool
// approvals: LEASHD_TELEGRAM_APPROVERS, or the allowed users.
func (c Config) Deciders() []string {
	if len(c.Approvers) > 0 {
		return c.Approvers
	}
	return c.AllowedUsers
}

// Secrets lists the secret values set: the bot token and the webhook
// secret.
func (c Config) Secrets() []string { return nonEmpty(c.BotToken, c.WebhookSecret) }

// Validate checks the settings and returns every problem at once, each
// naming the variable, the bad value and what is accepted. Webhook mode
// needs leashd to serve HTTP (h.HTTP).
func (c Config) Validate(h connectors.Host) error {
	var errs []error
	bad := func(name, value, accepted string) {
		errs = append(errs, fmt.Errorf("LEASHD_TELEGRAM_%s=%q is invalid: %s", name, value, accepted))
	}
	if !h.HTTP && c.WebhookURL != "" {
		bad("WEBHOOK_URL", c.WebhookURL, "webhook mode is served on LEASHD_WEB_ADDR, which is off; set an address or use long polling")
	}
	if c.BotToken != "" {
		if u, err := url.Parse(c.ApiURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("API_URL", c.ApiURL, "use an http(s) base URL such as https://api.telegram.org")
		}
	}
	for _, list := range []struct {
		name string
		ids  []string
	}{{"ALLOWED_USERS", c.AllowedUsers}, {"APPROVERS", c.Approvers}} {
		for _, id := range list.ids {
			if _, err := strconv.ParseInt(id, 10, 64); err != nil {
				bad(list.name, id, "Telegram user IDs are numbers, comma-separated (e.g. 123456789,987654321)")
			}
		}
	}
	if c.WebhookURL != "" {
		if u, err := url.Parse(c.WebhookURL); err != nil || u.Scheme != "https" || u.Host == "" {
			bad("WEBHOOK_URL", c.WebhookURL, "use a public https:// URL")
		}
		if c.WebhookSecret == "" {
			errs = append(errs, errors.New("LEASHD_TELEGRAM_WEBHOOK_SECRET is empty: webhook mode needs a secret (16-256 random characters A-Z, a-z, 0-9, _ and -, e.g. from `openssl rand -hex 32`)"))
		} else if why := config.WeakSecret(c.WebhookSecret); why != "" && telegramAccepts(c.WebhookSecret) {
			bad("WEBHOOK_SECRET", "…", fmt.Sprintf("the webhook is public and this secret is weak (%s): use %d to 256 %s", why, config.MinSecretLength, config.WeakSecretAdvice))
		}
	}
	if s := c.WebhookSecret; s != "" && !telegramAccepts(s) {
		bad("WEBHOOK_SECRET", "…", "use 1-256 characters A-Z, a-z, 0-9, _ and -")
	}
	return errors.Join(errs...)
}

// telegramAccepts applies Telegram's rule for a webhook's secret_token:
// 1-256 characters A-Z, a-z, 0-9, _ and -. leashd asks more of a secret
// guarding a public endpoint (config.WeakSecret: 16 or more, not one
// character repeated); Validate checks both, Run only Telegram's.
func telegramAccepts(s string) bool {
	if len(s) < 1 || len(s) > 256 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
