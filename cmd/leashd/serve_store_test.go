package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/metrics"
	"github.com/leashd/leashd/engine/sqlite"
)

type readiness struct {
	Ready  bool `json:"ready"`
	Checks []struct {
		Name  string `json:"name"`
		Ready bool   `json:"ready"`
		Error string `json:"error"`
	} `json:"checks"`
}

func scrapeMetric(t testing.TB, url, series string) string {
	t.Helper()
	resp, err := api.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(string(b))
	require.NotNil(t, m, "no %s in /metrics", series)
	return m[1]
}

// TestServeDiskFullIsLoggedCountedAndNotReady runs leashd with its
// database on a small tmpfs and fills it: a question is asked and answered
// while nothing can be written. The agent still gets the answer; the
// answer is in an ERROR log line with the interaction and chat;
// leashd_store_errors_total counts the failed writes; /readyz answers 503
// naming the store until there is room again, and then the answer is in
// the audit log after all.
func TestServeDiskFullIsLoggedCountedAndNotReady(t *testing.T) {
	dir := testenv.Tmpfs(t, 8<<20)
	url, logs, stop := startServe(t, dir)
	defer func() { assert.NoError(t, stop()) }()
	var ready readiness
	require.Equal(t, http.StatusOK, getJSON(t, url+"/readyz", &ready))

	fill := testenv.Fill(t, dir)
	const chat = "web:diskfull"
	code, body := postJSON(t, url+"/api/chats/"+chat+"/messages", `{"text":"question"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	p := waitPending(t, url, chat, func(p pendingView) bool { return p.Question == "Which database?" })
	code, body = postJSON(t, url+"/api/interactions/"+p.ID+"/reply", `{"answers":[["SQLite"]]}`)
	require.Less(t, code, 300, "%d %s", code, body)
	waitEvent(t, url, chat, "SQLite") // the agent got the answer

	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "op=resolved")
	}, 10*time.Second, 20*time.Millisecond, "no ERROR line for the lost answer:\n%s", logs)
	var lost string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "op=resolved") {
			lost = line
		}
	}
	assert.Contains(t, lost, "level=ERROR")
	assert.Contains(t, lost, "id="+p.ID)
	assert.Contains(t, lost, "chat="+chat)
	assert.Contains(t, lost, "answer=SQLite")

	assert.Equal(t, http.StatusServiceUnavailable, getJSON(t, url+"/readyz", &ready))
	i := slices.IndexFunc(ready.Checks, func(c struct {
		Name  string `json:"name"`
		Ready bool   `json:"ready"`
		Error string `json:"error"`
	}) bool {
		return c.Name == "store"
	})
	require.GreaterOrEqual(t, i, 0, "/readyz names the store: %+v", ready)
	assert.False(t, ready.Checks[i].Ready)
	assert.Contains(t, ready.Checks[i].Error, filepath.Join(dir, "leashd.db"))
	assert.NotEqual(t, "0", scrapeMetric(t, url, `leashd_store_errors_total{op="requested"}`), "the question asked while full")
	assert.Equal(t, "1", scrapeMetric(t, url, `leashd_store_errors_total{op="resolved"}`), "its answer")

	require.NoError(t, os.Remove(fill))
	assert.Equal(t, http.StatusOK, getJSON(t, url+"/readyz", &ready), "ready again once the disk has room: %+v", ready)
	// Nothing the person answered is lost: the writes kept in memory are
	// in the audit log now.
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"audit", "--json", "--chat", chat}, nil, &out, io.Discard))
	assert.Contains(t, out.String(), `"answer":"SQLite"`)
	assert.Contains(t, out.String(), `"status":"answered"`)
}

// TestServeNoticesItsDatabaseFileDeleted: the file deleted under a running
// leashd makes /readyz say so.
func TestServeNoticesItsDatabaseFileDeleted(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, logs, stop := startServe(t, dir)
	defer func() { assert.NoError(t, stop()) }()
	require.NoError(t, os.Remove(filepath.Join(dir, "leashd.db")))
	var ready readiness
	assert.Equal(t, http.StatusServiceUnavailable, getJSON(t, url+"/readyz", &ready))
	assert.Contains(t, logs.String(), "was deleted while leashd runs")
	assert.Equal(t, "1", scrapeMetric(t, url, `leashd_store_errors_total{op="file"}`))
}

// The metrics package lists the store's ops itself (it does not import
// the store); they must agree.
func TestMetricsKnowEveryStoreOp(t *testing.T) {
	assert.Equal(t, sqlite.Ops, metrics.StoreOps)
}
