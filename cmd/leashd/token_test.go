package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
)

// tokenURL is the address leashd prints with a generated token.
var tokenURL = regexp.MustCompile(`(?m)^    (http://127\.0\.0\.1:[0-9]+/\?token=([0-9a-f]+))$`)

// bare sends a request without any token (http.DefaultClient, not api).
func bare(t *testing.T, method, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A newcomer starts leashd with no LEASHD_WEB_TOKEN on loopback: leashd
// makes a token beside the database (0600), prints the page's address
// with it once, and answers no /api or /mcp request without it; the
// probes and metrics stay open. A restart reuses the token.
func TestServeGeneratesTheTokenAndTheAPINeedsIt(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, logs, stop := startServe(t, dir)
	file := filepath.Join(dir, "web-token")
	fi, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	token := strings.TrimSpace(string(b))

	m := tokenURL.FindStringSubmatch(logs.String())
	require.NotNil(t, m, "the page's address with the token is printed:\n%s", logs)
	assert.Equal(t, url+"/?token="+token, m[1])
	assert.Equal(t, 1, strings.Count(logs.String(), token), "printed once; the log redacts it everywhere else")
	assert.Contains(t, logs.String(), "the token is also in "+file)

	for _, r := range []struct{ method, path string }{
		{"GET", "/api/info"}, {"GET", "/api/interactions"}, {"POST", "/api/interactions/x/reply"}, {"POST", "/mcp"},
	} {
		st, body := bare(t, r.method, url+r.path, "")
		assert.Equal(t, http.StatusUnauthorized, st, "%s %s: %s", r.method, r.path, body)
		assert.Contains(t, body, "a token is required", r.path)
		assert.Contains(t, body, "the token is in "+file, r.path)
		st, body = bare(t, r.method, url+r.path, "wrong-"+token)
		assert.Equal(t, http.StatusUnauthorized, st, "%s %s: %s", r.method, r.path, body)
	}
	st, body := bare(t, "GET", url+"/api/info", token)
	assert.Equal(t, http.StatusOK, st, body)
	st, body = bare(t, "POST", url+"/mcp?chat=web:x", token)
	assert.NotEqual(t, http.StatusUnauthorized, st, body)
	for _, open := range []string{"/healthz", "/readyz", "/metrics"} {
		st, body := bare(t, "GET", url+open, "")
		assert.Equal(t, http.StatusOK, st, "%s: %s", open, body)
	}
	require.NoError(t, stop())

	url, logs, stop = startServe(t, dir)
	defer func() { require.NoError(t, stop()) }()
	m = tokenURL.FindStringSubmatch(logs.String())
	require.NotNil(t, m, logs.String())
	assert.Equal(t, token, m[2], "the token survives a restart")
	st, _ = bare(t, "GET", url+"/api/info", token)
	assert.Equal(t, http.StatusOK, st)
}

// With LEASHD_LOG_FORMAT=json the address is a JSON line too.
func TestServePrintsTheTokenURLAsJSON(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, logs, stop := startServe(t, dir, "LEASHD_LOG_FORMAT=json")
	defer func() { require.NoError(t, stop()) }()
	token := testenv.WebToken(t, dir)
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["url"] == url+"/?token="+token {
			found = true
			assert.Equal(t, filepath.Join(dir, "web-token"), rec["token_file"])
		}
	}
	assert.True(t, found, "no JSON line with the address:\n%s", logs)
}

// LEASHD_WEB_TOKEN set: nothing is generated or printed with it.
func TestServeWithATokenSetGeneratesNone(t *testing.T) {
	dir := testenv.PrivateDir(t)
	_, logs, stop := startServe(t, dir, "LEASHD_WEB_TOKEN="+askToken)
	require.NoError(t, stop())
	assert.NoFileExists(t, filepath.Join(dir, "web-token"))
	assert.NotContains(t, logs.String(), askToken)
	assert.NotRegexp(t, `\?token=[^<]`, logs.String(), "only the placeholder <LEASHD_WEB_TOKEN>")
}

// LEASHD_WEB_ADDR=off: no server, no token.
func TestServeWithoutHTTPGeneratesNoToken(t *testing.T) {
	cleanEnv(t)
	dir := testenv.PrivateDir(t)
	t.Setenv("LEASHD_WEB_ADDR", "off")
	t.Setenv("LEASHD_DB_PATH", filepath.Join(dir, "leashd.db"))
	err := run(t.Context(), nil, nil, io.Discard, io.Discard)
	require.ErrorContains(t, err, "nothing to serve")
	assert.NoFileExists(t, filepath.Join(dir, "web-token"))
}

// serveErr runs leashd serve on the database dir/leashd.db and returns
// the error it stopped with at start.
func serveErr(t *testing.T, dir string) error {
	t.Helper()
	cleanEnv(t)
	t.Setenv("LEASHD_AGENT", "demo")
	t.Setenv("LEASHD_WEB_ADDR", "127.0.0.1:0")
	t.Setenv("LEASHD_DB_PATH", filepath.Join(dir, "leashd.db"))
	t.Setenv("LEASHD_WORKDIR", dir)
	err := run(t.Context(), nil, nil, io.Discard, io.Discard)
	require.Error(t, err)
	return err
}

