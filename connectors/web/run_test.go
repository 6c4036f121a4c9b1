package web_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/interactions"
)

// nopHandler is a connectors.Handler for tests of the server alone.
type nopHandler struct{}

func (nopHandler) HandleMessage(context.Context, connectors.Incoming) (connectors.Route, error) {
	return connectors.RouteAgent, nil
}
func (nopHandler) Reply(context.Context, string, interactions.Reply) (interactions.Outcome, error) {
	return 0, interactions.ErrNotFound
}
func (nopHandler) Toggle(context.Context, string, string, interactions.Reply) ([]string, error) {
	return nil, interactions.ErrNotFound
}
func (nopHandler) Confirm(context.Context, string, interactions.Reply) error {
	return interactions.ErrNotFound
}
func (nopHandler) Interaction(string) (interactions.Interaction, bool) {
	return interactions.Interaction{}, false
}
func (nopHandler) Pending(string) []interactions.Interaction { return nil }

func run(t *testing.T, c *web.Connector) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx, nopHandler{}) }()
	require.Eventually(t, func() bool { return c.Ready() == nil }, 10*time.Second, time.Millisecond)
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-errc })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func TestRunLogsOneLineWithTheURL(t *testing.T) {
	var logs testenv.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	c := web.New(web.WithAddr("127.0.0.1:0"), web.WithLogger(log), web.WithAgentName("demo agent"))
	assert.Equal(t, "", c.URL(), "no URL before listening")
	require.ErrorContains(t, c.Ready(), "not listening yet")
	stop := run(t, c)
	require.True(t, strings.HasPrefix(c.URL(), "http://127.0.0.1:"), c.URL())
	assert.Contains(t, logs.String(), `msg="leashd web UI at `+c.URL()+`"`)
	assert.Contains(t, logs.String(), `agent="demo agent"`)
	assert.Equal(t, 1, strings.Count(logs.String(), "leashd web UI at"))

	resp, err := http.Get(c.URL() + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))

	require.NoError(t, stop())
	require.ErrorContains(t, c.Ready(), "shutting down")
	_, err = http.Get(c.URL() + "/")
	require.Error(t, err, "no longer serving")
}

func TestRunWithTokenSaysHowToUseItWithoutLoggingIt(t *testing.T) {
	var logs testenv.Buffer
	c := web.New(web.WithAddr("127.0.0.1:0"), web.WithToken("sup3rsecret"), web.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	run(t, c)
	assert.Contains(t, logs.String(), "/?token=<LEASHD_WEB_TOKEN>")
	assert.Contains(t, logs.String(), "Authorization: Bearer <LEASHD_WEB_TOKEN>")
	assert.NotContains(t, logs.String(), "sup3rsecret")
}

func TestRunFailsOnBusyAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c := web.New(web.WithAddr(ln.Addr().String()))
	err = c.Run(context.Background(), nopHandler{})
	require.ErrorContains(t, err, "web: listening on "+ln.Addr().String())
}

func TestURLOfUnspecifiedAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	c := web.New(web.WithListener(ln))
	run(t, c)
	port := ln.Addr().(*net.TCPAddr).Port
	assert.Equal(t, "http://127.0.0.1:"+strconv.Itoa(port), c.URL())
}

func TestNameAndWatcher(t *testing.T) {
	c := web.New()
	assert.Equal(t, "web", c.Name())
	assert.True(t, c.WatchesAll())
}

func TestRunRefusesConflictingRoute(t *testing.T) {
	c := web.New(web.WithAddr("127.0.0.1:0"), web.WithRoute("GET /api/info", http.NotFoundHandler()))
	err := c.Run(context.Background(), nopHandler{})
	require.ErrorContains(t, err, "web: adding routes:")
	require.ErrorContains(t, err, "/api/info")
}
