package terminal_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
)

// TestChatUnderTmux cross-checks the screen on a real terminal emulator:
// leashd chat runs inside tmux, keys are sent with send-keys and the screen
// is read with capture-pane.
func TestChatUnderTmux(t *testing.T) {
	tmuxBin := testenv.Require(t, "LEASHD_TEST_TMUX", "tmux")
	bin := leashd(t)
	dir := t.TempDir()
	sock := fmt.Sprintf("leashd-chat-%d-%d", os.Getpid(), time.Now().UnixNano())
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmuxBin, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %q: %s", args, out)
		return string(out)
	}
	env := []string{"env", "-i"}
	env = append(env, baseEnv(dir)...)
	script := filepath.Join(dir, "run.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexec "+shellQuote(append(env, bin, "chat"))+"\n"), 0o755))
	tmux("new-session", "-d", "-s", "chat", "-x", "110", "-y", "50", script)
	t.Cleanup(func() { _ = exec.Command(tmuxBin, "-L", sock, "kill-server").Run() })

	capture := func(colors bool) string {
		args := []string{"capture-pane", "-p", "-J", "-S", "-", "-t", "chat"}
		if colors {
			args = append(args, "-e")
		}
		return tmux(args...)
	}
	wait := func(sub string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			s := capture(false)
			if strings.Contains(s, sub) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %q; tmux screen:\n%s", sub, s)
			}
			time.Sleep(30 * time.Millisecond)
		}
	}
	keys := func(k ...string) { tmux(append([]string{"send-keys", "-t", "chat"}, k...)...) }
	text := func(s string) { tmux("send-keys", "-t", "chat", "-l", s) }

	wait("leashd chat (terminal:local)")
	text("question")
	keys("Enter")
	wait("Database · question 1 of 2\nWhich database?\n" +
		"❯ 1) Postgres — A server, for many users\n" +
		"  2) SQLite — A file, nothing to run\n" +
		"  r) Reject\n" +
		"Choose 1-2 (↑/↓ Enter, r rejects) or type your answer:")
	assert.Contains(t, capture(true), "\x1b[31mr)", "Reject in red")
	assert.NotContains(t, capture(true), "\x1b[31m2)", "SQLite is not painted as a reject")
	text("7")
	keys("Enter")
	wait("7 is out of range: type a number from 1 to 2 (or ↑/↓ and Enter), r rejects.")
	keys("Down", "Enter")
	wait("  → SQLite")
	keys("Down", "Down", "Space")
	wait("❯ 3) [x] Billing")
	keys("Up", "Space", "Enter")
	s := wait(`Your questions have been answered: "Which database?"="SQLite", "Which features?"="Search, Billing"`)
	assert.NotContains(t, s, "7 is out of range", "hints are erased with their question")

	// A tool approval: approve and reject keys in two colours, the
	// session-wide allow and the deny with a reason on their own keys.
	text("bash")
	keys("Enter")
	wait("Allow it?\n  a/1 Allow   r/2 Reject   s/3 Allow for this session   d/4 Deny with a reason\n[a/r/s/d]")
	assert.Contains(t, capture(true), "\x1b[32ma/1 Allow", "approve in green")
	assert.Contains(t, capture(true), "\x1b[31mr/2 Reject", "reject in red")
	assert.Contains(t, capture(true), "\x1b[33md/4 Deny with a reason", "deny in yellow")
	// r rejects at once: the turn stops, the prompt is back.
	text("r")
	keys("Enter")
	s = wait(rejected)
	assert.NotContains(t, s, "Why deny it?")
	assert.NotContains(t, s, "Bash `echo hello` denied")

	// Typed text answers a question; "1 3" toggles two options.
	text("question")
	keys("Enter")
	wait("Choose 1-2")
	text("DuckDB")
	keys("Enter")
	wait("  → DuckDB")
	text("1 3")
	keys("Enter")
	wait("❯ 3) [x] Billing")
	keys("Enter")
	wait(`Your questions have been answered: "Which database?"="DuckDB", "Which features?"="Auth, Billing"`)

	text("bash")
	keys("Enter")
	wait("[a/r/s/d]")
	text("s")
	keys("Enter")
	wait("Bash `echo hello` allowed for the session. Output: hello")

	text("plan")
	keys("Enter")
	wait("Choose 1-4")
	keys("C-c")
	s = wait(rejected)
	assert.NotContains(t, s, "Plan not approved")
	text("/exit")
	keys("Enter")
	races, _ := filepath.Glob(filepath.Join(dir, "race*"))
	assert.Empty(t, races, "the race detector reported in leashd chat")
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