// A state directory or database others may read, or a token file others
// may read, stops leashd at start with the chmod that fixes it.
func TestServeRefusesStateOpenToOthers(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	err := serveErr(t, dir)
	testenv.OneProblem(t, err, []string{"the directory " + dir + " (mode 0755)", "Fix: chmod 700 " + dir}, nil)

	require.NoError(t, os.Chmod(dir, 0o700))
	db := filepath.Join(dir, "leashd.db")
	require.NoError(t, os.WriteFile(db, nil, 0o644))
	require.NoError(t, os.Chmod(db, 0o644))
	err = serveErr(t, dir)
	testenv.OneProblem(t, err, []string{db + " (mode 0644)", "Fix: chmod 600 " + db}, nil)
	assert.NotContains(t, err.Error(), "chmod 700")

	require.NoError(t, os.Chmod(db, 0o600))
	tok := filepath.Join(dir, "web-token")
	require.NoError(t, os.WriteFile(tok, []byte("0123456789abcdef0123456789abcdef\n"), 0o644))
	require.NoError(t, os.Chmod(tok, 0o644))
	err = serveErr(t, dir)
	testenv.OneProblem(t, err, []string{tok + " (mode 0644)", "Fix: chmod 600 " + tok}, []string{"0123456789abcdef0123456789abcdef"})
}

// The default state directory (~/.local/state/leashd, or under
// XDG_STATE_HOME) is made 0700 at first start, and the database, its lock
// and the token in it are 0600.
func TestServeDefaultStateIsPrivate(t *testing.T) {
	cleanEnv(t) // XDG_STATE_HOME is a new temporary directory
	state := filepath.Join(os.Getenv("XDG_STATE_HOME"), "leashd")
	t.Setenv("LEASHD_AGENT", "demo")
	t.Setenv("LEASHD_WEB_ADDR", "127.0.0.1:0")
	t.Setenv("LEASHD_WORKDIR", t.TempDir())
	logs := &testenv.Buffer{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, strings.NewReader(""), io.Discard, logs) }()
	require.Eventually(t, func() bool { return tokenURL.MatchString(logs.String()) }, 10*time.Second, 10*time.Millisecond, "log: %s", logs)
	cancel()
	require.NoError(t, <-done)
	fi, err := os.Stat(state)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), state)
	entries, err := os.ReadDir(state)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		fi, err := e.Info()
		require.NoError(t, err)
		names = append(names, e.Name())
		if !e.IsDir() {
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), e.Name())
		}
	}
	assert.Subset(t, names, []string{"leashd.db", "leashd.db.lock", "web-token"})
}

// `leashd ask` with no LEASHD_WEB_TOKEN and no --token finds the token
// leashd generated and asks through it; with no leashd ever run on its
// state directory it says where it looked.
func TestAskFindsTheGeneratedToken(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, _, stop := startServe(t, dir)
	defer func() { require.NoError(t, stop()) }()
	require.Empty(t, os.Getenv("LEASHD_WEB_TOKEN"))
	a := startAsk(t, "--url", url, "--chat", "web:ask", "--option", "yes", "--option", "no", "Ship it?")
	var id string
	require.Eventually(t, func() bool {
		var list []pendingView
		if getJSON(t, url+"/api/interactions?chat=web:ask", &list) != http.StatusOK || len(list) != 1 {
			return false
		}
		id = list[0].ID
		return true
	}, 10*time.Second, 10*time.Millisecond, "the question is asked; stderr: %s", a.stderr)
	st, body := postJSON(t, url+"/api/interactions/"+id+"/reply", `{"answers":[["yes"]]}`)
	require.Equal(t, http.StatusNoContent, st, body)
	assert.Equal(t, 0, a.exit(t), a.stderr.String())
	assert.Equal(t, "yes\n", a.stdout.String())

	t.Setenv("LEASHD_DB_PATH", filepath.Join(testenv.PrivateDir(t), "leashd.db"))
	a = startAsk(t, "--url", url, "--chat", "web:ask", "Ship it?")
	assert.Equal(t, 3, a.exit(t))
	assert.Contains(t, a.stderr.String(), "LEASHD_WEB_TOKEN is not set and ")
	assert.Contains(t, a.stderr.String(), "web-token does not exist")
}

// `leashd mcp` without a token anywhere says where it looked, and does
// not start.
func TestMCPWithoutATokenSaysWhereItLooked(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LEASHD_DB_PATH", filepath.Join(testenv.PrivateDir(t), "leashd.db"))
	var stderr bytes.Buffer
	err := run(t.Context(), []string{"mcp", "--url", "http://127.0.0.1:1"}, strings.NewReader(""), io.Discard, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no API token: LEASHD_WEB_TOKEN is not set and ")
}
