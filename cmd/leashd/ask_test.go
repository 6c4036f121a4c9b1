package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

const askToken = "ask-test-token-0123456789"

// startServeTelegram runs leashd (serve) with the web API behind askToken
// and Telegram on a fake Bot API that user 1001 may use; both stop when
// the test ends.
func startServeTelegram(t *testing.T) (url string, fake *tgfake.Server) {
	t.Helper()
	fake = tgfake.New()
	t.Cleanup(fake.Close)
	url, _, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_TELEGRAM_BOT_TOKEN="+fake.Token(),
		"LEASHD_TELEGRAM_API_URL="+fake.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=1001",
		"LEASHD_WEB_TOKEN="+askToken)
	t.Cleanup(func() { require.NoError(t, stop()) })
	return url, fake
}

// askRun runs `leashd ask args…` in this process and returns its exit
// code, stdout and stderr once it ends.
type askRun struct {
	done           chan error
	stdout, stderr *testenv.Buffer
	cancel         context.CancelFunc
}

func startAsk(t *testing.T, args ...string) *askRun {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	a := &askRun{done: make(chan error, 1), stdout: &testenv.Buffer{}, stderr: &testenv.Buffer{}, cancel: cancel}
	go func() {
		a.done <- run(ctx, append([]string{"ask"}, args...), strings.NewReader(""), a.stdout, a.stderr)
	}()
	t.Cleanup(cancel)
	return a
}

func (a *askRun) exit(t *testing.T) int {
	t.Helper()
	select {
	case err := <-a.done:
		var code exitCode
		if errors.As(err, &code) {
			return int(code)
		}
		require.NoError(t, err)
		return 0
	case <-time.After(30 * time.Second):
		t.Fatalf("leashd ask did not end; stderr: %s", a.stderr)
		return -1
	}
}

