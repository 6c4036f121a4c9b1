package discord

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/leashd/leashd/connectors"
)

// Config is the Discord app's settings, read from LEASHD_DISCORD_*
// variables (the field BotToken is LEASHD_DISCORD_BOT_TOKEN).
type Config struct {
	BotToken     string   `split_words:"true" desc:"Discord bot token; enables the Discord connector"`
	AllowedUsers []string `split_words:"true" desc:"Comma-separated Discord user IDs allowed to prompt the agent and answer questions (empty: nobody, unless a role allows them)"`
	AllowedRoles []string `split_words:"true" desc:"Comma-separated Discord role IDs whose members may prompt the agent and answer questions in the server's channels (not in DMs)"`
	Approvers    []string `split_words:"true" desc:"Comma-separated Discord user IDs allowed to decide plan reviews, tool approvals and programs' approvals (default: the allowed users and roles)"`
	ApiURL       string   `split_words:"true" desc:"Discord API base URL, for tests against a fake Discord (empty: https://discord.com/)"` //nolint:revive // envconfig names it API_URL only when spelt ApiURL
}

// Enabled reports whether the Discord connector should run: a bot token
// is set.
func (c Config) Enabled() bool { return c.BotToken != "" }

// Secrets lists the secret values set: the bot token.
func (c Config) Secrets() []string {
	if c.BotToken == "" {
		return nil
	}
	return []string{c.BotToken}
}

// Validate checks the settings and returns every problem at once.
func (c Config) Validate(connectors.Host) error {
	var errs []error
	check := func(name string, ids []string) {
		for _, id := range ids {
			if id = strings.TrimSpace(id); id != "" && !validSnowflake(id) {
				errs = append(errs, fmt.Errorf("%s: %q is invalid: use Discord IDs (17 to 20 digits; Developer Mode → right-click → Copy ID)", name, id))
			}
		}
	}
	check("LEASHD_DISCORD_ALLOWED_USERS", c.AllowedUsers)
	check("LEASHD_DISCORD_ALLOWED_ROLES", c.AllowedRoles)
	check("LEASHD_DISCORD_APPROVERS", c.Approvers)
	if c.BotToken == "" && (len(c.AllowedUsers) > 0 || len(c.AllowedRoles) > 0 || len(c.Approvers) > 0) {
		errs = append(errs, errors.New("LEASHD_DISCORD_ALLOWED_USERS, _ALLOWED_ROLES or _APPROVERS is set without LEASHD_DISCORD_BOT_TOKEN"))
	}
	if strings.ContainsAny(c.BotToken, " \t\r\n") {
		errs = append(errs, errors.New("LEASHD_DISCORD_BOT_TOKEN is invalid: it contains spaces; give the token alone, without \"Bot \""))
	}
	if c.ApiURL != "" {
		if u, err := url.Parse(c.ApiURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("LEASHD_DISCORD_API_URL=%q is invalid: use an http(s) base URL such as https://discord.com/", c.ApiURL))
		}
	}
	return errors.Join(errs...)
}

// validSnowflake accepts Discord IDs: 1 to 20 digits (real ones have 17
// or more; tests use short ones).
func validSnowflake(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
