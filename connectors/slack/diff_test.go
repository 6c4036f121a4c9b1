package slack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/slack/slackfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// An Edit approval with the real Claude Code CLI shows the change as a
// unified diff in a code block, with the file's own line numbers and the
// decision buttons in the same message; Allow applies it.
func TestClaudeCLIEditDiffInSlack(t *testing.T) {
	cli := testenv.Claude(t)
	api := fakeapi.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(path, []byte("one\ntwo\nthree\nfour\nfive\nsix\nseven\n"), 0o644))
	api.Reply(
		fakeapi.Tool("Read", map[string]any{"file_path": path}),
		fakeapi.Tool("Edit", map[string]any{"file_path": path, "old_string": "five\n", "new_string": "FIVE & <5>\n"}),
		fakeapi.Text("Edited."),
	)
	ag := claude.New(cli, claude.WithEnv(api.Env(t.TempDir())), claude.WithCloseTimeout(3*time.Second))
	e := start(t, envOpt{agent: ag, approvers: []string{allowedUser},
		engine: []enginetest.Setup{func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir }}})
	e.dm(allowedUser, "shout five")
	var m slackfake.Message
	require.True(t, e.fake.WaitFor(90*time.Second, func() bool {
		for _, x := range e.fake.Messages("D1") {
			if len(slackfake.Buttons(x.Blocks)) > 0 && strings.Contains(slackfake.Texts(x.Blocks), "@@") {
				m = x
				return true
			}
		}
		return false
	}), "no approval with a diff: %s", e.dump("D1"))
	assert.Contains(t, slackfake.Texts(m.Blocks), "```--- a/notes.txt\n+++ b/notes.txt\n@@ -2,6 +2,6 @@\n two\n three\n four\n-five\n+FIVE &amp; &lt;5&gt;\n six\n seven```")
	e.tap(allowedUser, m, "Allow")
	require.True(t, e.fake.WaitFor(60*time.Second, func() bool { return strings.Contains(e.dump("D1"), "Edited.") }), e.dump("D1"))
	out, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\nthree\nfour\nFIVE & <5>\nsix\nseven\n", string(out))
}
