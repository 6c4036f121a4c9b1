package deploy

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/slack/slackfake"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

// TestTelegramWalkthrough follows deploy/README.md's "From clone to a
// working Telegram bot" as a newcomer would: its own shell lines write the
// environment file and start leashd (the built binary in place of go run),
// against a fake Telegram. The bot must tell a stranger their ID in the
// words the README quotes, and after the README's allow-and-restart step
// answer `question` with buttons; /readyz answers 200.
func TestTelegramWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building cmd/leashd")
	}
	start, appends, quoted := telegramWalkthroughLines(t)
	bin := buildLeashd(t)
	fake := tgfake.New()
	defer fake.Close()
	const user = int64(4242)

	// Step 3: the environment file, as the README writes it.
	dir := t.TempDir()
	appendLine := exampleEnvFile(t, dir)
	appendLine(appends[0][1], fake.Token()) // the README's placeholder is the token BotFather gives

	// Step 4: start it. What a test must add: the fake's URL, a free port,
	// the demo agent and scratch directories.
	run := func() (string, *testenv.Buffer, func()) {
		return startLeashd(t, dir, start[1], bin, "telegram", "LEASHD_TELEGRAM_API_URL="+fake.URL())
	}
	_, logs, stop := run()

	// Step 5: a stranger (not yet allowed) learns their ID.
	fake.Text(user, user, "hello")
	require.True(t, fake.Wait(10*time.Second, func() bool { return len(fake.BotMessages(user)) > 0 }), "no answer:\n%s", logs)
	want := strings.Join(strings.Fields(strings.ReplaceAll(quoted[1], quoted[2], fmt.Sprint(user))), " ")
	assert.Equal(t, want, fake.BotMessages(user)[0].Text, "the README quotes the bot's words")
	// The reply may reach the fake before leashd's log line reaches us.
	assert.True(t, fake.Wait(5*time.Second, func() bool { return strings.Contains(logs.String(), fmt.Sprint(user)) }),
		"the log shows the ID too:\n%s", logs)
	stop()

	// Step 6: allow that ID and restart.
	appendLine(appends[1][1], fmt.Sprint(user))
	url, logs, _ := run()

	// Step 7: the demo agent's question arrives with buttons.
	before := len(fake.BotMessages(user))
	fake.Text(user, user, "question")
	require.True(t, fake.Wait(15*time.Second, func() bool {
		for _, m := range fake.BotMessages(user)[before:] {
			if len(m.Buttons()) > 1 {
				return true
			}
		}
		return false
	}), "no question with buttons:\n%s", logs)

	// Step 8: ready.
	require.Eventually(t, func() bool {
		resp, err := http.Get(url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 10*time.Second, 50*time.Millisecond, "/readyz never answered 200")
}

// telegramWalkthroughLines returns the lines of deploy/README.md's Telegram
// walkthrough the test runs, checking they are there in order: the command
// that starts leashd with the environment file (start[1]), the two lines
// appended to it (token, then allowed users: name in [1], value in [2]), and
// the bot's answer to a stranger as quoted (whole in [1], the ID in [2]).
func telegramWalkthroughLines(t *testing.T) (start []string, appends [][]string, quoted []string) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## From clone to a working Telegram bot\n")
	require.True(t, ok, "deploy/README.md has no Telegram walkthrough")
	section, _, _ = strings.Cut(section, "\n## ")

	// The README's lines, in order.
	require.Contains(t, section, "cp deploy/leashd.env.example deploy/leashd.env && chmod 600 deploy/leashd.env")
	start = regexp.MustCompile(`(?m)^\s*(set -a; \. deploy/leashd\.env; set \+a); go run \./cmd/leashd\s*$`).FindStringSubmatch(section)
	require.NotNil(t, start, "the walkthrough starts leashd with the env file")
	appends = regexp.MustCompile(`echo '(LEASHD_[A-Z_]+)=([^']*)' >> deploy/leashd\.env`).FindAllStringSubmatch(section, -1)
	require.Len(t, appends, 2, "the walkthrough appends the bot token, then the allowed users")
	require.Equal(t, "LEASHD_TELEGRAM_BOT_TOKEN", appends[0][1])
	require.Equal(t, "LEASHD_TELEGRAM_ALLOWED_USERS", appends[1][1])
	quoted = regexp.MustCompile("`(Not allowed\\. Your user ID is (\\d+) —\\s+add it to\\s+LEASHD_TELEGRAM_ALLOWED_USERS\\.)`").FindStringSubmatch(section)
	require.NotNil(t, quoted, "the walkthrough quotes the bot's answer to a stranger")
	require.Equal(t, quoted[2], appends[1][2], "the ID the bot tells is the one to allow")
	return start, appends, quoted
}

