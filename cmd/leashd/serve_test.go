package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent/claude"
)

var webURL = regexp.MustCompile(`leashd web UI at (http://[0-9.:]+)`)

// tokens holds the API token of every leashd a test started; api sends
// it, as a client that found the token does.
var (
	tokens testenv.Tokens
	api    = tokens.Client()
)

// useToken registers the API token of the leashd at url whose database is
// in dir: LEASHD_WEB_TOKEN when the test set it, else the one leashd
// generated there.
func useToken(t testing.TB, url, dir string) string {
	t.Helper()
	tok := os.Getenv("LEASHD_WEB_TOKEN")
	if tok == "" {
		tok = testenv.WebToken(t, dir)
	}
	tokens.Set(url, tok)
	return tok
}

// startServe runs `leashd` (serve) in this process with the demo agent on
// a free loopback port and returns its URL, its log and a stop function
// that shuts it down and returns run's error.
func startServe(t *testing.T, dir string, env ...string) (url string, logs *testenv.Buffer, stop func() error) {
	t.Helper()
	cleanEnv(t)
	t.Setenv("LEASHD_AGENT", "demo")
	t.Setenv("LEASHD_WEB_ADDR", "127.0.0.1:0")
	t.Setenv("LEASHD_DB_PATH", filepath.Join(dir, "leashd.db"))
	t.Setenv("LEASHD_WORKDIR", dir)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(t.Context())
	logs = &testenv.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, strings.NewReader(""), io.Discard, logs) }()
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatalf("leashd did not stop within 30s; log:\n%s", logs)
			return nil
		}
	}
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			t.Fatalf("leashd stopped at start: %v\n%s", err, logs)
		default:
		}
		return webURL.MatchString(logs.String())
	}, 10*time.Second, 10*time.Millisecond, "no web URL in the log:\n%s", logs)
	url = webURL.FindStringSubmatch(logs.String())[1]
	useToken(t, url, filepath.Dir(os.Getenv("LEASHD_DB_PATH")))
	return url, logs, stop
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := api.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if v != nil {
		require.NoError(t, json.Unmarshal(body, v), "body: %s", body)
	}
	return resp.StatusCode
}

