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
	wait("Database · question 1 of 2\nWhich database?\n  a/1 Postgres   r/2 SQLite\n[a/r]")
	assert.Contains(t, capture(true), "\x1b[32ma/1 Postgres", "approve in green")
	assert.Contains(t, capture(true), "\x1b[31mr/2 SQLite", "reject in red")
	text("7")
	keys("Enter")
	wait(`"7" is not an answer: type a or 1 for Postgres, r or 2 for SQLite`)
	text("2")
	keys("Enter")
	wait("Which features?\n" +
		"❯ 1) [ ] Auth — Sign-in and sessions\n" +
		"  2) [ ] Search — Full-text search\n" +
		"  3) [ ] Billing — Plans and invoices\n" +
		"  r) Reject\n")
	keys("Down", "Down", "Space")
	wait("❯ 3) [x] Billing")
	keys("Up", "Space", "Enter")
	s := wait(`Your questions have been answered: "Which database?"="SQLite", "Which features?"="Search, Billing"`)
	assert.NotContains(t, s, `"7" is not an answer`, "hints are erased with their question")

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
