package connectors

import (
	"log/slog"
	"time"
)

// App is a chat app as cmd/leashd plugs it in. A chat app is one package
// under connectors/ that implements App, plus one line in cmd/leashd's list
// of chat apps; cmd reads its settings, checks them, redacts its secrets
// from the log, builds its connector and mounts the HTTP routes the
// connector serves (when it implements Mounter) on leashd's one HTTP
// server.
type App interface {
	// Name is the chat ID prefix the app's connector owns ("telegram") and
	// the middle of its variables' names: LEASHD_TELEGRAM_*.
	Name() string
	// Settings points to the app's settings struct; cmd fills it from the
	// environment (a config.Section: envconfig tags, min and max).
	Settings() any
	// Enabled reports whether the settings turn the app on.
	Enabled() bool
	// Validate checks the settings and returns every problem at once, each
	// naming the variable, the bad value and what is accepted.
	Validate(h Host) error
	// Secrets lists the secret values set (tokens, signing secrets), which
	// the log must never show.
	Secrets() []string
	// Connector builds the app's connector from its settings; cmd calls it
	// only when the app is enabled and its settings are valid.
	Connector(d Deps) (Connector, error)
}

// Host is what the leashd process offers its chat apps, as far as their
// settings depend on it.
type Host struct {
	// HTTP reports whether leashd serves HTTP (LEASHD_WEB_ADDR is not
	// off): webhooks and events an app receives over HTTP need it.
	HTTP bool
}

// Deps are what cmd builds a chat app's connector with.
type Deps struct {
	Log   *slog.Logger // the process's logger; the connector names itself
	Stats Stats        // counts messages sent and rate limits (may be nil)
	// Commands are the chat commands, for apps that list them (Telegram's
	// command menu).
	Commands []Command
	// AgentName is what people see the agent called (agent.About.Title):
	// "demo agent", the driver's own product name.
	AgentName string
	// HTTP is leashd's HTTP server, when it serves one.
	HTTP HTTP
}

// HTTP describes leashd's HTTP server to the apps whose connectors serve
// routes on it (connectors.Mounter).
type HTTP struct {
	URL          string        // its base URL, e.g. "http://127.0.0.1:8080"
	ConnCap      int           // the most connections it holds at once
	WriteTimeout time.Duration // bound on writing a response
}

// Command is a chat command: Name without the slash ("new") and what it
// does, in a line.
type Command struct {
	Name string
	Help string
}
