package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

var serverURL = regexp.MustCompile(`leashd HTTP server at (http://[0-9.:]+)`)

// statusOf GETs url and returns the status code.
func statusOf(t *testing.T, url string) int {
	t.Helper()
	resp, err := api.Get(url)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// With LEASHD_WEB_PAGE=off the HTTP server still serves the probes,
// metrics and /mcp (for Kubernetes and webhooks), but neither the page nor
// its API.
func TestServeWithThePageOff(t *testing.T) {
	cleanEnv(t)
	fake := tgfake.New()
	t.Cleanup(fake.Close)
	dir := testenv.PrivateDir(t)
	for k, v := range map[string]string{
		"LEASHD_AGENT": "demo", "LEASHD_WEB_ADDR": "127.0.0.1:0", "LEASHD_WEB_PAGE": "off",
		"LEASHD_DB_PATH": filepath.Join(dir, "leashd.db"), "LEASHD_WORKDIR": dir,
		"LEASHD_TELEGRAM_BOT_TOKEN": fake.Token(), "LEASHD_TELEGRAM_API_URL": fake.URL(),
	} {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(t.Context())
	logs := &testenv.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, strings.NewReader(""), io.Discard, logs) }()
	require.Eventually(t, func() bool { return serverURL.MatchString(logs.String()) }, 10*time.Second, 10*time.Millisecond,
		"no server URL in the log:\n%s", logs)
	url := serverURL.FindStringSubmatch(logs.String())[1]
	require.Eventually(t, func() bool { return statusOf(t, url+"/readyz") == http.StatusOK }, 10*time.Second, 20*time.Millisecond,
		"ready once Telegram is connected")
	assert.Equal(t, http.StatusOK, statusOf(t, url+"/healthz"))
	assert.Equal(t, http.StatusOK, statusOf(t, url+"/metrics"))
	assert.Equal(t, http.StatusNotFound, statusOf(t, url+"/"), "no page")
	assert.Equal(t, http.StatusNotFound, statusOf(t, url+"/api/info"), "no API")
	assert.NotContains(t, logs.String(), "leashd web UI at")
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("leashd did not stop; log:\n%s", logs)
	}
}

// The page off and no other chat app: nothing to serve, naming the switch.
func TestServeRefusesToServeNothingWithThePageOff(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LEASHD_WEB_ADDR", "127.0.0.1:0")
	t.Setenv("LEASHD_WEB_PAGE", "off")
	err := run(t.Context(), nil, nil, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing to serve: LEASHD_WEB_PAGE is off")
	assert.Contains(t, err.Error(), "leashd chat")
}
