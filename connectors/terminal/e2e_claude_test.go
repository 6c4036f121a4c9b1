package terminal_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// TestChatWithClaudeCode runs `leashd chat` with the real Claude Code CLI
// (pinned; LEASHD_TEST_CLAUDE) against the fake Messages API: a question is
// answered in the terminal and the model reads the answer; a tool approval
// rejected with Ctrl+C reaches the model as the user's rejection.
func TestChatWithClaudeCode(t *testing.T) {
	cli := testenv.Claude(t)
	api := fakeapi.New(t)
	question := map[string]any{"questions": []map[string]any{{
		"question": "Which database?", "header": "DB", "multiSelect": false,
		"options": []map[string]string{
			{"label": "Postgres", "description": "A server"},
			{"label": "SQLite", "description": "A file"},
		},
	}}}
	api.Reply(
		fakeapi.Reply{Text: "Let me ask you first.", Tools: []fakeapi.ToolUse{{ID: "toolu_ask_1", Name: "AskUserQuestion", Input: question}}},
		fakeapi.Text("SQLite it is."),
		fakeapi.Reply{Text: "I will create a file.", Tools: []fakeapi.ToolUse{{ID: "toolu_bash_1", Name: "Bash", Input: map[string]string{"command": "touch made-by-claude.txt", "description": "Create a file"}}}},
	)
	s := start(t, nil, append(api.Env(t.TempDir()), "LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH="+cli)...)

	s.send("pick a database", keyEnter)
	s.waitText("Let me ask you first.")
	// A question is a list with a Reject line, even with two options.
	s.waitText("DB\nWhich database?\n❯ 1) Postgres — A server\n  2) SQLite — A file\n  r) Reject\nChoose 1-2 (↑/↓ Enter, r rejects) or type your answer:")
	s.send("3", keyEnter)
	s.waitText(`3 is out of range: type a number from 1 to 2 (or ↑/↓ and Enter), r rejects.`)
	s.send("2", keyEnter)
	s.waitText("  → SQLite")
	s.waitText("SQLite it is.")
	s.waitIdle()
	calls := api.WaitCalls(t, 2, 30*time.Second)
	res, ok := calls[1].ToolResult("toolu_ask_1")
	require.True(t, ok, "the model got the question's result")
	assert.Contains(t, res.ResultText(), `"Which database?"="SQLite"`)

	s.send("make a file", keyEnter)
	// Claude Code names the path the command writes (blocked_path).
	s.waitText("The agent wants to run a command:\n  Path: " + s.dir + "/made-by-claude.txt\n  touch made-by-claude.txt\n  # Create a file\nAllow it?")
	s.waitText("Allow it?\n  a/1 Allow   r/2 Reject   s/3 Allow for this session   d/4 Deny with a reason\n[a/r/s/d]")
	s.send("r", keyEnter) // rejects at once, as Ctrl+C does
	s.waitText(rejected)
	s.waitIdle()

	// The next turn's model call carries the rejection of the Bash call.
	api.Reply(fakeapi.Text("Understood, nothing was created."))
	s.send("ok", keyEnter)
	s.waitText("Understood, nothing was created.")
	s.waitIdle()
	told := 0 // calls that carry the Bash call's result
	for _, c := range api.Calls() {
		if r, ok := c.ToolResult("toolu_bash_1"); ok {
			told++
			assert.True(t, r.IsError)
			// The deny ("The user rejected this request.") and the interrupt
			// that stops the turn race in the CLI; either way the model
			// reads a rejection.
			assert.Contains(t, r.ResultText(), "rejected")
		}
	}
	require.NotZero(t, told, "the model was told the user rejected the Bash call")
	assert.NoFileExists(t, s.dir+"/made-by-claude.txt")
	// When the deny reaches the CLI before the interrupt (a busy machine),
	// it goes on with the turn and calls the model once more before the
	// interrupt stops it; that call, and only that one, is unscripted, and
	// nothing of it reaches the chat.
	assert.LessOrEqual(t, told, 2, "at most the interrupted continuation and the next prompt carry the rejection")
	assert.Equal(t, told-1, api.Unscripted(), "the conversation went as scripted")
}

// TestEditDiffWithClaudeCode: an Edit approval with the real CLI shows the
// change in the terminal as a unified diff with the file's own line
// numbers, removed lines red and added lines green, above the question;
// allowing it applies the edit.
func TestEditDiffWithClaudeCode(t *testing.T) {
	cli := testenv.Claude(t)
	api := fakeapi.New(t)
	s := start(t, nil, append(api.Env(t.TempDir()), "LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH="+cli)...)
	path := filepath.Join(s.dir, "notes.txt")
	require.NoError(t, os.WriteFile(path, []byte("one\ntwo\nthree\nfour\nfive\nsix\nseven\n"), 0o644))
	api.Reply(
		fakeapi.Tool("Read", map[string]any{"file_path": path}),
		fakeapi.Tool("Edit", map[string]any{"file_path": path, "old_string": "five\n", "new_string": "FIVE!\n"}),
		fakeapi.Text("Edited."),
	)
	s.send("shout five", keyEnter)
	s.waitText("The agent wants to edit a file:\n  --- a/notes.txt\n  +++ b/notes.txt\n  @@ -2,6 +2,6 @@\n   two\n   three\n   four\n  -five\n  +FIVE!\n   six\n   seven\nAllow it?")
	assert.Equal(t, 31, s.attrOf("-five").fg, "removed lines are red")
	assert.Equal(t, 32, s.attrOf("+FIVE!").fg, "added lines are green")
	assert.Equal(t, 36, s.attrOf("@@ -2,6 +2,6 @@").fg, "hunk headers are cyan")
	s.send("a", keyEnter)
	s.waitText("Edited.")
	s.waitIdle()
	out, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\nthree\nfour\nFIVE!\nsix\nseven\n", string(out))
}
