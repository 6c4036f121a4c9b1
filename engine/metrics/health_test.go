package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine/metrics"
	"github.com/leashd/leashd/interactions"
)

func get(t *testing.T, h http.Handler, method string) (*httptest.ResponseRecorder, metrics.Readiness) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, "/", nil))
	var body metrics.Readiness
	if rec.Code != http.StatusMethodNotAllowed && method != http.MethodHead {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	}
	return rec, body
}

func TestHealthz(t *testing.T) {
	rec := httptest.NewRecorder()
	metrics.Healthz().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `{"status":"ok"}`, rec.Body.String())
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))

	rec = httptest.NewRecorder()
	metrics.Healthz().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/healthz", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
	assert.Contains(t, rec.Body.String(), "use GET or HEAD")
}

func TestReadyzAllReady(t *testing.T) {
	h := metrics.Readyz(
		metrics.Check{Name: "telegram", Ready: func() error { return nil }},
		metrics.Check{Name: "agent", Ready: func() error { return nil }},
	)
	rec, body := get(t, h, http.MethodGet)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, metrics.Readiness{Ready: true, Checks: []metrics.CheckResult{
		{Name: "telegram", Ready: true}, {Name: "agent", Ready: true},
	}}, body)
	rec, _ = get(t, h, http.MethodHead)
	assert.Equal(t, http.StatusOK, rec.Code)
}

func TestReadyzNoChecksIsReady(t *testing.T) {
	rec, body := get(t, metrics.Readyz(), http.MethodGet)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.True(t, body.Ready)
	assert.Empty(t, body.Checks)
}

func TestReadyzOneFailingCheckIs503AndSaysWhy(t *testing.T) {
	h := metrics.Readyz(
		metrics.Check{Name: "telegram", Ready: func() error { return errors.New("getMe: 401 Unauthorized") }},
		metrics.Check{Name: "slack", Ready: func() error { return nil }},
		metrics.Check{Name: "broken"},
		metrics.Check{Name: "panics", Ready: func() error { panic("boom") }},
	)
	rec, body := get(t, h, http.MethodGet)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.False(t, body.Ready)
	assert.Equal(t, []metrics.CheckResult{
		{Name: "telegram", Error: "getMe: 401 Unauthorized"},
		{Name: "slack", Ready: true},
		{Name: "broken", Error: "no check function"},
		{Name: "panics", Error: "check panicked: boom"},
	}, body.Checks)
}

func TestReadyzFollowsState(t *testing.T) {
	var connected error = errors.New("connecting")
	h := metrics.Readyz(metrics.Check{Name: "slack", Ready: func() error { return connected }})
	rec, _ := get(t, h, http.MethodGet)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	connected = nil
	rec, _ = get(t, h, http.MethodGet)
	assert.Equal(t, http.StatusOK, rec.Code)
}

type conn struct {
	name  string
	ready error
}

func (c conn) Name() string                                           { return c.name }
func (c conn) Run(context.Context, connectors.Handler) error          { return nil }
func (c conn) Say(context.Context, string, string) error              { return nil }
func (c conn) StreamText(context.Context, string, string) error       { return nil }
func (c conn) Done(context.Context, string, connectors.Summary) error { return nil }
func (c conn) Present(context.Context, *interactions.Interaction) (string, error) {
	return "", nil
}
func (c conn) Update(context.Context, interactions.Event) error { return nil }

type readyConn struct{ conn }

func (c readyConn) Ready() error { return c.ready }

func TestConnectorChecksOnlyForReadiers(t *testing.T) {
	checks := metrics.ConnectorChecks(
		readyConn{conn{name: "telegram", ready: errors.New("not polling yet")}},
		conn{name: "terminal"},
		readyConn{conn{name: "slack"}},
	)
	require.Len(t, checks, 2)
	body := metrics.RunChecks(checks...)
	assert.False(t, body.Ready)
	assert.Equal(t, []metrics.CheckResult{{Name: "telegram", Error: "not polling yet"}, {Name: "slack", Ready: true}}, body.Checks)
}

func TestReadyzHungCheckFailsAfterTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	body := metrics.RunChecks(metrics.Check{Name: "db", Ready: func() error { <-release; return nil }})
	assert.GreaterOrEqual(t, time.Since(start), metrics.CheckTimeout)
	assert.False(t, body.Ready)
	assert.Equal(t, "no answer within 3s", body.Checks[0].Error)
}

func TestMountServesAllThree(t *testing.T) {
	mux := http.NewServeMux()
	m := metrics.New()
	ready := errors.New("telegram: not connected yet")
	m.Mount(mux, metrics.Check{Name: "telegram", Ready: func() error { return ready }})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := get("/healthz")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"status":"ok"}`, body)
	code, body = get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.JSONEq(t, `{"ready":false,"checks":[{"name":"telegram","ready":false,"error":"telegram: not connected yet"}]}`, body)
	code, body = get("/metrics")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "leashd_interactions_pending{kind=\"question\"} 0")
}
