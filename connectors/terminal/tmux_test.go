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
	c := startTmuxChat(t)
	c.wait("leashd chat (terminal:local)")
	tmuxQuestions(t, c)
	tmuxToolApprovalRejected(t, c)
	tmuxTypedAnswers(t, c)
	tmuxSessionAllowAndPlanStopped(t, c)
	c.text("/exit")
	c.keys("Enter")
	races, _ := filepath.Glob(filepath.Join(c.dir, "race*"))
	assert.Empty(t, races, "the race detector reported in leashd chat")
}

// tmuxChat is leashd chat running in a tmux session of its own server.
type tmuxChat struct {
	t    *testing.T
	bin  string // tmux
	sock string // the tmux server's socket name (-L)
	dir  string // leashd's working directory and environment
}

// startTmuxChat starts leashd chat in a 110×50 tmux window; the tmux
// server is killed when the test ends.
func startTmuxChat(t *testing.T) *tmuxChat {
	c := &tmuxChat{
		t:    t,
		bin:  testenv.Require(t, "LEASHD_TEST_TMUX", "tmux"),
		dir:  t.TempDir(),
		sock: fmt.Sprintf("leashd-chat-%d-%d", os.Getpid(), time.Now().UnixNano()),
	}
	bin := leashd(t)
	env := []string{"env", "-i"}
	env = append(env, baseEnv(c.dir)...)
	script := filepath.Join(c.dir, "run.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexec "+shellQuote(append(env, bin, "chat"))+"\n"), 0o755))
	c.tmux("new-session", "-d", "-s", "chat", "-x", "110", "-y", "50", script)
	t.Cleanup(func() { _ = exec.Command(c.bin, "-L", c.sock, "kill-server").Run() })
	return c
}

// tmux runs a tmux command against the chat's server and returns its output.
func (c *tmuxChat) tmux(args ...string) string {
	c.t.Helper()
	out, err := exec.Command(c.bin, append([]string{"-L", c.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	require.NoError(c.t, err, "tmux %q: %s", args, out)
	return string(out)
}

// capture returns the pane's text, its whole history, with the colour
// escapes if colors.
func (c *tmuxChat) capture(colors bool) string {
	args := []string{"capture-pane", "-p", "-J", "-S", "-", "-t", "chat"}
	if colors {
		args = append(args, "-e")
	}
	return c.tmux(args...)
}

// wait returns the pane's text once it contains sub; the test fails after
// 20 s.
func (c *tmuxChat) wait(sub string) string {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := c.capture(false)
		if strings.Contains(s, sub) {
			return s
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %q; tmux screen:\n%s", sub, s)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// keys sends keys by their tmux names ("Enter", "Down", "C-c").
func (c *tmuxChat) keys(k ...string) { c.tmux(append([]string{"send-keys", "-t", "chat"}, k...)...) }

// text types s as it is.
func (c *tmuxChat) text(s string) { c.tmux("send-keys", "-t", "chat", "-l", s) }

// tmuxQuestions answers the demo's two questions with the arrows, Enter
// and Space, after a number out of range.
func tmuxQuestions(t *testing.T, c *tmuxChat) {
	c.text("question")
	c.keys("Enter")
	c.wait("Database · question 1 of 2\nWhich database?\n" +
		"❯ 1) Postgres — A server, for many users\n" +
		"  2) SQLite — A file, nothing to run\n" +
		"  r) Reject\n" +
		"Choose 1-2 (↑/↓ Enter, r rejects) or type your answer:")
	assert.Contains(t, c.capture(true), "\x1b[31mr)", "Reject in red")
	assert.NotContains(t, c.capture(true), "\x1b[31m2)", "SQLite is not painted as a reject")
	c.text("7")
	c.keys("Enter")
	c.wait("7 is out of range: type a number from 1 to 2 (or ↑/↓ and Enter), r rejects.")
	c.keys("Down", "Enter")
	c.wait("  → SQLite")
	c.keys("Down", "Down", "Space")
	c.wait("❯ 3) [x] Billing")
	c.keys("Up", "Space", "Enter")
	s := c.wait(`Thanks. Your answers: Which database? SQLite; Which features? Search, Billing`)
	assert.NotContains(t, s, "7 is out of range", "hints are erased with their question")
}

// tmuxToolApprovalRejected shows a tool approval: approve and reject keys
// in two colours, the session-wide allow and the deny with a reason on
// their own keys; r rejects at once: the turn stops, the prompt is back.
func tmuxToolApprovalRejected(t *testing.T, c *tmuxChat) {
	c.text("bash")
	c.keys("Enter")
	c.wait("Allow it?\n  a/1 Allow   r/2 Reject   s/3 Allow for this session   d/4 Deny with a reason\n[a/r/s/d]")
	assert.Contains(t, c.capture(true), "\x1b[32ma/1 Allow", "approve in green")
	assert.Contains(t, c.capture(true), "\x1b[31mr/2 Reject", "reject in red")
	assert.Contains(t, c.capture(true), "\x1b[33md/4 Deny with a reason", "deny in yellow")
	c.text("r")
	c.keys("Enter")
	s := c.wait(rejected)
	assert.NotContains(t, s, "Why deny it?")
	assert.NotContains(t, s, "Bash `echo hello` denied")
}

// tmuxTypedAnswers answers a question with typed text; "1 3" toggles two
// options.
func tmuxTypedAnswers(t *testing.T, c *tmuxChat) {
	c.text("question")
	c.keys("Enter")
	c.wait("Choose 1-2")
	c.text("DuckDB")
	c.keys("Enter")
	c.wait("  → DuckDB")
	c.text("1 3")
	c.keys("Enter")
	c.wait("❯ 3) [x] Billing")
	c.keys("Enter")
	c.wait(`Thanks. Your answers: Which database? DuckDB; Which features? Auth, Billing`)
}

// tmuxSessionAllowAndPlanStopped allows a tool for the session with s,
// then stops a plan review with Ctrl+C.
func tmuxSessionAllowAndPlanStopped(t *testing.T, c *tmuxChat) {
	c.text("bash")
	c.keys("Enter")
	c.wait("[a/r/s/d]")
	c.text("s")
	c.keys("Enter")
	c.wait("Bash `echo hello` allowed for the session. Output: hello")

	c.text("plan")
	c.keys("Enter")
	c.wait("Choose 1-4")
	c.keys("C-c")
	s := c.wait(rejected)
	assert.NotContains(t, s, "Plan not approved")
}

// shellQuote quotes args for sh, each in single quotes.
func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
