package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// An Edit approval with the real Claude Code CLI shows the change on the
// page as diff lines coloured by kind with the file's own line numbers,
// the decision buttons under it; Allow applies it.
func TestBrowserEditDiffWithClaudeCode(t *testing.T) {
	cli := testenv.Claude(t)
	ctx := browser(t)
	api := fakeapi.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(path, []byte("one\ntwo\nthree\nfour\nfive\nsix\nseven\n"), 0o644))
	api.Reply(
		fakeapi.Tool("Read", map[string]any{"file_path": path}),
		fakeapi.Tool("Edit", map[string]any{"file_path": path, "old_string": "five\n", "new_string": "FIVE & <b>5</b>\n"}),
		fakeapi.Text("Edited."),
	)
	ag := claude.New(cli, claude.WithEnv(api.Env(t.TempDir())), claude.WithCloseTimeout(3*time.Second))
	e := start(t, setup{agent: ag, engOpts: []enginetest.Setup{func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir }}})
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.pageURL()), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	sendPrompt(t, ctx, "shout five")
	// The real CLI starts slowly on a loaded machine.
	require.Eventually(t, func() bool { return count(t, ctx, ".card .diff .dl.add") > 0 }, 90*time.Second, 50*time.Millisecond, "no diff shown")
	card := ".card:has(.diff)"

	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+jsString(card+" .diff .dl")+`)].map(r =>
		r.className.replace("dl ", "") + "|" + [...r.children].map(c => c.textContent).join("|"))`))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"file|||--- a/notes.txt", "file|||+++ b/notes.txt", "hunk|||@@ -2,6 +2,6 @@",
		"ctx|2|2| two", "ctx|3|3| three", "ctx|4|4| four", "del|5||-five", "add||5|+FIVE & <b>5</b>", "ctx|6|6| six", "ctx|7|7| seven",
	}, rows, "each line with its kind and its old and new line numbers; the text is never HTML")
	colours, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`["add","del","ctx"].map(k => getComputedStyle(document.querySelector(`+jsString(card+" .diff .dl.")+`+k+" .code")).color)`))
	require.NoError(t, err)
	assert.NotEqual(t, colours[0], colours[2], "added lines are coloured")
	assert.NotEqual(t, colours[1], colours[2], "removed lines are coloured")
	assert.NotEqual(t, colours[0], colours[1])
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	artifact(t, "web-edit-diff.png", shot)

	click(t, ctx, card+` button[data-label="allow"]`)
	waitText(t, ctx, "Edited.")
	out, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(out), "FIVE & <b>5</b>\n"), string(out))
}
