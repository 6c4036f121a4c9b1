package httpserver_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/httpserver"
)

// serve runs srv until the test ends.
func serve(t *testing.T, srv *httpserver.Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); srv.Drain(); <-served })
	require.Eventually(t, func() bool { return srv.Ready() == nil }, 10*time.Second, time.Millisecond)
}

// Under Waiting a handler may answer long after the write timeout, and
// its response arrives whole; without it the client gets nothing.
func TestWaitingOutlivesTheWriteTimeout(t *testing.T) {
	srv := httpserver.New(httpserver.Options{Addr: "127.0.0.1:0", WriteTimeout: 200 * time.Millisecond})
	late := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(600 * time.Millisecond) // a person deciding
		_, _ = io.WriteString(w, "answered")
	})
	require.NoError(t, srv.Handle("GET /waiting", httpserver.Waiting(late, srv.WriteTimeout())))
	require.NoError(t, srv.Handle("GET /plain", late))
	serve(t, srv)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

	resp, err := client.Get(srv.URL() + "/waiting")
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "answered", string(b))

	_, err = client.Get(srv.URL() + "/plain")
	require.Error(t, err, "the server's write timeout cut the plain handler off")
}

// Under Waiting each write still has the write timeout: a client that
// stops reading is cut off, not held for ever.
func TestWaitingStillCutsOffAClientThatDoesNotRead(t *testing.T) {
	srv := httpserver.New(httpserver.Options{Addr: "127.0.0.1:0", WriteTimeout: 300 * time.Millisecond})
	cut := make(chan error, 1)
	big := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := []byte(strings.Repeat("b", 64<<10))
		for range 1024 { // 64 MiB: far more than the socket buffers hold
			if _, err := w.Write(chunk); err != nil {
				cut <- err
				return
			}
		}
		cut <- nil
	})
	require.NoError(t, srv.Handle("GET /big", httpserver.Waiting(big, srv.WriteTimeout())))
	serve(t, srv)
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	select {
	case err := <-cut:
		require.Error(t, err, "the write to a client that does not read failed")
	case <-time.After(20 * time.Second):
		t.Fatal("a client that does not read held the handler")
	}
}
