package httpserver_test

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/httpserver"
)

func TestListenFailsOnBusyAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	srv := httpserver.New(httpserver.Options{Addr: ln.Addr().String()})
	err = srv.Serve(context.Background())
	require.ErrorContains(t, err, "web: listening on "+ln.Addr().String())
}

func TestURLOfUnspecifiedAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	srv := httpserver.New(httpserver.Options{Listener: ln})
	assert.Equal(t, "", srv.URL(), "no URL before listening")
	require.NoError(t, srv.Listen())
	port := ln.Addr().(*net.TCPAddr).Port
	assert.Equal(t, "http://127.0.0.1:"+strconv.Itoa(port), srv.URL())
	_ = ln.Close()
}

func TestConflictingRoutesAreErrors(t *testing.T) {
	srv := httpserver.New(httpserver.Options{})
	require.NoError(t, srv.Handle("GET /healthz", http.NotFoundHandler()))
	err := srv.Handle("GET /healthz", http.NotFoundHandler())
	require.ErrorContains(t, err, "web: adding routes:")
}

// Serve answers until its context ends, then refuses new connections;
// Drain ends the grace at once, and Serve returns nil.
func TestServeStopsAfterDrain(t *testing.T) {
	srv := httpserver.New(httpserver.Options{Addr: "127.0.0.1:0", DrainGrace: time.Minute})
	require.NoError(t, srv.Handle("GET /ping", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("pong")) })))
	require.ErrorContains(t, srv.Ready(), "not listening yet")
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	require.Eventually(t, func() bool { return srv.Ready() == nil }, 10*time.Second, time.Millisecond)
	resp, err := http.Get(srv.URL() + "/ping")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	require.Eventually(t, func() bool { return srv.Ready() != nil }, 10*time.Second, time.Millisecond)
	assert.ErrorContains(t, srv.Ready(), "shutting down")
	srv.Drain()
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after Drain")
	}
	_, err = http.Get(srv.URL() + "/ping")
	require.Error(t, err, "no longer serving")
}
