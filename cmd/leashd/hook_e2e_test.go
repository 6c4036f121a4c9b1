package main

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// claudeTerminal is the real Claude Code CLI run interactively, as a
// person runs it, in a tmux window of its own tmux server.
type claudeTerminal struct {
	t    *testing.T
	tmux string
	sock string
}

// startClaudeTerminal runs claude in work with env (the fake API's, a
// temp HOME) in a 120×50 tmux window; the tmux server is killed when the
// test ends.
func startClaudeTerminal(t *testing.T, claude, work, mode string, env []string) *claudeTerminal {
	c := &claudeTerminal{t: t, tmux: testenv.Require(t, "LEASHD_TEST_TMUX", "tmux"),
		sock: fmt.Sprintf("leashd-hook-%d-%d", os.Getpid(), time.Now().UnixNano())}
	script := filepath.Join(t.TempDir(), "run.sh")
	args := append(append([]string{"env", "-i"}, env...), claude, "--permission-mode", mode)
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\ncd "+shellWord(work)+" || exit 1\nexec "+shellWords(args)+"\n"), 0o755))
	c.run("new-session", "-d", "-s", "claude", "-x", "120", "-y", "50", script)
	pid, err := strconv.Atoi(c.pid())
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = exec.Command(c.tmux, "-L", c.sock, "kill-server").Run()
		// The CLI writes its state as it exits: wait for it before the
		// temp dirs go.
		for range 100 {
			if syscall.Kill(pid, 0) != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return c
}

func shellWords(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func (c *claudeTerminal) run(args ...string) string {
	c.t.Helper()
	out, err := exec.Command(c.tmux, append([]string{"-L", c.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	require.NoError(c.t, err, "tmux %q: %s", args, out)
	return string(out)
}

func (c *claudeTerminal) screen() string { return c.run("capture-pane", "-p", "-J", "-t", "claude") }

// wait returns the screen once it contains sub; the test fails after 60 s.
func (c *claudeTerminal) wait(sub string) string {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := c.screen()
		if strings.Contains(s, sub) {
			return s
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %q on the terminal; screen:\n%s", sub, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// prompt types text and Enter at Claude Code's prompt.
func (c *claudeTerminal) prompt(text string) {
	c.idle()
	c.run("send-keys", "-t", "claude", "-l", text)
	time.Sleep(300 * time.Millisecond) // the CLI takes a paste burst as one input
	c.run("send-keys", "-t", "claude", "Enter")
}

// idle waits until the CLI waits at its prompt: nothing running (its
// hooks neither), no "esc to interrupt" in the footer.
func (c *claudeTerminal) idle() {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := c.screen()
		ready := strings.Contains(s, "? for shortcuts") || strings.Contains(s, "shift+tab to cycle") // the footer: plan mode's too
		if ready && !strings.Contains(s, "esc to interrupt") {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the CLI is still busy; screen:\n%s", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// yes answers the dialog on screen with its first option, Yes: Enter,
// again if the dialog was not ready for it.
func (c *claudeTerminal) yes() {
	c.t.Helper()
	for range 20 {
		c.run("send-keys", "-t", "claude", "Enter")
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) {
			if !strings.Contains(c.screen(), "Do you want to proceed?") {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	c.t.Fatalf("the dialog stays after Enter; screen:\n%s", c.screen())
}

// pid is the process in the window: the CLI's (exec'd by the script).
func (c *claudeTerminal) pid() string {
	return strings.TrimSpace(c.run("display-message", "-p", "-t", "claude", "#{pane_pid}"))
}

// seedClaudeHome writes what lets the CLI start without its first-run
// screens: onboarding done, work trusted, the fake API key approved.
func seedClaudeHome(t *testing.T, home, work string) string {
	cfg := filepath.Join(home, ".claude")
	require.NoError(t, os.MkdirAll(cfg, 0o700))
	seed, err := json.Marshal(map[string]any{
		"hasCompletedOnboarding": true,
		"projects":               map[string]any{work: map[string]any{"hasTrustDialogAccepted": true}},
		"customApiKeyResponses":  map[string]any{"approved": []string{fakeapi.APIKey}},
	})
	require.NoError(t, err)
	for _, p := range []string{filepath.Join(cfg, ".claude.json"), filepath.Join(home, ".claude.json")} {
		require.NoError(t, os.WriteFile(p, seed, 0o600))
	}
	return cfg
}

// userSettings is a settings file a person already has: its own hook, its
// own formatting, which install must keep and uninstall give back byte for
// byte.
const userSettings = "{\n    \"env\": {\"GREETING\": \"hi <there> & all\"},\n    \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]}\n}\n"

// TestHookClaudeCodeFollowsYouToThePhone runs the real Claude Code CLI in
// a terminal (tmux) against the fake API, with leashd's hooks installed by
// `leashd hook install` into a temp HOME, and leashd serving Telegram
// (tgfake): at the desk the permission dialog is on the terminal and
// nothing reaches the chat; after /away the same kind of request reaches
// the chat as buttons, Allow runs the command (the model gets its output),
// a typed reason denies the next (the model reads it), the final message
// reaches the chat and a typed instruction continues the same CLI process;
// /back returns the next request to the terminal; with leashd stopped the
// hooks decide nothing and the dialog is on the terminal; uninstall leaves
// the settings file as it was.
func TestHookClaudeCodeFollowsYouToThePhone(t *testing.T) {
	r := startHookRig(t, "default")
	settingsPath := r.settings
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"hook", "install", "--url", r.url}, nil, &out, &out))
	assert.Contains(t, out.String(), "already installed")
	again, _ := os.ReadFile(settingsPath)
	assert.Equal(t, string(r.installed), string(again), "installing twice changes nothing")

	pid := r.term.pid()
	hookAtTheDesk(t, r.term, r.api, r.tg, r.me)
	hookAwayOnThePhone(t, r.term, r.api, r.tg, r.me)
	assert.Equal(t, pid, r.term.pid(), "the same CLI process all along")
	waitAnsweredCounted(t, r.url, "tool_approval")

	r.stopServe()
	hookAudited(t, r.work)
	hookWithoutLeashd(t, r.term, r.api)

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"hook", "uninstall"}, nil, &out, &out))
	assert.Contains(t, out.String(), "Removed leashd's 4 hooks")
	after, err := os.ReadFile(settingsPath)
	require.NoError(t, err)
	assert.Equal(t, userSettings, string(after), "uninstall leaves the file as it was before install")
	assert.NoFileExists(t, settingsPath+".leashd-backup")
}

// hookRig is leashd serving Telegram (tgfake) and the real Claude Code
// CLI in a terminal with leashd's hooks installed in its temp HOME.
type hookRig struct {
	api                 *fakeapi.Server
	tg                  *tgfake.Server
	me                  int64
	url, work, settings string
	installed           []byte
	term                *claudeTerminal
	stopServe           func()
}

func startHookRig(t *testing.T, mode string) *hookRig {
	claude := testenv.Claude(t)
	r := &hookRig{api: fakeapi.New(t), tg: tgfake.New(), me: 1001}
	t.Cleanup(r.tg.Close)
	dir := testenv.PrivateDir(t)
	url, _, stop := startServe(t, dir,
		"LEASHD_TELEGRAM_BOT_TOKEN="+r.tg.Token(),
		"LEASHD_TELEGRAM_API_URL="+r.tg.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=1001")
	r.url = url
	stopped := false
	r.stopServe = func() {
		if !stopped {
			stopped = true
			require.NoError(t, stop())
		}
	}
	t.Cleanup(r.stopServe)
	home := t.TempDir()
	r.work = t.TempDir()
	cfgDir := seedClaudeHome(t, home, r.work)
	r.settings = filepath.Join(cfgDir, "settings.json")
	require.NoError(t, os.WriteFile(r.settings, []byte(userSettings), 0o600))
	t.Setenv("CLAUDE_CONFIG_DIR", cfgDir)
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"hook", "install", "--url", url}, nil, &out, &out))
	assert.Contains(t, out.String(), "installed in "+r.settings)
	assert.Contains(t, out.String(), "telegram:1001", "the chat defaults to the first allowed Telegram user's")
	var err error
	r.installed, err = os.ReadFile(r.settings)
	require.NoError(t, err)

	env := append([]string{"PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", runMainEnv + "=1",
		"LEASHD_DB_PATH=" + filepath.Join(dir, "leashd.db"), "LEASHD_SANDBOX=off"}, r.api.Env(home)...)
	r.term = startClaudeTerminal(t, claude, r.work, mode, env)
	return r
}

// hookAtTheDesk: a Bash permission shows the terminal's dialog, and
// nothing reaches the chat.
func hookAtTheDesk(t *testing.T, term *claudeTerminal, api *fakeapi.Server, tg *tgfake.Server, me int64) {
	api.Reply(fakeapi.Tool("Bash", map[string]any{"command": "echo desk-ok > desk.txt", "description": "Write at the desk"}),
		fakeapi.Text("Done at the desk."))
	term.prompt("write desk.txt")
	term.wait("Do you want to proceed?")
	assert.Empty(t, tg.BotMessages(me), "at the desk nothing reaches the phone")
	term.yes()
	term.wait("Done at the desk.")
	term.idle() // the Stop hook ran and found the desk
	assert.Empty(t, tg.BotMessages(me), "at the desk nothing reaches the phone")
}

// hookAwayOnThePhone: /away, then Allow, a typed denial, the final message and the
// next instruction from the phone, then /back.
func hookAwayOnThePhone(t *testing.T, term *claudeTerminal, api *fakeapi.Server, tg *tgfake.Server, me int64) {
	tg.Text(me, me, "/away")
	waitTG(t, tg, me, "the away confirmation", func(m tgfake.Message) bool { return strings.Contains(m.Text, "Away from the desk") })
	calls := len(api.Calls())
	api.Reply(fakeapi.Tool("Bash", map[string]any{"command": "echo away-ok > away.txt && cat away.txt", "description": "Write while away"}),
		fakeapi.Tool("Bash", map[string]any{"command": "rm -rf build", "description": "Clean the build"}),
		fakeapi.Text("All done while you were away."),
		fakeapi.Text("Tests ran: 3 passed."))
	term.prompt("write away.txt")
	ask := waitTG(t, tg, me, "the first command's buttons", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "away-ok") && len(m.Buttons()) > 0
	})
	assert.Contains(t, ask.Buttons(), "Deny")
	_, err := tg.TapButton(me, me, ask.ID, "Allow")
	require.NoError(t, err)
	waitTG(t, tg, me, "the second command's buttons", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "rm -rf build") && len(m.Buttons()) > 0
	})
	got := api.WaitCalls(t, calls+2, 60*time.Second)
	res, ok := got[calls+1].ToolResult(got[calls].Reply.Tools[0].ID)
	require.True(t, ok, "the allowed command's result reaches the model")
	assert.Contains(t, res.ResultText(), "away-ok", "the model gets the command's output")
	tg.Text(me, me, "not on a Friday")
	waitTG(t, tg, me, "the final message", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "All done while you were away.")
	})
	got = api.Calls()
	res, ok = got[calls+2].ToolResult(got[calls+1].Reply.Tools[0].ID)
	require.True(t, ok, "the denial reaches the model")
	assert.Contains(t, res.ResultText(), "not on a Friday", "the model reads the typed reason")
	assert.Contains(t, term.screen(), "All done while you were away.")

	tg.Text(me, me, "now run the tests")
	got = api.WaitCalls(t, calls+4, 60*time.Second)
	assert.True(t, got[calls+3].HasUserText("now run the tests"), "the instruction typed on the phone reaches the model: %q", got[calls+3].UserTexts())
	term.wait("Tests ran: 3 passed.")
	waitTG(t, tg, me, "the next final message", func(m tgfake.Message) bool { return strings.Contains(m.Text, "Tests ran: 3 passed.") })
	tg.Text(me, me, "/back")
	waitTG(t, tg, me, "the back confirmation", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Back at the desk") && strings.Contains(m.Text, "1 request")
	})
	assert.Equal(t, calls+4, len(api.Calls()), "released, the session stops and waits at its prompt")
	for _, m := range tg.BotMessages(me) {
		assert.NotContains(t, m.Text, "waiting at the terminal", "what the chat decides is not announced as waiting at the terminal")
	}
}

