package acp

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// The real claude-agent-acp asks for a Bash command that writes: the
// person sees the agent's own options by their names, taps "Yes" and the
// command runs; the next one is rejected with a typed reason, which the
// model reads as a follow-up prompt.
func TestRealACPBashAllowedThenRejectedWithReason(t *testing.T) {
	s := newStack(t)
	s.reply(
		fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_bash1", Name: "Bash", Input: map[string]any{"command": "touch made-by-agent.txt", "description": "Create a file"}}}},
		fakeapi.Text("Created the file."),
	)
	s.say("make a file")
	m := s.botMessage("touch made-by-agent.txt")
	assert.Contains(t, m.Text, "The agent wants to run a command")
	assert.Contains(t, m.Buttons(), "✅ Yes")
	assert.Contains(t, m.Buttons(), "❌ No")
	s.tap(m, "✅ Yes")
	out, isErr := s.toolResult("toolu_bash1")
	assert.False(t, isErr, "the command ran: %s", out)
	s.botMessage("Created the file.")
	s.botMessage("Done")
	_, err := os.Stat(filepath.Join(s.dir, "made-by-agent.txt"))
	require.NoError(t, err, "the agent ran the command in LEASHD_WORKDIR")

	s.reply(
		fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_bash2", Name: "Bash", Input: map[string]any{"command": "rm made-by-agent.txt"}}}},
		fakeapi.Text("Understood, I left it."),
		fakeapi.Text("I will keep the file then."),
	)
	s.say("remove it")
	m = s.botMessage("rm made-by-agent.txt")
	s.say("keep it, we need it for the demo")
	out, isErr = s.toolResult("toolu_bash2")
	assert.True(t, isErr, "the rejection reached the model as an error: %s", out)
	c := s.userTextCall("keep it, we need it for the demo")
	assert.True(t, c.HasUserText("rejected"), "the follow-up says it was a rejection: %q", c.UserTexts())
	s.botMessage("I will keep the file then.")
	m = s.waitMessage(m.ID, "the approval to show its outcome", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "keep it, we need it for the demo")
	_, err = os.Stat(filepath.Join(s.dir, "made-by-agent.txt"))
	require.NoError(t, err, "the rejected command did not run")
	assert.Zero(t, s.unscriptedCalls(), "calls: %d", len(s.api.Calls()))
	_ = strings.Contains
}

func twoQuestions() map[string]any {
	return map[string]any{"questions": []map[string]any{
		{"header": "Database", "question": "Which database should the service use?", "multiSelect": false, "options": []map[string]any{
			{"label": "Postgres", "description": "Relational and battle-tested"},
			{"label": "SQLite", "description": "One file, no server"},
		}},
		{"header": "Features", "question": "Which features should ship first?", "multiSelect": true, "options": []map[string]any{
			{"label": "Auth", "description": "Sign-in"},
			{"label": "Search", "description": "Full text"},
			{"label": "Billing", "description": "Invoices"},
		}},
	}}
}

// The real adapter turns AskUserQuestion into a form elicitation; leashd
// asks its two questions one at a time (1 of 2, 2 of 2) with the options'
// descriptions, a single-select and a multi-select, and the model reads
// the answers as Claude Code's own UI would give them.
func TestRealACPQuestionsAnsweredByTaps(t *testing.T) {
	s := newStack(t)
	s.reply(
		fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_ask1", Name: "AskUserQuestion", Input: twoQuestions()}}},
		fakeapi.Text("Going with your picks."),
	)
	s.say("set up the service")
	m := s.botMessage("Which database should the service use?")
	assert.Contains(t, m.Text, "One file, no server", "descriptions are shown")
	assert.Contains(t, m.Text, "1/2")
	assert.Equal(t, []string{"Postgres", "SQLite"}, m.Buttons())
	s.tap(m, "SQLite")
	m = s.botMessage("Which features should ship first?")
	assert.Contains(t, m.Text, "2/2")
	assert.Equal(t, []string{"Auth", "Search", "Billing", "Done"}, m.Buttons())
	s.tap(m, "Auth")
	m = s.waitMessage(m.ID, "Auth checked", func(m tgfake.Message) bool { return slices.Contains(m.Buttons(), "✅ Auth") })
	s.tap(m, "Billing")
	m = s.waitMessage(m.ID, "Billing checked", func(m tgfake.Message) bool { return slices.Contains(m.Buttons(), "✅ Billing") })
	s.tap(m, "Done")
	out, isErr := s.toolResult("toolu_ask1")
	assert.False(t, isErr, out)
	assert.Contains(t, out, `"Which database should the service use?"="SQLite"`)
	assert.Contains(t, out, `"Which features should ship first?"="Auth, Billing"`)
	s.botMessage("Going with your picks.")
	assert.Zero(t, s.unscriptedCalls())
}