// `leashd ask` against a running leashd with Telegram: the question is
// shown in the Telegram chat with a button per option, a tap answers it
// (exit 0, the label printed); an approval's reject button gives exit 1
// with the reason on stderr; no answer in time exit 2; Ctrl+C withdraws
// the question (exit 2, the chat says it was cancelled); bad input and an
// unknown chat exit 3 naming the problem.
func TestAskAnsweredInTelegram(t *testing.T) {
	url, fake := startServeTelegram(t)
	const me = int64(1001)
	waitShown := func(text string, buttons bool) tgfake.Message {
		t.Helper()
		var found tgfake.Message
		require.True(t, fake.Wait(10*time.Second, func() bool {
			for _, m := range fake.BotMessages(me) {
				if strings.Contains(m.Text, text) && (len(m.Buttons()) > 0) == buttons {
					found = m
					return true
				}
			}
			return false
		}), "no message saying %q: %+v", text, fake.BotMessages(me))
		return found
	}
	waitButtons := func(text string) tgfake.Message { t.Helper(); return waitShown(text, true) }

	a := startAsk(t, "--url", url, "--chat", "telegram:1001", "--header", "Release", "--option", "Ship it", "--option", "Wait", "Deploy v2 to prod?")
	m := waitButtons("Deploy v2 to prod?")
	assert.Equal(t, []string{"Ship it", "Wait"}, m.Buttons())
	_, err := fake.TapButton(me, me, m.ID, "Ship it")
	require.NoError(t, err)
	require.Equal(t, 0, a.exit(t), a.stderr.String())
	assert.Equal(t, "Ship it\n", a.stdout.String())

	// --approval alone: the server's Approve/Reject, as over HTTP.
	a = startAsk(t, "--url", url, "--chat", "telegram:1001", "--approval", "Drop the staging DB?")
	m = waitButtons("Drop the staging DB?")
	assert.Equal(t, []string{"✅ Approve", "❌ Reject"}, m.Buttons(), "an approval card: approve and reject marked")
	_, err = fake.TapButton(me, me, m.ID, "❌ Reject")
	require.NoError(t, err)
	require.Equal(t, 1, a.exit(t))
	assert.Contains(t, a.stderr.String(), "leashd ask: rejected: Reject")

	a = startAsk(t, "--url", url, "--chat", "telegram:1001", "--timeout", "1s", "Anyone there?")
	waitShown("Anyone there?", false) // free text: answered by typing
	require.Equal(t, 2, a.exit(t))
	assert.Contains(t, a.stderr.String(), "leashd ask: expired: No answer came within 1s")

	a = startAsk(t, "--url", url, "--chat", "telegram:1001", "--option", "A", "--option", "B", "--option", "C", "--multi", "Pick")
	m = waitButtons("Pick")
	a.cancel() // Ctrl+C
	require.Equal(t, 2, a.exit(t), a.stderr.String())
	assert.Contains(t, a.stderr.String(), "cancelled")
	require.True(t, fake.Wait(10*time.Second, func() bool {
		for _, x := range fake.BotMessages(me) {
			if x.ID == m.ID {
				return strings.Contains(x.Text, telegram.CancelledText) && len(x.Buttons()) == 0
			}
		}
		return false
	}), "the question's message says it was cancelled: %+v", fake.BotMessages(me))

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", url, "Deploy?"}, "--chat is required"},
		{[]string{"--url", url, "--chat", "telegram:1001"}, "the question is missing"},
		{[]string{"--url", url, "--chat", "telegram:1001", "--approval", "--option", "Yes", "Go?"}, "--approval takes no --option (Approve/Reject) or exactly two"},
		{[]string{"--url", url, "--chat", "telegram:1001", "--timeout", "-1s", "Go?"}, "--timeout -1s is out of range"},
		{[]string{"--url", url, "--chat", "slack:C1", "Go?"}, `leashd answered 404: there is no chat "slack:C1" here: Slack is not connected to this leashd; this leashd serves telegram:<chat ID> and web page chats (any other name)`},
		{[]string{"--url", url, "--chat", "telegram:1001", "--option", "A", "--option", "A", "Go?"}, `leashd answered 400: options[1].label: "A" is given twice`},
		{[]string{"--url", url, "--token", "wrong-token-0123456789", "--chat", "telegram:1001", "Go?"}, "leashd answered 401: wrong bearer token"},
	} {
		a := startAsk(t, c.args...)
		assert.Equal(t, 3, a.exit(t), c.args)
		assert.Contains(t, a.stderr.String(), c.want, c.args)
	}
}

// The exit code reaches the shell: main exits 2 when nobody answered.
func TestAskExitCodeFromMain(t *testing.T) {
	url, _, stop := startServe(t, testenv.PrivateDir(t))
	defer func() { require.NoError(t, stop()) }()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainArgs+"=ask --url "+url+" --chat ci --timeout 1s Proceed?")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, stderr.String())
	assert.Equal(t, 2, ee.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "expired")
}

// Without --url, leashd ask talks to this configuration's leashd; when that
// one serves no API it says why and what to do, and asks nothing.
func TestAskWithoutAnAPIToTalkTo(t *testing.T) {
	for env, want := range map[string]string{
		"LEASHD_WEB_ADDR": "LEASHD_WEB_ADDR is off: give leashd's address with --url",
		"LEASHD_WEB_PAGE": "LEASHD_WEB_PAGE is off, so this leashd serves no /api: give the address of one that does with --url",
	} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "off")
			a := startAsk(t, "--chat", "telegram:1", "Go?")
			assert.Equal(t, 3, a.exit(t))
			assert.Contains(t, a.stderr.String(), want)
		})
	}
}

// A misspelt variable stops leashd ask too (it would otherwise ask the
// default address, not the leashd meant), and asks nothing.
func TestAskMisspeltVariable(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LEASHD_WEB_ADR", "127.0.0.1:1")
	a := startAsk(t, "--chat", "telegram:1", "Go?")
	assert.Equal(t, 3, a.exit(t))
	assert.Contains(t, a.stderr.String(), "leashd ask: invalid configuration:\nLEASHD_WEB_ADR is not a leashd variable, and leashd does not start with it set: did you mean LEASHD_WEB_ADDR?")
}
