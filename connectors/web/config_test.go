package web_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/web"
)

// strongSecret passes config.WeakSecret.
const strongSecret = "Zq3-vL8_kT2mW9xR4nB7"

// validWeb is the default settings (valid).
func validWeb(t *testing.T) (*web.Config, config.Section) {
	t.Helper()
	app := &web.App{}
	sec := config.Section{Name: app.Name(), Settings: app.Settings()}
	sec.Defaults()
	require.NoError(t, app.Config.Validate())
	return &app.Config, sec
}

// webRejects each make one setting bad; want are substrings of the one
// error line: variable, value, what is accepted.
var webRejects = []struct {
	name   string
	mutate func(*web.Config)
	want   []string
}{
	{"page neither on nor off", func(c *web.Config) { c.Page = "yes" },
		[]string{`LEASHD_WEB_PAGE="yes"`, "accepted: on, off"}},
	{"page neither on nor off, without a server", func(c *web.Config) { c.Addr = "off"; c.Page = "no" },
		[]string{`LEASHD_WEB_PAGE="no"`, "accepted: on, off"}},
	{"no event streams", func(c *web.Config) { c.MaxStreams = 0 },
		[]string{`LEASHD_WEB_MAX_STREAMS="0"`, "from 1 to 100000"}},
	{"negative connections", func(c *web.Config) { c.MaxConnections = -1 },
		[]string{`LEASHD_WEB_MAX_CONNECTIONS="-1"`, "from 0 to 1000000"}},
	{"non-loopback web address without a token", func(c *web.Config) { c.Addr = "0.0.0.0:8080" },
		[]string{`LEASHD_WEB_ADDR="0.0.0.0:8080"`, "LEASHD_WEB_TOKEN", "127.0.0.1"}},
	{"all interfaces without a token", func(c *web.Config) { c.Addr = ":8080" },
		[]string{`LEASHD_WEB_ADDR=":8080"`, "LEASHD_WEB_TOKEN"}},
	{"a public name without a token", func(c *web.Config) { c.Addr = "leashd.example.com:443" },
		[]string{`LEASHD_WEB_ADDR="leashd.example.com:443"`, "LEASHD_WEB_TOKEN"}},
	{"a space as the token", func(c *web.Config) { c.Addr = "0.0.0.0:8080"; c.Token = " " },
		[]string{`LEASHD_WEB_TOKEN="…" is invalid`, "LEASHD_WEB_ADDR=0.0.0.0:8080", "weak (it is 1 character long)", "16 or more random characters"}},
	{"a one-letter token", func(c *web.Config) { c.Addr = ":8080"; c.Token = "a" },
		[]string{`LEASHD_WEB_TOKEN="…" is invalid`, "weak (it is 1 character long)"}},
	{"a 15-character token", func(c *web.Config) { c.Addr = "10.0.0.1:8080"; c.Token = "0123456789abcde" },
		[]string{`LEASHD_WEB_TOKEN="…" is invalid`, "weak (it is 15 characters long)"}},
	{"a token of one repeated character", func(c *web.Config) { c.Addr = "0.0.0.0:8080"; c.Token = strings.Repeat("a", 64) },
		[]string{`LEASHD_WEB_TOKEN="…" is invalid`, "weak (it is one character repeated)"}},
	{"a token of repeated spaces", func(c *web.Config) { c.Addr = "0.0.0.0:8080"; c.Token = strings.Repeat(" ", 20) },
		[]string{`LEASHD_WEB_TOKEN="…" is invalid`, "weak (it is one character repeated)"}},
	{"a token ending in a newline", func(c *web.Config) { c.Addr = "0.0.0.0:8080"; c.Token = strongSecret + "\n" },
		[]string{`LEASHD_WEB_TOKEN="…" is invalid`, "ends with a space or holds a control character"}},
	{"a token of 16 multi-byte characters counts characters", func(c *web.Config) { c.Addr = "0.0.0.0:8080"; c.Token = strings.Repeat("é", 7) + "a" },
		[]string{`LEASHD_WEB_TOKEN="…" is invalid`, "it is 8 characters long"}},
	{"web address without a port", func(c *web.Config) { c.Addr = "8080" },
		[]string{`LEASHD_WEB_ADDR="8080"`, "host:port", "off"}},
	{"web port by name", func(c *web.Config) { c.Addr = "127.0.0.1:http" },
		[]string{`LEASHD_WEB_ADDR="127.0.0.1:http"`, "0 to 65535"}},
	{"web port too large", func(c *web.Config) { c.Addr = "127.0.0.1:70000" },
		[]string{`LEASHD_WEB_ADDR="127.0.0.1:70000"`, "0 to 65535"}},
}