// hookWithoutLeashd: leashd is not running; the hooks decide nothing and
// the dialog is on the terminal as without them.
func hookWithoutLeashd(t *testing.T, term *claudeTerminal, api *fakeapi.Server) {
	api.Reply(fakeapi.Tool("Bash", map[string]any{"command": "echo gone > gone.txt", "description": "Write without leashd"}),
		fakeapi.Text("Done without leashd."))
	term.prompt("write gone.txt")
	term.wait("Do you want to proceed?")
	term.yes()
	term.wait("Done without leashd.")
}

func waitTG(t *testing.T, tg *tgfake.Server, chat int64, what string, match func(tgfake.Message) bool) tgfake.Message {
	t.Helper()
	m, ok := waitBotMessage(tg, chat, 60*time.Second, match)
	require.True(t, ok, "no bot message with %s; messages: %+v", what, tg.BotMessages(chat))
	return m
}

// hookAudited: `leashd audit` shows the hooks' requests with source=hook,
// the session's ID and its working directory.
func hookAudited(t *testing.T, work string) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"audit", "--json", "--chat", "telegram:1001"}, nil, &out, &out))
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var row struct {
			Kind, ToolSummary, Status, Text string
			Source                          struct{ Kind, SessionID, Cwd string }
		}
		require.NoError(t, json.Unmarshal([]byte(line), &row), line)
		var src struct {
			Source struct {
				Kind      string `json:"kind"`
				SessionID string `json:"session_id"`
				Cwd       string `json:"cwd"`
			} `json:"source"`
			ToolSummary string `json:"tool_summary"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &src))
		kinds = append(kinds, row.Kind+":"+row.Status)
		assert.Equal(t, "hook", src.Source.Kind, line)
		assert.NotEmpty(t, src.Source.SessionID, line)
		assert.Equal(t, work, src.Source.Cwd, line)
		if strings.Contains(src.ToolSummary, "rm -rf build") {
			assert.Equal(t, "rejected", row.Status)
			assert.Contains(t, row.Text, "not on a Friday")
		}
	}
	assert.Equal(t, []string{"tool_approval:answered", "tool_approval:rejected", "question:answered", "question:cancelled"}, kinds)
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"audit", "--chat", "telegram:1001"}, nil, &out, &out))
	assert.Contains(t, out.String(), "source=hook session=")
	assert.Contains(t, out.String(), "cwd="+work)
}

// TestHookClaudeCodeEditsAndQuestionsAway: away (leashd away on), an Edit
// reaches the chat with its diff and, allowed, is made; an
// AskUserQuestion becomes the chat's question and the answer tapped there
// reaches the model.
func TestHookClaudeCodeEditsAndQuestionsAway(t *testing.T) {
	r := startHookRig(t, "default")
	notes := filepath.Join(r.work, "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("the old line\n"), 0o644))
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"away", "on", "--url", r.url}, nil, &out, &out))
	assert.Contains(t, out.String(), "Away from the desk (telegram:1001)")
	r.api.Reply(fakeapi.Tool("Read", map[string]any{"file_path": notes}),
		fakeapi.Tool("Edit", map[string]any{"file_path": notes, "old_string": "the old line", "new_string": "the new line"}),
		fakeapi.Tool("AskUserQuestion", map[string]any{"questions": []any{map[string]any{
			"question": "Which database?", "header": "Database", "multiSelect": false,
			"options": []any{map[string]any{"label": "Postgres", "description": "A server"}, map[string]any{"label": "SQLite", "description": "A file"}},
		}}}),
		fakeapi.Text("Edited and asked."))
	r.term.prompt("edit notes.txt")
	edit := waitTG(t, r.tg, r.me, "the edit's diff and buttons", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "the new line") && len(m.Buttons()) > 0
	})
	assert.Contains(t, edit.Text, "the old line", "the diff shows what goes")
	assert.NotContains(t, edit.Buttons(), "Allow for this session", "a hook's session keeps no rule leashd could give it")
	_, err := r.tg.TapButton(r.me, r.me, edit.ID, "Allow")
	require.NoError(t, err)
	q := waitTG(t, r.tg, r.me, "the question", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Which database?") && len(m.Buttons()) > 0
	})
	_, err = r.tg.TapButton(r.me, r.me, q.ID, "SQLite")
	require.NoError(t, err)
	r.term.wait("Edited and asked.")
	b, err := os.ReadFile(notes)
	require.NoError(t, err)
	assert.Equal(t, "the new line\n", string(b), "the allowed edit is made")
	calls := r.api.Calls()
	last := calls[len(calls)-1]
	ask := calls[len(calls)-2].Reply.Tools[0]
	res, ok := last.ToolResult(ask.ID)
	require.True(t, ok, "the question's result reaches the model")
	assert.Contains(t, res.ResultText(), "SQLite", "the answer tapped on the phone reaches the model")
}

// TestHookClaudeCodePlanReviewAway: away, in plan mode, ExitPlanMode
// becomes the chat's plan review; approved there, the session leaves plan
// mode and its Write runs without asking.
func TestHookClaudeCodePlanReviewAway(t *testing.T) {
	r := startHookRig(t, "plan")
	r.tg.Text(r.me, r.me, "/away")
	waitTG(t, r.tg, r.me, "the away confirmation", func(m tgfake.Message) bool { return strings.Contains(m.Text, "Away from the desk") })
	const plan = "# Plan\n1. Write hello.txt saying hello."
	r.api.Reply(fakeapi.Tool("ExitPlanMode", map[string]any{"plan": plan}),
		fakeapi.Tool("Write", map[string]any{"file_path": filepath.Join(r.work, "hello.txt"), "content": "hello\n"}),
		fakeapi.Text("Written."))
	r.term.prompt("make a plan")
	p := waitTG(t, r.tg, r.me, "the plan review", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Write hello.txt saying hello.") && len(m.Buttons()) > 0
	})
	_, err := r.tg.TapButton(r.me, r.me, p.ID, "Approve, auto-accept edits")
	require.NoError(t, err)
	r.term.wait("Written.")
	b, err := os.ReadFile(filepath.Join(r.work, "hello.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(b))
}

// TestHookEscAtTheTerminalReleasesTheStop: away, the finished session's
// message waits in the chat; back at the terminal, Esc interrupts the
// Stop hook, and the request in the chat is withdrawn (shown cancelled)
// rather than left to be answered into a session that no longer waits.
func TestHookEscAtTheTerminalReleasesTheStop(t *testing.T) {
	r := startHookRig(t, "default")
	r.tg.Text(r.me, r.me, "/away")
	waitTG(t, r.tg, r.me, "the away confirmation", func(m tgfake.Message) bool { return strings.Contains(m.Text, "Away from the desk") })
	r.api.Reply(fakeapi.Text("Finished."))
	r.term.prompt("hello")
	msg := waitTG(t, r.tg, r.me, "the final message", func(m tgfake.Message) bool { return strings.Contains(m.Text, "Finished.") })
	r.term.wait("esc to interrupt") // the Stop hook runs
	r.term.run("send-keys", "-t", "claude", "Escape")
	r.term.wait("Interrupted")
	waitTG(t, r.tg, r.me, "the request withdrawn", func(m tgfake.Message) bool {
		return m.ID == msg.ID && strings.Contains(m.Text, "Cancelled")
	})
	var pending []pendingView
	getJSON(t, r.url+"/api/interactions?chat=telegram:1001", &pending)
	assert.Empty(t, pending)
}
