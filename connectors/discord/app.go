package discord

import "github.com/leashd/leashd/connectors"

// App plugs Discord into leashd (connectors.App): its settings are
// LEASHD_DISCORD_*, and a bot token turns it on.
type App struct{ Config Config }

var _ connectors.App = (*App)(nil)

// Name implements connectors.App.
func (a *App) Name() string { return appName }

// Settings implements connectors.App.
func (a *App) Settings() any { return &a.Config }

// Enabled implements connectors.App.
func (a *App) Enabled() bool { return a.Config.Enabled() }

// Validate implements connectors.App.
func (a *App) Validate(h connectors.Host) error { return a.Config.Validate(h) }

// Secrets implements connectors.App.
func (a *App) Secrets() []string { return a.Config.Secrets() }

// Connector implements connectors.App: the Gateway and the REST API with
// the bot token, the chat commands registered as application commands.
func (a *App) Connector(d connectors.Deps) (connectors.Connector, error) {
	cfg := a.Config
	opts := []Option{
		WithAllowedUsers(cfg.AllowedUsers),
		WithAllowedRoles(cfg.AllowedRoles),
		WithApprovers(cfg.Approvers),
		WithLogger(d.Log),
		WithStats(d.Stats),
		WithCommands(d.Commands),
	}
	if cfg.ApiURL != "" {
		opts = append(opts, WithAPIURL(cfg.ApiURL))
	}
	return New(cfg.BotToken, opts...), nil
}
