package web_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest"
)

// TestBrowserAttachAndDownload: in Chromium, a file picked with the 📎
// button goes with the composer's words as one prompt (saved in the chat's
// inbox for the demo agent), and a file the agent sends shows as a
// download link.
func TestBrowserAttachAndDownload(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	e := start(t, setup{token: "tok", engOpts: []enginetest.Setup{func(_ *engine.Deps, c *engine.Config) {
		c.WorkDir, c.FileWindow = dir, 20*time.Millisecond
	}}})
	pick := filepath.Join(t.TempDir(), "crash.log")
	require.NoError(t, os.WriteFile(pick, []byte("panic: nil map"), 0o600))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/?token=tok"),
		chromedp.WaitVisible(chromedp.CSS("#dot.on")),
		chromedp.SendKeys(chromedp.CSS("#text"), "why did it crash?"),
		chromedp.SetUploadFiles(chromedp.CSS("#attachin"), []string{pick}),
	))
	waitText(t, ctx, "You said:")
	waitText(t, ctx, "📎 crash.log")
	matches, _ := filepath.Glob(filepath.Join(dir, ".leashd", "inbox", "*", "crash.log"))
	require.Len(t, matches, 1, "the picked file reached the agent's inbox")
	chat, err := chromedp.Run(ctx, chromedp.Evaluate[string]("state.chat"))
	require.NoError(t, err)
	prompt := chromedp.Evaluate[string]("document.body.innerText")
	body, err := chromedp.Run(ctx, prompt)
	require.NoError(t, err)
	assert.Contains(t, body, "why did it crash?")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "fix.patch"), []byte("--- a\n+++ b\n"), 0o600))
	_, err = e.eng.SendFile(context.Background(), chat, "fix.patch", "the fix")
	require.NoError(t, err)
	waitText(t, ctx, "📎 fix.patch")
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("a[download]")].map(a => a.getAttribute("href")).join(" ")`))
	require.NoError(t, err)
	assert.Regexp(t, `^/api/files/[0-9a-f]{32}$`, href)
}