func postJSON(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := api.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

type pendingView struct {
	ID          string `json:"interaction_id"`
	Kind        string `json:"kind"`
	Question    string `json:"question"`
	ToolName    string `json:"tool_name"`
	Interrupted bool   `json:"interrupted"`
}

func waitPending(t *testing.T, url, chat string, match func(pendingView) bool) pendingView {
	t.Helper()
	return waitPendingWithin(t, url, chat, 10*time.Second, match)
}

// waitPendingWithin is waitPending with a limit of its own (a restart, a
// runner's agent starting).
func waitPendingWithin(t *testing.T, url, chat string, limit time.Duration, match func(pendingView) bool) pendingView {
	t.Helper()
	var found pendingView
	assert.Eventually(t, func() bool {
		var list []pendingView
		getJSON(t, url+"/api/interactions?chat="+chat, &list)
		for _, p := range list {
			if match(p) {
				found = p
				return true
			}
		}
		return false
	}, limit, 20*time.Millisecond, "no such interaction pending in %s", chat)
	if found.ID == "" {
		var list []json.RawMessage
		getJSON(t, url+"/api/interactions?chat="+chat, &list)
		t.Fatalf("pending in %s: %s", chat, list)
	}
	return found
}

// TestServeAnswersAToolApprovalAndAuditsIt runs leashd as `leashd` with no
// tokens: the web page and API, health, readiness and metrics are served;
// a prompt reaches the demo agent, its tool approval is answered over the
// API, and after a graceful stop `leashd audit` on the same database shows
// who allowed what.
func TestServeAnswersAToolApprovalAndAuditsIt(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, logs, stop := startServe(t, dir)

	assert.Equal(t, http.StatusOK, getJSON(t, url+"/healthz", nil))
	var ready struct {
		Ready  bool `json:"ready"`
		Checks []struct {
			Name  string `json:"name"`
			Ready bool   `json:"ready"`
		} `json:"checks"`
	}
	assert.Equal(t, http.StatusOK, getJSON(t, url+"/readyz", &ready))
	assert.True(t, ready.Ready)
	require.Len(t, ready.Checks, 3, "the store, the demo agent and the web connector")
	assert.Equal(t, "store", ready.Checks[0].Name)
	assert.Equal(t, "demo", ready.Checks[1].Name)
	assert.Equal(t, "web", ready.Checks[2].Name)
	var info struct{ Agent string }
	getJSON(t, url+"/api/info", &info)
	assert.Equal(t, "demo agent", info.Agent)

	const chat = "web:serve"
	code, body := postJSON(t, url+"/api/chats/"+chat+"/messages", `{"text":"bash please"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	assert.JSONEq(t, `{"routed":"agent"}`, body)
	p := waitPending(t, url, chat, func(p pendingView) bool { return p.ToolName == "Bash" })
	assert.Equal(t, "tool_approval", p.Kind)

	code, body = postJSON(t, url+"/api/interactions/"+p.ID+"/reply", `{"answers":[["allow"]]}`)
	require.Equal(t, http.StatusNoContent, code, body)
	code, body = postJSON(t, url+"/api/interactions/"+p.ID+"/reply", `{"answers":[["allow"]]}`)
	assert.Equal(t, http.StatusConflict, code, "a second tap on a resolved request: %s", body)

	waitAnsweredCounted(t, url, "tool_approval")

	require.NoError(t, stop())
	assert.Contains(t, logs.String(), "msg=stopped")
	assert.NotContains(t, logs.String(), "Claude Code not found", "LEASHD_AGENT=demo does not look for Claude Code")

	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"audit", "--json", "--chat", chat}, nil, &out, io.Discard))
	var row struct {
		InteractionID string `json:"interaction_id"`
		Kind          string `json:"kind"`
		ToolName      string `json:"tool_name"`
		Decision      string `json:"decision"`
		Status        string `json:"status"`
		By            string `json:"by"`
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 1, out.String())
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &row))
	assert.Equal(t, p.ID, row.InteractionID)
	assert.Equal(t, "Bash", row.ToolName)
	assert.Equal(t, "allow", row.Decision)
	assert.Equal(t, "answered", row.Status)
	assert.Equal(t, "web", row.By)
}

// waitAnsweredCounted waits until /metrics counts one answered interaction
// of kind (the metrics watcher counts in the background).
func waitAnsweredCounted(t *testing.T, url, kind string) {
	t.Helper()
	answered := regexp.MustCompile(`leashd_interactions_resolved_total\{kind="` + kind + `",status="answered"\} 1\n`)
	assert.Eventually(t, func() bool {
		resp, err := api.Get(url + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		text, _ := io.ReadAll(resp.Body)
		return answered.Match(text)
	}, 5*time.Second, 20*time.Millisecond, "/metrics counts the answered %s", kind)
}

// waitEvent reads the chat's event stream (from the start) until one
// contains text.
func waitEvent(t *testing.T, url, chat, text string) {
	t.Helper()
	waitEventWithin(t, url, chat, text, 10*time.Second)
}

// waitEventWithin is waitEvent with a limit of its own; a stream that
// breaks (the server restarting) is opened again until then.
func waitEventWithin(t *testing.T, url, chat, text string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var seen string
	for time.Now().Before(deadline) {
		var found bool
		if found, seen = eventsUntil(t.Context(), url, chat, text, deadline); found {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%q never shown in %s; events:\n%s", text, chat, seen)
}

// eventsUntil reads the chat's events from the start until one holds
// text (true), the stream ends or the deadline passes; it returns what
// it read.
func eventsUntil(ctx context.Context, url, chat, text string, deadline time.Time) (bool, string) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/events?chat="+chat+"&after=0", nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := api.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	var seen strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), text) {
			return true, seen.String()
		}
		seen.WriteString(sc.Text() + "\n")
	}
	return false, seen.String()
}

func TestServeRefusesToServeNothing(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LEASHD_WEB_ADDR", "off")
	err := run(t.Context(), nil, nil, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing to serve")
	assert.Contains(t, err.Error(), "LEASHD_TELEGRAM_BOT_TOKEN")
	assert.Contains(t, err.Error(), "leashd chat")
}

func TestServeAgentClaudeWithoutTheCLI(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LEASHD_AGENT", "claude")
	t.Setenv("LEASHD_CLAUDE_PATH", filepath.Join(testenv.PrivateDir(t), "no-claude-here"))
	t.Setenv("LEASHD_WEB_ADDR", "127.0.0.1:0")
	err := run(t.Context(), nil, nil, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LEASHD_AGENT=claude")
	assert.Contains(t, err.Error(), "no-claude-here")
	assert.Contains(t, err.Error(), "npm install", "says how to install it")
}

// TestServeStopsOnSIGTERM runs the real main in a child process, as a
// service manager would, and stops it with SIGTERM: it exits 0 and says so.
func TestServeStopsOnSIGTERM(t *testing.T) {
	cleanEnv(t)
	dir := testenv.PrivateDir(t)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainArgs+"=",
		"LEASHD_AGENT=demo", "LEASHD_WEB_ADDR=127.0.0.1:0", "LEASHD_LOG_FORMAT=json",
		"LEASHD_DB_PATH="+filepath.Join(dir, "leashd.db"), "LEASHD_WORKDIR="+dir)
	logs := &testenv.Buffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, logs
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "leashd web UI at") },
		10*time.Second, 10*time.Millisecond, "log: %s", logs)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "exit status after SIGTERM; log: %s", logs)
	assert.Contains(t, logs.String(), `"msg":"stopped"`)
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		assert.True(t, json.Valid([]byte(line)), "LEASHD_LOG_FORMAT=json: every log line is JSON: %s", line)
	}
}

// TestServeRefusesASecondInstanceOnTheSameDatabase: two leashd on one
// database would mark each other's pending requests interrupted and poll
// the same bots; the second is refused with who holds it and what to do.
func TestServeRefusesASecondInstanceOnTheSameDatabase(t *testing.T) {
	dir := testenv.PrivateDir(t)
	_, _, stop := startServe(t, dir)
	err := run(t.Context(), nil, nil, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "another leashd (pid "+strconv.Itoa(os.Getpid())+") is already serving")
	assert.Contains(t, err.Error(), filepath.Join(dir, "leashd.db"))
	assert.Contains(t, err.Error(), "its own LEASHD_DB_PATH")
	require.NoError(t, stop())

	_, _, stop = startServe(t, dir) // released at exit: the next one starts
	require.NoError(t, stop())
}

// TestServeAutoFallsBackToTheDemoAgent is a newcomer's first run: no
// tokens, LEASHD_AGENT=auto (the default) and no Claude Code installed.
// leashd still serves the page, says in its log that it uses the demo agent
// and how to change that, the page names the demo agent, and its flows work.
func TestServeAutoFallsBackToTheDemoAgent(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, logs, stop := startServe(t, dir,
		"LEASHD_AGENT=auto", // the default
		"LEASHD_CLAUDE_PATH="+filepath.Join(dir, "no-claude-here"))
	assert.Contains(t, logs.String(), "Claude Code not found: using the built-in demo agent")
	assert.Contains(t, logs.String(), "install @anthropic-ai/claude-code", "says how to get the real agent")
	assert.Contains(t, logs.String(), "no-claude-here", "names the path it looked for")

	var info struct {
		Agent string `json:"agent"`
	}
	require.Equal(t, http.StatusOK, getJSON(t, url+"/api/info", &info))
	assert.Equal(t, "demo agent", info.Agent, "the page says which agent answers")

	st, body := postJSON(t, url+"/api/chats/first/messages", `{"text":"bash"}`)
	require.Equal(t, http.StatusAccepted, st, body)
	p := waitPending(t, url, "first", func(p pendingView) bool { return p.Kind == "tool_approval" })
	assert.Equal(t, "Bash", p.ToolName)
	require.NoError(t, stop())
}

// leashd logs the Claude Code version at start and warns when it is
// outside the range CI tests.
func TestServeLogsTheClaudeVersion(t *testing.T) {
	for version, warns := range map[string]bool{claude.NewestTestedVersion: false, "9.0.0": true} {
		t.Run(version, func(t *testing.T) {
			dir := testenv.PrivateDir(t)
			bin := filepath.Join(dir, "claude")
			require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho '"+version+" (Claude Code)'\n"), 0o755))
			_, logs, stop := startServe(t, dir, "LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH="+bin)
			require.Eventually(t, func() bool { return strings.Contains(logs.String(), "version="+version) },
				15*time.Second, 10*time.Millisecond, "the version is logged: %s", logs)
			require.NoError(t, stop())
			assert.Equal(t, warns, strings.Contains(logs.String(), "outside the range leashd is tested with"), logs.String())
		})
	}
}

// LEASHD_AGENT=acp with a program that does not exist stops leashd at
// start, naming the command and how to fix it, as claude does.
func TestServeAgentACPWithoutTheProgram(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LEASHD_AGENT", "acp")
	t.Setenv("LEASHD_ACP_COMMAND", filepath.Join(t.TempDir(), "no-such-agent")+" --acp")
	t.Setenv("LEASHD_WEB_ADDR", "127.0.0.1:0")
	err := run(t.Context(), nil, nil, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LEASHD_AGENT=acp")
	assert.Contains(t, err.Error(), "no-such-agent")
	assert.Contains(t, err.Error(), "LEASHD_ACP_COMMAND")
}