// Typed text answers a question in the person's own words: at the
// single-select it is the adapter's "Other" answer, at the multi-select
// it is added as the person's own item.
func TestRealACPQuestionsAnsweredByTypedText(t *testing.T) {
	s := newStack(t)
	s.reply(
		fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_ask2", Name: "AskUserQuestion", Input: twoQuestions()}}},
		fakeapi.Text("Noted."),
	)
	s.say("set up the service")
	s.botMessage("Which database should the service use?")
	s.say("MariaDB, because ops knows it")
	s.botMessage("Which features should ship first?")
	s.say("Audit log")
	out, isErr := s.toolResult("toolu_ask2")
	assert.False(t, isErr, out)
	assert.Contains(t, out, `"Which database should the service use?"="MariaDB, because ops knows it"`)
	assert.Contains(t, out, `"Which features should ship first?"="Audit log"`)
	s.botMessage("Noted.")
	assert.Zero(t, s.unscriptedCalls())
}

var planPath = regexp.MustCompile(`create your plan at (/[^\s"'\\]+\.md)`)

// planFile finds where plan mode tells the model to write its plan.
func planFile(t *testing.T, r *fakeapi.Request) string {
	if m := planPath.FindStringSubmatch(string(r.Raw)); m != nil {
		return m[1]
	}
	t.Errorf("the plan-mode request names no plan file")
	return ""
}

const planText = "# Plan\n\n1. Add a `users` table\n2. Write the migration"

// scriptPlan makes the model, in plan mode, load ExitPlanMode (a deferred
// tool), write its plan file and ask for review, as Claude Code 2.1.3xx
// does.
func (s *stack) scriptPlan(t *testing.T, exitID string) {
	s.then(func(r *fakeapi.Request) fakeapi.Reply {
		if slices.Contains(r.Tools, "ExitPlanMode") {
			return fakeapi.Text("") // not deferred: nothing to load
		}
		return fakeapi.Reply{Tools: []fakeapi.ToolUse{{Name: "ToolSearch", Input: map[string]any{"query": "select:ExitPlanMode", "max_results": 1}}}}
	})
	s.then(func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Tools: []fakeapi.ToolUse{{Name: "Write", Input: map[string]any{"file_path": planFile(t, r), "content": planText}}}}
	})
	s.then(func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: exitID, Name: "ExitPlanMode", Input: map[string]any{}}}}
	})
}

// A plan review sent back with feedback: "Adjust" and typed text keep the
// agent planning, and the feedback reaches the model.
func TestRealACPPlanReviewAdjustedWithFeedback(t *testing.T) {
	s := newStack(t)
	s.say("/plan")
	s.botMessage("Mode: plan")
	s.scriptPlan(t, "toolu_exit1")
	s.reply(fakeapi.Text("Revised: SQLite it is."))
	s.say("plan the users feature")
	m := s.botMessage("Plan review")
	assert.Contains(t, m.Text, "Add a <code>users</code> table")
	s.tap(m, "Adjust")
	s.botMessage("What should change?")
	s.say("Use SQLite, not a new table")
	out, isErr := s.toolResult("toolu_exit1")
	assert.True(t, isErr, "the plan was not approved: %s", out)
	c := s.userTextCall("Use SQLite, not a new table")
	assert.True(t, c.HasUserText("plan"), "%q", c.UserTexts())
	s.botMessage("Revised: SQLite it is.")
	assert.Zero(t, s.unscriptedCalls())
}

// A plan approved with auto-accept edits: the agent leaves plan mode for
// its acceptEdits mode, and the edit that follows is not asked about.
func TestRealACPPlanReviewApproved(t *testing.T) {
	s := newStack(t)
	s.say("/plan")
	s.botMessage("Mode: plan")
	s.scriptPlan(t, "toolu_exit2")
	target := filepath.Join(s.dir, "users.sql")
	s.reply(
		fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_write", Name: "Write", Input: map[string]any{"file_path": target, "content": "CREATE TABLE users (id INTEGER);\n"}}}},
		fakeapi.Text("Implemented the plan."),
	)
	s.say("plan the users feature")
	m := s.botMessage("Plan review")
	s.tap(m, "Approve, auto-accept edits")
	out, isErr := s.toolResult("toolu_exit2")
	assert.False(t, isErr, "the plan was approved: %s", out)
	out, isErr = s.toolResult("toolu_write")
	assert.False(t, isErr, out)
	s.botMessage("Implemented the plan.")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "CREATE TABLE users (id INTEGER);\n", string(b))
	for _, m := range s.fake.BotMessages(me) {
		assert.NotContains(t, m.Text, "The agent wants to", "the edit after the approval was not asked about")
	}
	assert.Zero(t, s.unscriptedCalls())
}

