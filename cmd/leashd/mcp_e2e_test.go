package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// TestMCPRealClaudeApprovalsFromTelegram runs the real Claude Code CLI
// outside leashd, as a CI job would — `claude -p` with --mcp-config pointing
// at leashd's /mcp for a Telegram chat and --permission-prompt-tool
// mcp__leashd__permission_prompt, the model scripted by the fake Messages
// API: its ask_user call is shown in Telegram as a multi-select and
// answered by taps; its Bash call that writes a file is shown as a tool
// approval and runs after the Allow tap; the model receives both answers.
func TestMCPRealClaudeApprovalsFromTelegram(t *testing.T) {
	claudePath := testenv.Claude(t)
	url, fake := startServeTelegram(t)
	const me = int64(1001)

	api := fakeapi.New(t)
	ask := fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_ask", Name: "mcp__leashd__ask_user", Input: map[string]any{
		"questions": []map[string]any{{"question": "Which checks?", "header": "Checks", "multiSelect": true,
			"options": []map[string]string{{"label": "lint"}, {"label": "unit"}, {"label": "e2e"}}}},
	}}}}
	bash := fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_bash", Name: "Bash", Input: map[string]string{
		"command": "echo shipped > deployed.txt", "description": "record the deploy"}}}}
	api.Reply(ask, bash, fakeapi.Text("All done."))

	dir := t.TempDir()
	mcpConfig, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"leashd": map[string]any{
		"type": "http", "url": url + "/mcp?chat=telegram:1001",
		"headers": map[string]string{"Authorization": "Bearer " + askToken},
	}}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudePath, "-p", "Run the release checks and record the deploy",
		"--mcp-config", string(mcpConfig), "--strict-mcp-config",
		"--permission-prompt-tool", "mcp__leashd__permission_prompt",
		"--allowedTools", "mcp__leashd__ask_user")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), api.Env(t.TempDir())...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	wait := func(what string, match func(tgfake.Message) bool) tgfake.Message {
		t.Helper()
		var found tgfake.Message
		ok := fake.Wait(60*time.Second, func() bool {
			for _, m := range fake.BotMessages(me) {
				if match(m) {
					found = m
					return true
				}
			}
			return false
		})
		if !ok {
			cancel()
			t.Fatalf("no Telegram message with %s; messages: %+v\nclaude stdout: %s\nstderr: %s", what, fake.BotMessages(me), out.String(), errOut.String())
		}
		return found
	}
	q := wait("the multi-select question", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Which checks?") && len(m.Buttons()) > 0
	})
	assert.Equal(t, []string{"lint", "unit", "e2e", "Done"}, q.Buttons())
	for _, b := range []string{"lint", "e2e", "Done"} {
		if b == "Done" {
			require.True(t, fake.Wait(10*time.Second, func() bool {
				for _, m := range fake.BotMessages(me) {
					if m.ID == q.ID {
						return strings.Count(strings.Join(m.Buttons(), "|"), "✅") == 2
					}
				}
				return false
			}), "both toggles shown")
		}
		_, err := fake.TapButton(me, me, q.ID, b)
		require.NoError(t, err, b)
	}

	approval := wait("the Bash approval", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "echo shipped &gt; deployed.txt") && len(m.Buttons()) > 0
	})
	assert.Contains(t, approval.Text, "Permission: Bash")
	_, err = fake.TapButton(me, me, approval.ID, "Allow")
	require.NoError(t, err)

	select {
	case err := <-exited:
		require.NoError(t, err, "claude: %s\n%s", out.String(), errOut.String())
	case <-ctx.Done():
		t.Fatalf("claude did not finish: %s\n%s", out.String(), errOut.String())
	}
	assert.Contains(t, out.String(), "All done.")
	b, err := os.ReadFile(filepath.Join(dir, "deployed.txt"))
	require.NoError(t, err, "the approved command ran")
	assert.Equal(t, "shipped\n", string(b))

	calls := api.Calls()
	require.Len(t, calls, 3)
	askResult, ok := calls[1].ToolResult("toolu_ask")
	require.True(t, ok)
	assert.Equal(t, `"Which checks?"="lint, e2e"`, askResult.ResultText())
	bashResult, ok := calls[2].ToolResult("toolu_bash")
	require.True(t, ok)
	assert.False(t, bashResult.IsError, bashResult.ResultText())
}
