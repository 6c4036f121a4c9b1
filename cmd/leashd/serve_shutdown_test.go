package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
)

// wedgedCLI is a stand-in for a Claude Code CLI that hangs: it answers the
// initialize handshake, starts a turn and says something, then ignores both
// the end of its input and SIGTERM (as a CLI stuck in a tool might). Only
// SIGKILL ends it. It records its PID so the test can check it is gone.
const wedgedCLI = `#!/bin/sh
trap '' TERM
echo $$ >> "$WEDGED_PID_FILE"
while IFS= read -r line; do
  case "$line" in
    *'"subtype":"initialize"'*)
      id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
      printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{}}}\n' "$id" ;;
    *'"type":"user"'*)
      printf '{"type":"system","subtype":"init","session_id":"wedged-1"}\n'
      printf '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"working on it"}]},"session_id":"wedged-1"}\n' ;;
  esac
done
exec sleep 600
`

// TestServeShutdownIsBoundedWithAWedgedAgent: SIGTERM while the agent is
// mid-turn and will not exit by itself. An unbounded close (stdin, then
// TERM, then KILL, 5 s apart) would take over 10 s; leashd exits cleanly
// within LEASHD_SHUTDOWN_TIMEOUT_SECONDS and leaves no agent process behind.
func TestServeShutdownIsBoundedWithAWedgedAgent(t *testing.T) {
	cleanEnv(t)
	dir := testenv.PrivateDir(t)
	cli := filepath.Join(dir, "claude")
	require.NoError(t, os.WriteFile(cli, []byte(wedgedCLI), 0o755))
	pidFile := filepath.Join(dir, "cli.pid")

	const bound = 4 * time.Second // the engine gets 3 s of it to close sessions
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainArgs+"=",
		"LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH="+cli, "WEDGED_PID_FILE="+pidFile, "LEASHD_AGENT_ENV=WEDGED_PID_FILE",
		"LEASHD_SHUTDOWN_TIMEOUT_SECONDS="+strconv.Itoa(int(bound/time.Second)),
		"LEASHD_WEB_ADDR=127.0.0.1:0", "LEASHD_LOG_FORMAT=json",
		"LEASHD_DB_PATH="+filepath.Join(dir, "leashd.db"), "LEASHD_WORKDIR="+dir)
	logs := &testenv.Buffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, logs
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return webURL.MatchString(logs.String()) },
		10*time.Second, 10*time.Millisecond, "log: %s", logs)
	url := webURL.FindStringSubmatch(logs.String())[1]
	useToken(t, url, dir)

	st, body := postJSON(t, url+"/api/chats/c/messages", `{"text":"refactor everything"}`)
	require.Equal(t, 202, st, body)
	waitEvent(t, url, "c", "working on it") // the turn runs
	// Every CLI started appends its pid: the chat's and the prewarmed
	// spare's (LEASHD_PREWARM), which may be starting right now. One line
	// is one write, so a line read is whole.
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	var cliPIDs []int
	for _, line := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(line)
		require.NoError(t, err, "pid file: %q", b)
		cliPIDs = append(cliPIDs, pid)
	}
	require.NotEmpty(t, cliPIDs, "no CLI wrote its pid")

	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "exit status after SIGTERM; log: %s", logs)
	took := time.Since(start)
	// A generous margin for a loaded machine; without the bound this is
	// over 10 s.
	assert.Less(t, took, bound+3*time.Second, "shutdown took %v; log: %s", took, logs)
	assert.Contains(t, logs.String(), `"msg":"stopped"`, "a clean stop, not the give-up path")
	// Including a spare started after the pids were read.
	b, err = os.ReadFile(pidFile)
	require.NoError(t, err)
	for _, line := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(line)
		require.NoError(t, err)
		cliPIDs = append(cliPIDs, pid)
	}
	for _, pid := range cliPIDs {
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the wedged CLI (pid %d) was killed, not left behind", pid)
	}
}
