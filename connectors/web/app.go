package web

import "github.com/leashd/leashd/connectors"

// App plugs the web page into leashd (connectors.App): its settings are
// LEASHD_WEB_*, and it is on when leashd serves HTTP (LEASHD_WEB_ADDR is
// not off) and LEASHD_WEB_PAGE is on.
type App struct {
	Config Config
	// TokenFile is where leashd keeps the token it generated when
	// LEASHD_WEB_TOKEN is unset (cmd/leashd sets it and Config.Token).
	TokenFile string
	// Credentials, when set, are every token the API takes: the page's
	// and LEASHD_API_TOKENS (cmd/leashd sets them, shared with /mcp).
	Credentials *Credentials
	// Push, when set, turns on push notifications (cmd/leashd sets it
	// with the keys and the store).
	Push *Push
}

var _ connectors.App = (*App)(nil)

// Name implements connectors.App.
func (a *App) Name() string { return "web" }

// Settings implements connectors.App.
func (a *App) Settings() any { return &a.Config }

// Enabled implements connectors.App.
func (a *App) Enabled() bool { return a.Config.Serves() && a.Config.PageOn() }

// Validate implements connectors.App.
func (a *App) Validate(connectors.Host) error { return a.Config.Validate() }

// Secrets implements connectors.App.
func (a *App) Secrets() []string { return a.Config.Secrets() }

// Connector implements connectors.App: the page and the API, mounted on
// leashd's HTTP server at / and /api/.
func (a *App) Connector(d connectors.Deps) (connectors.Connector, error) {
	var push []Option
	if a.Push != nil {
		push = append(push, WithPush(*a.Push))
	}
	return New(append([]Option{
		WithURL(d.HTTP.URL),
		WithToken(a.Config.Token),
		WithTokenFile(a.TokenFile),
		WithCredentials(a.Credentials),
		WithAgentName(d.AgentName),
		WithLogger(d.Log.With("connector", "web")),
		WithMaxStreams(a.Config.MaxStreams),
		WithMaxWaits(a.Config.MaxWaits),
		WithConnCap(d.HTTP.ConnCap),
		WithWriteTimeout(d.HTTP.WriteTimeout),
	}, push...)...), nil
}
