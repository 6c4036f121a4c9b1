package slack

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/leashd/leashd/connectors"
)

// Config is the Slack app's settings, read from LEASHD_SLACK_* variables
// (the field BotToken is LEASHD_SLACK_BOT_TOKEN).
type Config struct {
	BotToken      string   `split_words:"true" desc:"Slack bot token (xoxb-…); enables the Slack connector"`
	AppToken      string   `split_words:"true" desc:"Slack app-level token (xapp-…) for Socket Mode"`
	SigningSecret string   `split_words:"true" desc:"Slack signing secret for HTTP mode (Events API on the web address)"`
	ApiURL        string   `split_words:"true" desc:"Slack Web API base URL (empty: Slack's own)"` //nolint:revive // envconfig names it API_URL only when spelt ApiURL
	AllowedUsers  []string `split_words:"true" desc:"Comma-separated Slack user IDs allowed to prompt the agent and answer questions (empty: nobody)"`
	Approvers     []string `split_words:"true" desc:"Comma-separated Slack user IDs allowed to decide plan reviews, tool approvals and programs' approvals (default: the allowed users)"`
}

// Enabled reports whether the Slack connector should run: a bot token is
// set.
func (c Config) Enabled() bool { return c.BotToken != "" }

// SocketMode reports whether Slack uses Socket Mode (app token set) rather
// than HTTP mode.
func (c Config) SocketMode() bool { return c.AppToken != "" }

// Deciders returns LEASHD_SLACK_APPROVERS, defaulting to the allowed users.
func (c Config) Deciders() []string {
	if len(c.Approvers) > 0 {
		return c.Approvers
	}
	return c.AllowedUsers
}

// Secrets lists the secret values set: the tokens and the signing secret.
func (c Config) Secrets() []string {
	var out []string
	for _, s := range []string{c.BotToken, c.AppToken, c.SigningSecret} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Validate checks the settings and returns every problem at once. HTTP
// mode (a signing secret without an app token) needs leashd to serve HTTP
// (h.HTTP).
func (c Config) Validate(h connectors.Host) error {
	var errs []error
	if !h.HTTP && c.BotToken != "" && c.SigningSecret != "" && c.AppToken == "" {
		errs = append(errs, fmt.Errorf("LEASHD_SLACK_SIGNING_SECRET=%q is invalid: %s", "…", "HTTP mode is served on LEASHD_WEB_ADDR, which is off; set an address or use Socket Mode (LEASHD_SLACK_APP_TOKEN)"))
	}
	if c.BotToken != "" && c.AppToken == "" && c.SigningSecret == "" {
		errs = append(errs, errors.New("LEASHD_SLACK_BOT_TOKEN is set but neither LEASHD_SLACK_APP_TOKEN (Socket Mode) nor LEASHD_SLACK_SIGNING_SECRET (HTTP mode) is"))
	}
	if c.BotToken == "" && (c.AppToken != "" || c.SigningSecret != "") {
		errs = append(errs, errors.New("LEASHD_SLACK_APP_TOKEN or LEASHD_SLACK_SIGNING_SECRET is set without LEASHD_SLACK_BOT_TOKEN"))
	}
	if c.ApiURL != "" {
		if u, err := url.Parse(c.ApiURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("LEASHD_SLACK_API_URL=%q is invalid: %s", c.ApiURL, "use an http(s) base URL such as https://slack.com/api/"))
		}
	}
	return errors.Join(errs...)
}
