package telegram

import (
	"fmt"

	"github.com/leashd/leashd/connectors"
)

// App plugs Telegram into leashd (connectors.App): its settings are
// LEASHD_TELEGRAM_*, and a bot token turns it on.
type App struct{ Config Config }

var _ connectors.App = (*App)(nil)

// Name implements connectors.App.
func (a *App) Name() string { return "telegram" }

// Settings implements connectors.App.
func (a *App) Settings() any { return &a.Config }

// Enabled implements connectors.App.
func (a *App) Enabled() bool { return a.Config.Enabled() }

// Validate implements connectors.App.
func (a *App) Validate(h connectors.Host) error { return a.Config.Validate(h) }

// Secrets implements connectors.App.
func (a *App) Secrets() []string { return a.Config.Secrets() }

// Connector implements connectors.App: long polling, or webhook mode when
// LEASHD_TELEGRAM_WEBHOOK_URL is set (its route mounted by cmd).
func (a *App) Connector(d connectors.Deps) (connectors.Connector, error) {
	cfg := a.Config
	ids, err := parseUserIDs(cfg.AllowedUsers)
	if err != nil {
		return nil, fmt.Errorf("LEASHD_TELEGRAM_ALLOWED_USERS: %w", err)
	}
	opts := []Option{
		WithAPIURL(cfg.ApiURL),
		WithAllowedUsers(ids),
		WithLogger(d.Log), // it names itself
		WithStats(d.Stats),
		WithCommands(d.Commands),
	}
	if len(cfg.Approvers) > 0 {
		approvers, err := parseUserIDs(cfg.Approvers)
		if err != nil {
			return nil, fmt.Errorf("LEASHD_TELEGRAM_APPROVERS: %w", err)
		}
		opts = append(opts, WithApprovers(approvers))
	}
	if cfg.WebhookURL != "" {
		opts = append(opts, WithWebhook(cfg.WebhookURL, cfg.WebhookSecret))
	}
	return New(cfg.BotToken, opts...), nil
}