func TestConfigValidateRejects(t *testing.T) {
	for _, tt := range webRejects {
		t.Run(tt.name, func(t *testing.T) {
			c, h := validWeb(t)
			tt.mutate(c)
			err := errors.Join(h.CheckRanges(), c.Validate())
			testenv.OneProblem(t, err, tt.want, c.Secrets())
		})
	}
}

var webAccepts = []struct {
	name   string
	mutate func(*web.Config)
}{
	{"defaults", func(*web.Config) {}},
	{"the page off", func(c *web.Config) { c.Page = "off" }},
	{"the page off on the network, with a token", func(c *web.Config) { c.Page = "off"; c.Addr = ":8080"; c.Token = strongSecret }},
	{"non-loopback with a token", func(c *web.Config) { c.Addr = "0.0.0.0:8080"; c.Token = strongSecret }},
	{"all interfaces with a token", func(c *web.Config) { c.Addr = ":8080"; c.Token = strongSecret }},
	{"a token of exactly 16 characters", func(c *web.Config) { c.Addr = ":8080"; c.Token = "0123456789abcdef" }},
	{"a token of two characters repeated", func(c *web.Config) { c.Addr = ":8080"; c.Token = strings.Repeat("ab", 8) }},
	{"a weak token on loopback", func(c *web.Config) { c.Token = "a" }},
	{"a space as the token on localhost", func(c *web.Config) { c.Addr = "localhost:8080"; c.Token = " " }},
	{"a weak token with the web page off", func(c *web.Config) { c.Addr = "off"; c.Token = "a" }},
	{"off", func(c *web.Config) { c.Addr = "off" }},
	{"OFF", func(c *web.Config) { c.Addr = "OFF" }},
	{"localhost", func(c *web.Config) { c.Addr = "localhost:8080" }},
	{"IPv6 loopback", func(c *web.Config) { c.Addr = "[::1]:8080" }},
	{"another loopback address", func(c *web.Config) { c.Addr = "127.0.0.2:9000" }},
	{"port 0", func(c *web.Config) { c.Addr = "127.0.0.1:0" }},
}

func TestConfigValidateAccepts(t *testing.T) {
	for _, tt := range webAccepts {
		t.Run(tt.name, func(t *testing.T) {
			c, sec := validWeb(t)
			tt.mutate(c)
			assert.NoError(t, errors.Join(sec.CheckRanges(), c.Validate()))
		})
	}
}

func TestConfigServesAndSecrets(t *testing.T) {
	c, _ := validWeb(t)
	assert.True(t, c.Serves(), "the default address serves")
	assert.Empty(t, c.Secrets())
	c.Token = "w3b-t0ken-9f8e7d6c5b4a"
	assert.Equal(t, []string{"w3b-t0ken-9f8e7d6c5b4a"}, c.Secrets())
	for _, off := range []string{"off", "OFF", ""} {
		c.Addr = off
		assert.False(t, c.Serves(), off)
	}
	assert.True(t, c.PageOn())
	c.Page = "off"
	assert.False(t, c.PageOn(), "the page can be off while the server serves probes and webhooks")
}

// The web app is on when leashd serves HTTP and the page is on.
func TestAppEnabled(t *testing.T) {
	for _, tt := range []struct {
		addr, page string
		want       bool
	}{{"127.0.0.1:8080", "on", true}, {"127.0.0.1:8080", "off", false}, {"off", "on", false}} {
		a := &web.App{Config: web.Config{Addr: tt.addr, Page: tt.page}}
		assert.Equal(t, tt.want, a.Enabled(), "%s %s", tt.addr, tt.page)
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true,
		"0.0.0.0": false, "": false, "::": false, "192.168.1.2": false, "example.com": false, "localhost.example.com": false,
	} {
		assert.Equal(t, want, web.IsLoopback(host), host)
	}
}
