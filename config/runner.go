package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Runner is LEASHD_RUNNER_*: the server's side (which runners it takes,
// how long one may be away) and the runner's own (`leashd runner`: where
// the server is, what it is called, how many agents it holds). See the
// README, "Runners: agents on other machines".
type Runner struct {
	Tokens       []string `desc:"On the server: secrets a runner may present (comma-separated); empty = runners are off. Generate each with e.g. openssl rand -hex 32"`
	GraceSeconds int      `split_words:"true" default:"30" min:"1" max:"86400" desc:"On the server: seconds a runner may be disconnected (a network blip, a laptop lid) before its agents are given up and its chats told; within them a reconnect carries on where it was"`
	Server       string   `desc:"On a runner: the leashd server's URL, e.g. https://leashd.example.com (the runner dials out; it needs no inbound port)"`
	Token        string   `desc:"On a runner: one of the server's LEASHD_RUNNER_TOKENS"`
	Name         string   `desc:"On a runner: its name (letters, digits, . - _); default: the host name"`
	MaxAgents    int      `split_words:"true" default:"4" min:"1" max:"10000" desc:"On a runner: agents it runs at once"`
	Labels       []string `desc:"On a runner: its labels (comma-separated), which a chat may ask for with /runner labels"`
	Workdir      string   `desc:"On a runner: the directory its agents work in (the server's LEASHD_WORKDIR is the server's); default: the runner's current directory"`
}

// RunnerSection is how the runner settings are read: LEASHD_RUNNER_*.
func RunnerSection(r *Runner) Section { return Section{Name: "runner", Settings: r} }

// Local is LEASHD_LOCAL_*: what the server itself still runs when runners
// are on.
type Local struct {
	Agents int `default:"-1" min:"-1" max:"1000" desc:"With LEASHD_RUNNER_TOKENS: agents the server itself runs besides its runners; 0 = runners only; -1 (default) = up to LEASHD_MAX_CONCURRENT_AGENTS, runners taking the rest"`
}

// LocalSection is how LEASHD_LOCAL_* is read.
func LocalSection(l *Local) Section { return Section{Name: "local", Settings: l} }

// Grace is LEASHD_RUNNER_GRACE_SECONDS.
func (r Runner) Grace() time.Duration { return seconds(r.GraceSeconds) }

// CheckServer says what is wrong with the server's runner settings.
func (r Runner) CheckServer() error {
	errs := []error{RunnerSection(&r).CheckRanges()}
	for _, t := range r.Tokens {
		if len(strings.TrimSpace(t)) < 16 {
			errs = append(errs, errors.New("LEASHD_RUNNER_TOKENS: a token is shorter than 16 characters; accepted: long random secrets, e.g. from openssl rand -hex 32"))
			break
		}
	}
	return errors.Join(errs...)
}

// CheckRunner says what is wrong with a runner's settings.
func (r Runner) CheckRunner() error {
	errs := []error{RunnerSection(&r).CheckRanges()}
	if u, err := url.Parse(r.Server); r.Server == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("LEASHD_RUNNER_SERVER=%q (--server): accepted: the server's http:// or https:// URL", r.Server))
	}
	if len(strings.TrimSpace(r.Token)) < 16 {
		errs = append(errs, errors.New("LEASHD_RUNNER_TOKEN (--token) is empty or shorter than 16 characters: give one of the server's LEASHD_RUNNER_TOKENS"))
	}
	return errors.Join(errs...)
}
