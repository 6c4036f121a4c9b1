package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/engine/stt"
	"github.com/leashd/leashd/engine/worktree"
)

// settings is leashd's whole configuration: the settings every chat app
// shares (config.Config: agent, approvals, limits, database, log) and each
// chat app's own (LEASHD_<APP>_*). The web app's are also the HTTP
// server's: its address, token and bounds.
type settings struct {
	config.Config
	apps   []connectors.App
	web    *web.Config
	webApp *web.App // nil when built without the web app
	// tokenFile is where the API's token is when leashd generated it
	// (LEASHD_WEB_TOKEN unset; see useGeneratedToken).
	tokenFile string
	// api is LEASHD_API_*: programs' scoped tokens, rates and caps
	// (apitokens.go); creds are every token, once built (useCredentials).
	api   *config.API
	creds *web.Credentials
	// push is LEASHD_PUSH_*: the page's push notifications (push.go).
	push *config.Push
	// stt is LEASHD_STT_*: where voice notes are transcribed.
	stt *config.STT
	// runner is LEASHD_RUNNER_* and local LEASHD_LOCAL_* (runner.go).
	runner *config.Runner
	local  *config.Local
}

// newSettings returns settings holding the chat apps' zero settings.
func newSettings(cfg config.Config) settings {
	s := settings{Config: cfg, apps: chatApps(), api: &config.API{}, push: &config.Push{}, stt: &config.STT{},
		runner: &config.Runner{}, local: &config.Local{}}
	for _, a := range s.apps {
		if w, ok := a.(*web.App); ok {
			s.web, s.webApp = &w.Config, w
		}
	}
	if s.web == nil { // built without the web app: no HTTP server
		s.web = &web.Config{}
	}
	return s
}

// section is how config reads an app's settings.
func section(a connectors.App) config.Section {
	return config.Section{Name: a.Name(), Settings: a.Settings()}
}

// sections lists every chat app's settings, for usage and the
// environment example.
func sections() []config.Section {
	var out []config.Section
	for _, a := range chatApps() {
		out = append(out, section(a))
	}
	return append(out, config.APISection(&config.API{}), config.PushSection(&config.Push{}), config.STTSection(&config.STT{}),
		config.RunnerSection(&config.Runner{}), config.LocalSection(&config.Local{}))
}

// loadSettings reads the environment (only LEASHD_* variables), reporting
// every unreadable value, and every LEASHD_ variable leashd does not read
// (a misspelt name would leave its setting at the default), at once. It
// does not validate; call Validate.
func loadSettings() (settings, error) {
	cfg, err := config.Load()
	errs := []error{err}
	s := newSettings(cfg)
	var secs []config.Section
	for _, a := range s.apps {
		errs = append(errs, section(a).Load())
		secs = append(secs, section(a))
	}
	api := config.APISection(s.api)
	errs = append(errs, api.Load())
	secs = append(secs, api)
	push := config.PushSection(s.push)
	errs = append(errs, push.Load())
	secs = append(secs, push)
	stt := config.STTSection(s.stt)
	errs = append(errs, stt.Load())
	secs = append(secs, stt)
	for _, sec := range []config.Section{config.RunnerSection(s.runner), config.LocalSection(s.local)} {
		errs = append(errs, sec.Load())
		secs = append(secs, sec)
	}
	errs = append(errs, config.CheckVariables(os.Environ(), secs...))
	return s, errors.Join(errs...)
}

// defaultSettings are the settings when no variable is set.
func defaultSettings() settings {
	s := newSettings(config.Defaults())
	for _, a := range s.apps {
		section(a).Defaults()
	}
	config.APISection(s.api).Defaults()
	config.PushSection(s.push).Defaults()
	config.STTSection(s.stt).Defaults()
	config.RunnerSection(s.runner).Defaults()
	config.LocalSection(s.local).Defaults()
	return s
}

// host is what the process offers the chat apps.
func (s settings) host() connectors.Host { return connectors.Host{HTTP: s.web.Serves()} }

// Validate checks every value, the chat apps' included, and returns all
// problems at once.
func (s settings) Validate() error {
	errs := []error{s.Config.Validate()}
	if _, err := worktree.ParseIdentity(s.GitAuthor); err != nil {
		errs = append(errs, fmt.Errorf("%s_GIT_AUTHOR=%q is invalid: %s", config.Prefix, s.GitAuthor, err))
	}
	for _, a := range s.apps {
		errs = append(errs, section(a).CheckRanges(), a.Validate(s.host()))
	}
	_, err := s.api.Validate()
	errs = append(errs, err, s.push.Validate(), s.runner.CheckServer(), config.LocalSection(s.local).CheckRanges())
	if s.stt.URL != "" {
		_, err := stt.New(s.stt.URL, s.stt.Model, s.stt.APIKey)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// secrets are every chat app's secret values, which the log never shows.
func (s settings) secrets() []string {
	var out []string
	for _, a := range s.apps {
		out = append(out, a.Secrets()...)
	}
	out = append(out, s.stt.Secrets()...)
	out = append(out, s.runner.Tokens...)
	if s.runner.Token != "" {
		out = append(out, s.runner.Token)
	}
	return append(out, s.api.Secrets()...)
}

// enabled are the chat apps the settings turn on.
func (s settings) enabled() []connectors.App {
	var out []connectors.App
	for _, a := range s.apps {
		if a.Enabled() {
			out = append(out, a)
		}
	}
	return out
}

// logger is the process's logger (config.NewLogger) with every app's
// secrets redacted.
func (s settings) logger(w io.Writer) (*slog.Logger, error) {
	return config.NewLogger(s.Config, w, s.secrets()...)
}

// gitIdentity is LEASHD_GIT_AUTHOR (valid after Validate), the author of
// the commits and merges /merge makes.
func gitIdentity(author string) worktree.Identity {
	id, err := worktree.ParseIdentity(author)
	if err != nil {
		return worktree.DefaultAuthor
	}
	return id
}