// /stop while a tool approval waits: the approval is withdrawn, the agent
// is told "cancelled" and stops its turn, the command never runs, and the
// next prompt goes on in the same agent session.
func TestRealACPStopDuringPendingApproval(t *testing.T) {
	s := newStack(t)
	s.reply(fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_stop", Name: "Bash", Input: map[string]any{"command": "touch should-not-exist.txt"}}}})
	s.say("make a file")
	m := s.botMessage("touch should-not-exist.txt")
	s.say("/stop")
	s.botMessage("1 pending request(s) cancelled")
	m = s.waitMessage(m.ID, "the approval to show it was cancelled", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "Cancelled")
	s.botMessage("Done")
	_, err := os.Stat(filepath.Join(s.dir, "should-not-exist.txt"))
	assert.True(t, os.IsNotExist(err), "the command did not run")

	s.reply(fakeapi.Text("Back again."))
	s.say("are you there?")
	back := s.botMessage("Back again.")
	s.waitFor("the turn's summary", func() bool {
		for _, m := range s.fake.BotMessages(me) {
			if m.ID > back.ID && strings.Contains(m.Text, "Done") {
				return true
			}
		}
		return false
	})
	c := s.userTextCall("are you there?")
	assert.True(t, c.HasUserText("make a file"), "the same session goes on: %q", c.UserTexts())
	assert.Len(t, s.starts(), 1, "one agent process")
	// Claude Code may still make one more model call for the stopped turn
	// (its tool failed as "aborted") before the cancel lands; leashd shows
	// nothing the agent streams after /stop.
	for _, m := range s.fake.BotMessages(me) {
		assert.NotContains(t, m.Text, "no scripted reply")
	}
}

// The agent process is killed while a question waits: the question is
// withdrawn and the chat told; the next prompt starts the agent again and
// resumes the conversation (session/resume).
func TestRealACPAgentKilledMidQuestion(t *testing.T) {
	s := newStack(t)
	s.reply(fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_killed", Name: "AskUserQuestion", Input: twoQuestions()}}})
	s.say("set up the service")
	m := s.botMessage("Which database should the service use?")
	// The agent can resume only a session whose transcript it wrote.
	s.waitFor("the transcript on disk", func() bool {
		files, _ := filepath.Glob(filepath.Join(s.home, ".claude", "projects", "*", "*.jsonl"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "set up the service") {
				return true
			}
		}
		return false
	})
	pids := s.starts()
	require.Len(t, pids, 1)
	require.NoError(t, syscall.Kill(-pids[0], syscall.SIGKILL), "kill the agent's process group")
	stopped := s.botMessage("The agent stopped unexpectedly")
	assert.Contains(t, stopped.Text, "agent session ended: the agent exited (signal: killed)")
	m = s.waitMessage(m.ID, "the question to show it was cancelled", func(m tgfake.Message) bool { return m.Markup == nil })
	assert.Contains(t, m.Text, "Cancelled")

	s.reply(fakeapi.Text("Resumed where we were."))
	s.say("let's go on")
	s.botMessage("Resumed where we were.")
	c := s.userTextCall("let's go on")
	assert.True(t, c.HasUserText("set up the service"), "the conversation was resumed: %q", c.UserTexts())
	assert.Len(t, s.starts(), 2, "a new agent process")
	assert.Zero(t, s.unscriptedCalls())
}

// A plan approved with a clean context: leashd stops this session and
// starts a fresh one (a new agent process, in acceptEdits) seeded with the
// plan, as it does for Claude Code.
func TestRealACPPlanReviewApprovedCleanContext(t *testing.T) {
	s := newStack(t)
	s.say("/plan")
	s.botMessage("Mode: plan")
	s.scriptPlan(t, "toolu_exit3")
	// The old session, stopped, may still make one model call with its
	// ExitPlanMode aborted, before or after the fresh session's: either
	// order is fine, so each step answers by what the call carries.
	implement := func(r *fakeapi.Request) fakeapi.Reply {
		if _, ok := r.ToolResult("toolu_exit3"); ok {
			return fakeapi.Text("")
		}
		return fakeapi.Text("Implementing the approved plan.")
	}
	s.then(implement)
	s.then(implement)
	s.say("plan the users feature")
	m := s.botMessage("Plan review")
	s.tap(m, "Approve, fresh session (recommended)")
	s.botMessage("Starting a fresh session to implement it")
	c := s.userTextCall("Implement the following plan, which the user has approved")
	assert.True(t, c.HasUserText("Add a `users` table"), "the plan seeds the new session: %q", c.UserTexts())
	assert.False(t, c.HasUserText("plan the users feature"), "the context is clean")
	s.botMessage("Implementing the approved plan.")
	assert.Len(t, s.starts(), 2, "a new agent process for the fresh session")
	assert.Zero(t, s.unscriptedCalls())
}
