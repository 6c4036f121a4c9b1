package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/httpserver"
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

// serve runs c on leashd's HTTP server, as cmd/leashd mounts it, at addr.
func serve(t *testing.T, addr string, opts ...web.Option) (c *web.Connector, stop func() error) {
	t.Helper()
	srv := httpserver.New(httpserver.Options{Addr: addr})
	require.NoError(t, srv.Listen())
	c = web.New(append([]web.Option{web.WithURL(srv.URL())}, opts...)...)
	require.NoError(t, srv.Mount(c))
	assert.Equal(t, srv.URL(), c.URL())
	require.ErrorContains(t, c.Ready(), "not listening yet")
	ctx, cancel := context.WithCancel(context.Background())
	errc, served := make(chan error, 1), make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	go func() { errc <- c.Run(ctx, nopHandler{}) }()
	require.Eventually(t, func() bool { return c.Ready() == nil && srv.Ready() == nil }, 10*time.Second, time.Millisecond)
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			err = <-errc
			require.NoError(t, c.Flush(context.Background()))
			srv.Drain()
			require.NoError(t, <-served)
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return c, stop
}

func TestRunLogsOneLineWithTheURL(t *testing.T) {
	var logs testenv.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	c, stop := serve(t, "127.0.0.1:0", web.WithLogger(log), web.WithAgentName("demo agent"))
	require.True(t, strings.HasPrefix(c.URL(), "http://127.0.0.1:"), c.URL())
	assert.Contains(t, logs.String(), `msg="leashd web UI at `+c.URL()+` (token required: `)
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
	serve(t, "127.0.0.1:0", web.WithToken("sup3rsecret"), web.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	assert.Contains(t, logs.String(), "/?token=<LEASHD_WEB_TOKEN>")
	assert.Contains(t, logs.String(), "Authorization: Bearer <LEASHD_WEB_TOKEN>")
	assert.NotContains(t, logs.String(), "sup3rsecret")
}

func TestNameAndWatcher(t *testing.T) {
	c := web.New()
	assert.Equal(t, "web", c.Name())
	assert.True(t, c.WatchesAll())
}

// Another route on the server where the API is mounted is refused, not
// served in its place.
func TestMountingAConflictingRouteFails(t *testing.T) {
	srv := httpserver.New(httpserver.Options{Addr: "127.0.0.1:0"})
	require.NoError(t, srv.Mount(web.New()))
	err := srv.Handle("GET /api/info", http.NotFoundHandler())
	require.ErrorContains(t, err, "web: adding routes:")
	require.ErrorContains(t, err, "/api/info")
}

// With a generated token the start-up line names the file it is in, and
// never the token.
func TestRunWithGeneratedTokenNamesItsFile(t *testing.T) {
	var logs testenv.Buffer
	serve(t, "127.0.0.1:0", web.WithToken("gener4ted-t0ken-xyz"), web.WithTokenFile("/state/web-token"),
		web.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	assert.Contains(t, logs.String(), "the token is in /state/web-token")
	assert.NotContains(t, logs.String(), "LEASHD_WEB_TOKEN")
	assert.NotContains(t, logs.String(), "gener4ted-t0ken-xyz")
}
