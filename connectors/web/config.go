package web

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/leashd/leashd/config"
)

// Config is the web page's settings and leashd's HTTP server's, read from
// LEASHD_WEB_* variables (the field Addr is LEASHD_WEB_ADDR).
type Config struct {
	Addr  string `split_words:"true" default:"127.0.0.1:8080" desc:"Address of leashd's HTTP server: the web page and API, /mcp, health, readiness, metrics and the Telegram and Slack webhooks; off: no HTTP server at all (then Telegram needs long polling and Slack Socket Mode)"`
	Page  string `split_words:"true" default:"on" desc:"on: the web page and its API (/ and /api/…) are served on LEASHD_WEB_ADDR; off: they are not, and the address serves only health, readiness, metrics, /mcp and the Telegram and Slack webhooks"`
	Token string `split_words:"true" desc:"Bearer token every /api and /mcp request needs, on loopback too; unset: leashd generates one at first start, keeps it in web-token beside the database (leashd ask and leashd mcp read it there) and prints the page's address with it; required when the web address is not loopback, and then at least 16 characters, not one character repeated"`
	// The server's bounds (issue 15: floods of streams and connections).
	MaxStreams     int `split_words:"true" default:"100" min:"1" max:"100000" desc:"Event streams (/api/events) served at once; more are refused with 503"`
	MaxWaits       int `split_words:"true" default:"256" min:"1" max:"100000" desc:"Long-polls (GET /api/interactions/{id}?wait=N) waiting at once, apart from event streams; more are refused with 503 and Retry-After, so that replies, health checks and the page always find a connection"`
	MaxConnections int `split_words:"true" default:"0" max:"1000000" desc:"Connections the web server holds at once; at the cap the longest-idle one is closed for a new client. 0 = from the open-file limit (a quarter kept for agents, the store and outgoing connections), at most 1024"`
}

// Serves reports whether leashd serves HTTP: the address is not "off".
func (c Config) Serves() bool {
	return c.Addr != "" && !strings.EqualFold(c.Addr, "off")
}

// PageOn reports whether the web page and its API are served
// (LEASHD_WEB_PAGE is on; empty counts as on). It implies nothing about
// the server: see Serves.
func (c Config) PageOn() bool { return c.Page != "off" }

// Secrets lists the secret values set: the token.
func (c Config) Secrets() []string {
	if c.Token == "" {
		return nil
	}
	return []string{c.Token}
}

// Validate checks the page switch, the address and the token: a
// non-loopback address needs a strong token (it serves /mcp even with the
// page off). Every problem is returned at once.
func (c Config) Validate() error {
	var page error
	if c.Page != "" && c.Page != "on" && c.Page != "off" {
		page = bad("PAGE", c.Page, "accepted: on, off")
	}
	if !c.Serves() {
		return page
	}
	return errors.Join(page, c.checkAddr())
}

// bad is the message of an invalid LEASHD_WEB_ variable.
func bad(name, value, accepted string) error {
	return fmt.Errorf("LEASHD_WEB_%s=%q is invalid: %s", name, value, accepted)
}

// checkAddr checks the address, and the token when the address is not
// loopback.
func (c Config) checkAddr() error {
	host, port, err := net.SplitHostPort(c.Addr)
	switch {
	case err != nil:
		return bad("ADDR", c.Addr, "use host:port (e.g. 127.0.0.1:8080) or off")
	case !validPort(port):
		return bad("ADDR", c.Addr, "the port must be a number from 0 to 65535")
	case IsLoopback(host):
		return nil
	case c.Token == "":
		return bad("ADDR", c.Addr, "a non-loopback address serves the API to the network: set LEASHD_WEB_TOKEN too, or bind 127.0.0.1")
	}
	if why := config.WeakSecret(c.Token); why != "" {
		return bad("TOKEN", "…", fmt.Sprintf("LEASHD_WEB_ADDR=%s serves the API to the network and this token is weak (%s): use %d or more %s", c.Addr, why, config.MinSecretLength, config.WeakSecretAdvice))
	}
	return nil
}

func validPort(port string) bool {
	_, err := strconv.ParseUint(port, 10, 16)
	return err == nil
}

// IsLoopback reports whether host (a name or IP from host:port) only serves
// this machine.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
