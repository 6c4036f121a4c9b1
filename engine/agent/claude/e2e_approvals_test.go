package claude_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
	"github.com/leashd/leashd/interactions"
)

func bash(cmd string) fakeapi.Reply {
	return fakeapi.Tool("Bash", map[string]string{"command": cmd, "description": "append to out.txt"})
}

func TestE2EBashApproval(t *testing.T) {
	const cmd = "echo hi >> out.txt"
	t.Run("allow", func(t *testing.T) {
		s := newStack(t)
		s.api.Reply(bash(cmd), fakeapi.Text("Wrote it."))
		s.send(t, "write a file")
		it := s.conn.WaitShown(t, 1)
		assert.Equal(t, interactions.KindToolApproval, it.Kind)
		assert.Equal(t, "Bash", it.ToolName)
		assert.Contains(t, it.ToolSummary, cmd)
		s.tap(t, it.ID, interactions.DecisionAllow)
		assert.Equal(t, "Wrote it.", s.conn.WaitDone(t, 1).Result)
		b, err := os.ReadFile(filepath.Join(s.dir, "out.txt"))
		require.NoError(t, err, "the command ran in the working directory")
		assert.Equal(t, "hi\n", string(b))
		calls := s.api.Calls()
		require.Len(t, calls, 2)
		res, ok := calls[1].ToolResult(calls[0].Reply.Tools[0].ID)
		require.True(t, ok)
		assert.False(t, res.IsError)
	})
	t.Run("deny with a reason", func(t *testing.T) {
		s := newStack(t)
		s.api.Reply(bash(cmd), fakeapi.Text("Understood."))
		s.send(t, "write a file")
		it := s.conn.WaitShown(t, 1)
		s.typed(t, it.ID, "not in this repository, please")
		assert.Equal(t, "Understood.", s.conn.WaitDone(t, 1).Result)
		_, err := os.Stat(filepath.Join(s.dir, "out.txt"))
		assert.True(t, os.IsNotExist(err), "a denied command does not run")
		calls := s.api.Calls()
		require.Len(t, calls, 2)
		res, ok := calls[1].ToolResult(calls[0].Reply.Tools[0].ID)
		require.True(t, ok)
		assert.True(t, res.IsError)
		assert.Contains(t, res.ResultText(), "not in this repository, please", "the model reads the reason")
		t.Logf("tool_result the model read: %s", res.ResultText())
	})
	t.Run("allow for the session", func(t *testing.T) {
		// A redirection (>> file) is asked about on every call whatever the
		// Bash rules say (the CLI checks the written path separately), so
		// this uses a command without one.
		const touch = "touch made-by-touch.txt"
		s := newStack(t)
		s.api.Reply(bash(touch), bash(touch), fakeapi.Text("Twice."))
		s.send(t, "touch twice")
		it := s.conn.WaitShown(t, 1)
		s.tap(t, it.ID, interactions.DecisionAllowSession)
		assert.Equal(t, "Twice.", s.conn.WaitDone(t, 1).Result)
		assert.Equal(t, 1, s.conn.ShownCount(), "the second call is not asked")
		assert.FileExists(t, filepath.Join(s.dir, "made-by-touch.txt"))
		calls := s.api.Calls()
		require.Len(t, calls, 3)
		for i := range 2 {
			res, ok := calls[i+1].ToolResult(calls[i].Reply.Tools[0].ID)
			require.True(t, ok)
			assert.False(t, res.IsError, "call %d ran", i+1)
		}
	})
}

const planText = "# Plan\n1. Write hello.txt saying hello."

func TestE2EPlanReview(t *testing.T) {
	t.Run("edit: approved, edits apply without asking", planReviewEdit)
	t.Run("default: approved, each edit asks", planReviewDefault)
	t.Run("adjust: the model reads the feedback", planReviewAdjust)
	t.Run("clean_edit: a fresh session implements the plan", planReviewCleanEdit)
}

// writeHello is the model's call to write hello.txt in dir.
func writeHello(dir string) fakeapi.Reply {
	return fakeapi.Tool("Write", map[string]string{"file_path": filepath.Join(dir, "hello.txt"), "content": "hello\n"})
}

// planReviewEdit is the edit decision: approved, edits apply without asking.
func planReviewEdit(t *testing.T) {
	s := newStack(t)
	s.api.Reply(fakeapi.Tool("ExitPlanMode", map[string]string{"plan": planText}), writeHello(s.dir), fakeapi.Text("Done."))
	s.send(t, "/plan make a plan")
	it := s.conn.WaitShown(t, 1)
	assert.Equal(t, interactions.KindPlanReview, it.Kind)
	assert.Equal(t, planText, it.Plan)
	s.tap(t, it.ID, interactions.DecisionEdit)
	assert.Equal(t, "Done.", s.conn.WaitDone(t, 1).Result)
	s.conn.WaitSaid(t, "Mode: acceptEdits")
	assert.Equal(t, 1, s.conn.ShownCount(), "Write was not asked about in acceptEdits")
	// The engine would allow Write by itself in acceptEdits; that the
	// CLI did not even ask proves the CLI's own mode changed.
	assert.Equal(t, []string{"ExitPlanMode"}, s.asked(), "the CLI ran Write without asking leashd")
	assertFile(t, filepath.Join(s.dir, "hello.txt"), "hello\n")
	assert.Contains(t, s.status(t), "Mode: acceptEdits")
	calls := s.api.Calls()
	require.Len(t, calls, 3)
	res, ok := calls[2].ToolResult(calls[1].Reply.Tools[0].ID)
	require.True(t, ok)
	assert.False(t, res.IsError, "the model reads that the file was written: %s", res.ResultText())
}

