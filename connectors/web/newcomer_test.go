package web_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
)

// printedURL is the line leashd prints at start-up when it generated the
// API's token: the page's address with it, alone on its line.
var printedURL = regexp.MustCompile(`(?m)^    (http://127\.0\.0\.1:[0-9]+)/\?token=[0-9a-f]{64}$`)

// startNewcomer builds leashd and starts it as someone trying it for the
// first time would: no LEASHD_WEB_TOKEN, no chat app, the demo agent, the
// default state directory (under a new XDG_STATE_HOME). It returns the
// address leashd printed, with the token, and the page's base URL.
func startNewcomer(t *testing.T) (printed, base string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not building cmd/leashd")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "leashd")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/leashd/leashd/cmd/leashd").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	cmd := exec.Command(bin)
	cmd.Dir = dir
	// Only what a fresh shell has, and the demo agent on a free port.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"LEASHD_AGENT=demo", "LEASHD_WEB_ADDR=127.0.0.1:0"}
	var logs testenv.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "leashd web UI at") || !printedURL.MatchString(logs.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("leashd printed no address with its token; its output:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	m := printedURL.FindStringSubmatch(logs.String())
	t.Logf("leashd's start-up output:\n%s", logs.String())
	return strings.TrimSpace(m[0]), m[1]
}

// TestBrowserNewcomerOpensThePrintedAddress: a newcomer starts leashd with
// no token, copies the address it printed into Chromium, answers the demo
// agent's question there, and reloads the page without ?token: the cookie
// the first visit set is enough, HttpOnly and SameSite=Strict, and the
// address bar no longer shows the token.
func TestBrowserNewcomerOpensThePrintedAddress(t *testing.T) {
	ctx := browser(t)
	printed, base := startNewcomer(t)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(printed), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, base+"/", loc, "the token left the address bar")
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/"}})
	require.NoError(t, err)
	got := res.Cookies
	require.Len(t, got, 1)
	assert.Equal(t, "leashd_token", got[0].Name)
	assert.True(t, got[0].HTTPOnly, "the page's scripts cannot read it")
	assert.Equal(t, network.CookieSameSiteStrict, got[0].SameSite)
	assert.Equal(t, "/", got[0].Path)
	assert.False(t, got[0].Secure, "plain HTTP on loopback")

	sendPrompt(t, ctx, "question")
	click(t, ctx, `button[data-label="SQLite"]`)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`button[data-label="Auth"]`))))
	click(t, ctx, `button[data-label="Auth"]`)
	waitSel(t, ctx, `button.on[data-label="Auth"]`)
	click(t, ctx, `.card:has(button.on[data-label="Auth"]) button.confirm`)
	report := `Thanks. Your answers: Which database? SQLite; Which features? Auth`
	waitText(t, ctx, report)

	// A reload, and a new visit to the bare address: the cookie does it.
	require.NoError(t, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	waitText(t, ctx, report)
	login, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#login")).display`))
	require.NoError(t, err)
	assert.Equal(t, "none", login, "no token form")
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	artifact(t, "web-newcomer.png", shot)
}