// exampleEnvFile writes dir/deploy/leashd.env from leashd.env.example, as
// the README's cp line does, and returns a function appending a line to it,
// as the README's echo lines do.
func exampleEnvFile(t *testing.T, dir string) (appendLine func(k, v string)) {
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "deploy"), 0o755))
	example, err := os.ReadFile("leashd.env.example")
	require.NoError(t, err)
	envFile := filepath.Join(dir, "deploy", "leashd.env")
	require.NoError(t, os.WriteFile(envFile, example, 0o600))
	return func(k, v string) {
		f, err := os.OpenFile(envFile, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = fmt.Fprintf(f, "%s=%s\n", k, v)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
}

// TestSlackWalkthrough follows deploy/README.md's "Slack, end to end" from
// step 8: its own lines append the tokens and the member ID to the
// environment file and start leashd, against a fake Slack (Web API and
// Socket Mode). A mention saying `question` must get the demo agent's
// question with buttons in a thread.
func TestSlackWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building cmd/leashd")
	}
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## Slack, end to end\n")
	require.True(t, ok, "deploy/README.md has no Slack walkthrough")
	section, _, _ = strings.Cut(section, "\n## ")
	// The shell block of step 8, as it reads rendered (list indentation off).
	block := regexp.MustCompile("(?s)```sh\n(.*?cat >> deploy/leashd\\.env <<'ENV'.*?)```").FindStringSubmatch(section)
	require.NotNil(t, block, "step 8 appends the tokens with a here-document")
	var lines []string
	for l := range strings.SplitSeq(strings.TrimRight(block[1], " \n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "   "))
	}
	script := strings.Join(lines, "\n")
	startLine := regexp.MustCompile(`(?m)^(set -a; \. deploy/leashd\.env; set \+a); go run \./cmd/leashd$`)
	start := startLine.FindStringSubmatch(script)
	require.NotNil(t, start, "step 8 starts leashd with the env file:\n%s", script)
	appendPart := strings.TrimSpace(startLine.ReplaceAllString(script, ""))
	for _, placeholder := range []string{"xoxb-…", "xapp-…", "U0123456789"} {
		require.Contains(t, appendPart, placeholder)
	}

	const bot, app, user = "xoxb-walkthrough-1", "xapp-walkthrough-1", "UNEWBIE"
	fake := slackfake.New(bot, app)
	defer fake.Close()
	bin := buildLeashd(t)

	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "deploy"), 0o755))
	example, err := os.ReadFile("leashd.env.example")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "deploy", "leashd.env"), example, 0o600))
	sh := exec.Command("sh", "-c", strings.NewReplacer("xoxb-…", bot, "xapp-…", app, "U0123456789", user).Replace(appendPart))
	sh.Dir = dir
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)

	_, logs, _ := startLeashd(t, dir, start[1], bin, "slack", "LEASHD_SLACK_API_URL="+fake.APIURL())
	require.True(t, fake.WaitFor(10*time.Second, func() bool { return fake.Connected() > 0 }), "Socket Mode never connected:\n%s", logs)

	// Step 9: "@yourbot question" in a channel. Slack delivers a mention
	// twice (app_mention and message).
	const ts = "1700000000.000001"
	text := "<@" + slackfake.BotUserID + "> question"
	for i, ev := range []map[string]any{
		slackfake.MentionEvent("C1", user, ts, "", text),
		slackfake.MessageEvent("C1", "channel", user, ts, "", text),
	} {
		_, err := fake.Push("events_api", slackfake.EventCallback(fmt.Sprint("Ev", i), ev), 0)
		require.NoError(t, err)
	}
	require.True(t, fake.WaitFor(15*time.Second, func() bool {
		for _, m := range fake.Messages("C1") {
			if m.ThreadTS == ts && len(slackfake.Buttons(m.Blocks)) > 1 {
				return true
			}
		}
		return false
	}), "no question with buttons in the thread:\n%s", logs)
	assert.NotContains(t, logs.String(), bot, "the bot token never reaches the log")
	assert.NotContains(t, logs.String(), app, "the app token never reaches the log")
}

// buildLeashd builds cmd/leashd into a temporary directory.
func buildLeashd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "leashd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/leashd")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// startLeashd runs the walkthrough's start line (sourcing
// deploy/leashd.env in dir) with the binary in place of go run, plus what
// a test must add: extra (the fake's URL), a free port, the demo agent and
// scratch directories. It waits for the start-up line, which must list
// connector, and returns the web URL, the log and a stop function.
func startLeashd(t *testing.T, dir, sourceEnv, bin, connector string, extra ...string) (url string, logs *testenv.Buffer, stop func()) {
	t.Helper()
	cmd := exec.Command("sh", "-c", sourceEnv+`; exec "$LEASHD_TEST_BIN"`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"LEASHD_TEST_BIN="+bin,
		"LEASHD_WEB_ADDR=127.0.0.1:0",
		"LEASHD_AGENT=demo",
		"LEASHD_DB_PATH="+filepath.Join(dir, "state", "leashd.db"), // leashd makes it 0700
		"LEASHD_WORKDIR="+dir,
	)
	cmd.Env = append(cmd.Env, extra...)
	logs = &testenv.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			require.NoError(t, err, "leashd did not stop cleanly:\n%s", logs)
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("leashd did not stop within 30s:\n%s", logs)
		}
	}
	t.Cleanup(stop)
	web := regexp.MustCompile(`leashd web UI at (http://[0-9.:]+)`)
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			t.Fatalf("leashd stopped at start: %v\n%s", err, logs)
		default:
		}
		return web.MatchString(logs.String()) && strings.Contains(logs.String(), "leashd starting")
	}, 20*time.Second, 20*time.Millisecond, "leashd did not start:\n%s", logs)
	assert.Regexp(t, `leashd starting.*connectors=.*`+connector, logs.String(), "the start-up line lists %s, as the README says", connector)
	return web.FindStringSubmatch(logs.String())[1], logs, stop
}