// planReviewDefault is the default decision: approved, each edit asks.
func planReviewDefault(t *testing.T) {
	s := newStack(t)
	s.api.Reply(fakeapi.Tool("ExitPlanMode", map[string]string{"plan": planText}), writeHello(s.dir), fakeapi.Text("Done."), fakeapi.Text("Still here."))
	s.send(t, "/plan make a plan")
	s.tap(t, s.conn.WaitShown(t, 1).ID, interactions.DecisionDefault)
	s.conn.WaitSaid(t, "Mode: default")
	it := s.conn.WaitShown(t, 2)
	assert.Equal(t, "Write", it.ToolName)
	s.tap(t, it.ID, interactions.DecisionAllow)
	assert.Equal(t, "Done.", s.conn.WaitDone(t, 1).Result)
	assertFile(t, filepath.Join(s.dir, "hello.txt"), "hello\n")
	assert.Equal(t, []string{"ExitPlanMode", "Write"}, s.asked(), "the CLI itself asked about Write: it is in default mode")
	status := s.status(t)
	assert.Contains(t, status, "Mode: default")
	// the same session goes on: same process, same session ID
	s.send(t, "anything else?")
	assert.Equal(t, "Still here.", s.conn.WaitDone(t, 2).Result)
	calls := s.api.Calls()
	require.Len(t, calls, 4)
	id := calls[0].Header.Get("X-Claude-Code-Session-Id")
	require.NotEmpty(t, id)
	assert.Contains(t, status, "Session: "+id)
	assert.Equal(t, id, calls[3].Header.Get("X-Claude-Code-Session-Id"), "the next turn is in the same session")
	assert.True(t, calls[3].HasUserText("make a plan"), "the next turn carries the conversation")
	assert.Len(t, s.starts(t), 1, "no new process")
	assert.Equal(t, []string{"ExitPlanMode", "Write"}, s.asked())
}

// planReviewAdjust is the adjust decision: the model reads the feedback.
func planReviewAdjust(t *testing.T) {
	s := newStack(t)
	s.api.Reply(fakeapi.Tool("ExitPlanMode", map[string]string{"plan": planText}), fakeapi.Text("Will revise."))
	s.send(t, "/plan make a plan")
	it := s.conn.WaitShown(t, 1)
	out, err := s.e.Reply(t.Context(), it.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAdjust}})
	require.NoError(t, err)
	assert.Equal(t, interactions.AwaitingFeedback, out)
	s.send(t, "write goodbye.txt instead")
	assert.Equal(t, "Will revise.", s.conn.WaitDone(t, 1).Result)
	calls := s.api.Calls()
	require.Len(t, calls, 2)
	res, ok := calls[1].ToolResult(calls[0].Reply.Tools[0].ID)
	require.True(t, ok)
	assert.True(t, res.IsError)
	assert.Contains(t, res.ResultText(), "write goodbye.txt instead")
	t.Logf("tool_result the model read: %s", res.ResultText())
	assert.Contains(t, s.status(t), "Mode: plan")
	_, err = os.Stat(filepath.Join(s.dir, "hello.txt"))
	assert.True(t, os.IsNotExist(err))
}

// planReviewCleanEdit is the clean_edit decision: a fresh session implements the plan.
func planReviewCleanEdit(t *testing.T) {
	s := newStack(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	s.api.Reply(fakeapi.Tool("ExitPlanMode", map[string]string{"plan": planText}))
	s.api.Otherwise(func(r *fakeapi.Request) fakeapi.Reply {
		if r.HasUserText("Implement the following plan") {
			if _, ok := r.ToolResult("toolu_fake0001"); !ok && !r.HasUserText("make a plan") {
				return fakeapi.Text("Implemented in a fresh session.")
			}
			return fakeapi.Text("unexpected: the old conversation came along")
		}
		return fakeapi.Reply{Hold: hold} // the old session, stopped by an interrupt
	})
	s.send(t, "/plan make a plan")
	s.tap(t, s.conn.WaitShown(t, 1).ID, interactions.DecisionCleanEdit)
	s.conn.WaitSaid(t, "Starting a fresh session")
	assert.Equal(t, "Implemented in a fresh session.", s.conn.WaitDone(t, 1).Result)
	starts := s.starts(t)
	require.Len(t, starts, 2)
	assert.Contains(t, starts[1], "--permission-mode acceptEdits")
	assert.NotContains(t, starts[1], "--resume")
	last := s.api.Calls()[len(s.api.Calls())-1]
	assert.True(t, last.HasUserText(planText), "the approved plan is the new session's prompt")
}

func (s *stack) status(t *testing.T) string {
	t.Helper()
	n := len(strings.Split(s.conn.SaidText(), "\n"))
	s.send(t, "/status")
	s.conn.WaitFor(t, "the /status reply", func() bool {
		return len(s.conn.Said) > 0 && strings.Contains(strings.Join(s.conn.Said, "\n"), "Working directory:")
	})
	_ = n
	s.conn.Lock()
	defer s.conn.Unlock()
	for i := len(s.conn.Said) - 1; i >= 0; i-- {
		if _, said := enginetest.Entry(s.conn.Said[i]); strings.Contains(said, "Working directory:") {
			return said
		}
	}
	return ""
}

func assertFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, string(b))
}
