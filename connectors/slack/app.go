package slack

import "github.com/leashd/leashd/connectors"

// App plugs Slack into leashd (connectors.App): its settings are
// LEASHD_SLACK_*, and a bot token turns it on.
type App struct{ Config Config }

var _ connectors.App = (*App)(nil)

// Name implements connectors.App.
func (a *App) Name() string { return "slack" }

// Settings implements connectors.App.
func (a *App) Settings() any { return &a.Config }

// Enabled implements connectors.App.
func (a *App) Enabled() bool { return a.Config.Enabled() }

// Validate implements connectors.App.
func (a *App) Validate(h connectors.Host) error { return a.Config.Validate(h) }

// Secrets implements connectors.App.
func (a *App) Secrets() []string { return a.Config.Secrets() }

// Connector implements connectors.App: Socket Mode with an app token,
// else HTTP mode (its events route mounted by cmd).
func (a *App) Connector(d connectors.Deps) (connectors.Connector, error) {
	cfg := a.Config
	opts := []Option{
		WithAllowedUsers(cfg.AllowedUsers),
		WithApprovers(cfg.Deciders()),
		WithLogger(d.Log), // it names itself
		WithStats(d.Stats),
	}
	if cfg.ApiURL != "" {
		opts = append(opts, WithAPIURL(cfg.ApiURL))
	}
	if cfg.SocketMode() {
		opts = append(opts, WithAppToken(cfg.AppToken))
	} else {
		opts = append(opts, WithSigningSecret(cfg.SigningSecret))
	}
	return New(cfg.BotToken, opts...), nil
}
