package deploy

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## From clone to a working Telegram bot\n")
	require.True(t, ok, "deploy/README.md has no Telegram walkthrough")
	section, _, _ = strings.Cut(section, "\n## ")

	// The README's lines, in order.
	require.Contains(t, section, "cp deploy/leashd.env.example deploy/leashd.env && chmod 600 deploy/leashd.env")
	start := regexp.MustCompile(`(?m)^\s*(set -a; \. deploy/leashd\.env; set \+a); go run \./cmd/leashd\s*$`).FindStringSubmatch(section)
	require.NotNil(t, start, "the walkthrough starts leashd with the env file")
	appends := regexp.MustCompile(`echo '(LEASHD_[A-Z_]+)=([^']*)' >> deploy/leashd\.env`).FindAllStringSubmatch(section, -1)
	require.Len(t, appends, 2, "the walkthrough appends the bot token, then the allowed users")
	require.Equal(t, "LEASHD_TELEGRAM_BOT_TOKEN", appends[0][1])
	require.Equal(t, "LEASHD_TELEGRAM_ALLOWED_USERS", appends[1][1])
	quoted := regexp.MustCompile("`(Not allowed\\. Your user ID is (\\d+) —\\s+add it to\\s+LEASHD_TELEGRAM_ALLOWED_USERS\\.)`").FindStringSubmatch(section)
	require.NotNil(t, quoted, "the walkthrough quotes the bot's answer to a stranger")
	require.Equal(t, quoted[2], appends[1][2], "the ID the bot tells is the one to allow")

	bin := filepath.Join(t.TempDir(), "leashd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/leashd")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	fake := tgfake.New()
	defer fake.Close()
	const user = int64(4242)

	// Step 3: the environment file, as the README writes it.
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "deploy"), 0o755))
	example, err := os.ReadFile("leashd.env.example")
	require.NoError(t, err)
	envFile := filepath.Join(dir, "deploy", "leashd.env")
	require.NoError(t, os.WriteFile(envFile, example, 0o600))
	appendLine := func(k, v string) {
		f, err := os.OpenFile(envFile, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = fmt.Fprintf(f, "%s=%s\n", k, v)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	appendLine(appends[0][1], fake.Token()) // the README's placeholder is the token BotFather gives

	// Step 4: start it. What a test must add: the fake's URL, a free port,
	// the demo agent and scratch directories.
	run := func() (url string, logs *lockedBuffer, stop func()) {
		cmd := exec.Command("sh", "-c", start[1]+`; exec "$LEASHD_BIN"`)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(),
			"LEASHD_BIN="+bin,
			"LEASHD_TELEGRAM_API_URL="+fake.URL(),
			"LEASHD_WEB_ADDR=127.0.0.1:0",
			"LEASHD_AGENT=demo",
			"LEASHD_DB_PATH="+filepath.Join(dir, "leashd.db"),
			"LEASHD_WORKDIR="+dir,
		)
		logs = &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = logs, logs
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		stop = func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-done:
				require.NoError(t, err, "leashd did not stop cleanly:\n%s", logs)
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("leashd did not stop within 30s:\n%s", logs)
			}
		}
		web := regexp.MustCompile(`leashd web UI at (http://[0-9.:]+)`)
		require.Eventually(t, func() bool {
			select {
			case err := <-done:
				t.Fatalf("leashd stopped at start: %v\n%s", err, logs)
			default:
			}
			return web.MatchString(logs.String()) && strings.Contains(logs.String(), "leashd starting")
		}, 20*time.Second, 20*time.Millisecond, "leashd did not start:\n%s", logs)
		assert.Regexp(t, `leashd starting.*connectors=.*telegram`, logs.String(), "the start-up line lists telegram, as the README says")
		return web.FindStringSubmatch(logs.String())[1], logs, stop
	}
	_, logs, stop := run()

	// Step 5: a stranger (not yet allowed) learns their ID.
	fake.Text(user, user, "hello")
	require.True(t, fake.Wait(10*time.Second, func() bool { return len(fake.BotMessages(user)) > 0 }), "no answer:\n%s", logs)
	want := strings.Join(strings.Fields(strings.ReplaceAll(quoted[1], quoted[2], fmt.Sprint(user))), " ")
	assert.Equal(t, want, fake.BotMessages(user)[0].Text, "the README quotes the bot's words")
	assert.Contains(t, logs.String(), fmt.Sprint(user), "the log shows the ID too")
	stop()

	// Step 6: allow that ID and restart.
	appendLine(appends[1][1], fmt.Sprint(user))
	url, logs, stop := run()
	defer stop()

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

// lockedBuffer is a bytes.Buffer a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
