package claude_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

func TestRealCLIPromptGetsText(t *testing.T) {
	c := newRealCLI(t)
	c.api.Reply(fakeapi.Text("Hello from the fake model"))
	s := c.open(t, agent.SessionOptions{ChatID: "t1", Mode: agent.ModeDefault})
	h := &recHandler{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	res, err := s.Turn(ctx, agent.Text("say hello"), h)
	require.NoError(t, err)
	t.Logf("turn took %s", time.Since(start).Round(time.Millisecond))
	assert.Equal(t, "Hello from the fake model", res.Text)
	assert.False(t, res.IsError)
	assert.NotEmpty(t, res.SessionID)
	assert.Equal(t, res.SessionID, s.ID())
	assert.Equal(t, []string{"Hello from the fake model"}, h.texts)
	calls := c.api.Calls()
	require.Len(t, calls, 1)
	assert.True(t, calls[0].HasUserText("say hello"))
	for _, r := range c.api.Side() {
		t.Logf("side request: %s %s", r.Method, r.Path)
	}
}

func bashTool(cmd string) fakeapi.Reply {
	return fakeapi.Tool("Bash", map[string]string{"command": cmd, "description": "test command"})
}

func TestRealCLIInterruptWhilePermissionPending(t *testing.T) {
	c := newRealCLI(t)
	c.api.Reply(bashTool("touch never.txt"), fakeapi.Text("after"))
	s := c.open(t, agent.SessionOptions{ChatID: "t1", Mode: agent.ModeDefault})
	asked := make(chan struct{})
	withdrawn := make(chan error, 1)
	h := &recHandler{decide: func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		close(asked)
		select {
		case <-ctx.Done():
			withdrawn <- context.Cause(ctx)
		case <-time.After(30 * time.Second):
			withdrawn <- nil
		}
		return agent.PermissionResponse{Allow: true}
	}}
	type out struct {
		res agent.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := s.Turn(context.Background(), agent.Text("touch a file"), h)
		done <- out{res, err}
	}()
	<-asked
	require.NoError(t, s.Interrupt(context.Background()))
	o := <-done
	require.NoError(t, o.err)
	t.Logf("interrupted turn's result: %+v", o.res)
	assert.ErrorIs(t, <-withdrawn, claude.ErrRequestWithdrawn, "the CLI withdrew the pending request (control_cancel_request)")
	assert.NoFileExists(t, filepath.Join(c.dir, "never.txt"))
	// the session goes on
	res, err := s.Turn(context.Background(), agent.Text("next"), &recHandler{})
	require.NoError(t, err)
	assert.Equal(t, "after", res.Text)
}

func TestRealCLISessionRulesReachTheCLI(t *testing.T) {
	c := newRealCLI(t)
	c.api.Reply(bashTool("touch a.txt"), bashTool("touch a.txt"), fakeapi.Text("done"))
	s := c.open(t, agent.SessionOptions{ChatID: "t1", Mode: agent.ModeDefault})
	h := &recHandler{decide: func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
		return agent.PermissionResponse{Allow: true, UpdatedInput: req.Input, UpdatedPermissions: []agent.PermissionUpdate{
			{Type: "addRules", Rules: []agent.Rule{{ToolName: "Bash", RuleContent: "touch a.txt"}}, Behavior: "allow", Destination: "session"},
		}}
	}}
	res, err := s.Turn(context.Background(), agent.Text("touch twice"), h)
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text)
	assert.Len(t, h.perms, 1, "the CLI applied the session rule: the second call was not asked")
	assert.Equal(t, []string{"Bash", "Bash"}, h.tools)
	assert.FileExists(t, filepath.Join(c.dir, "a.txt"))
	assert.NoFileExists(t, filepath.Join(c.home, ".claude", "settings.local.json"))
	assert.NoFileExists(t, filepath.Join(c.dir, ".claude", "settings.local.json"), "destination session writes no settings file")
}

func TestRealCLISetModeAcceptEdits(t *testing.T) {
	c := newRealCLI(t)
	target := filepath.Join(c.dir, "edited.txt")
	c.api.Reply(fakeapi.Tool("Write", map[string]string{"file_path": target, "content": "x\n"}), fakeapi.Text("written"))
	s := c.open(t, agent.SessionOptions{ChatID: "t1", Mode: agent.ModeDefault})
	require.NoError(t, s.SetMode(context.Background(), agent.ModeAcceptEdits))
	h := &recHandler{}
	res, err := s.Turn(context.Background(), agent.Text("write it"), h)
	require.NoError(t, err)
	assert.Equal(t, "written", res.Text)
	assert.Empty(t, h.perms, "in acceptEdits the CLI does not ask about Write")
	assert.FileExists(t, target)
}

// The setMode update sent along with an ExitPlanMode approval changes the
// CLI's own mode: after "edit" a Write is not even asked about; after
// "default" it is.
func TestRealCLIPlanApprovalSetsTheCLIMode(t *testing.T) {
	for _, tc := range []struct {
		mode      agent.Mode
		askWrites bool
	}{{agent.ModeAcceptEdits, false}, {agent.ModeDefault, true}} {
		t.Run(string(tc.mode), func(t *testing.T) {
			c := newRealCLI(t)
			target := filepath.Join(c.dir, "plan.txt")
			c.api.Reply(
				fakeapi.Tool("ExitPlanMode", map[string]string{"plan": "# Plan\nwrite plan.txt"}),
				fakeapi.Tool("Write", map[string]string{"file_path": target, "content": "x\n"}),
				fakeapi.Text("done"))
			s := c.open(t, agent.SessionOptions{ChatID: "t1", Mode: agent.ModePlan})
			h := &recHandler{decide: func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
				resp := agent.PermissionResponse{Allow: true, UpdatedInput: req.Input}
				if req.ToolName == "ExitPlanMode" {
					resp.UpdatedPermissions = []agent.PermissionUpdate{{Type: "setMode", Mode: tc.mode, Destination: "session"}}
				}
				return resp
			}}
			res, err := s.Turn(context.Background(), agent.Text("plan then write"), h)
			require.NoError(t, err)
			assert.Equal(t, "done", res.Text)
			var asked []string
			for _, p := range h.perms {
				asked = append(asked, p.ToolName)
			}
			if tc.askWrites {
				assert.Equal(t, []string{"ExitPlanMode", "Write"}, asked)
			} else {
				assert.Equal(t, []string{"ExitPlanMode"}, asked)
			}
			assert.FileExists(t, target)
			var plan struct {
				Plan string `json:"plan"`
			}
			require.NoError(t, json.Unmarshal(h.perms[0].Input, &plan))
			assert.Equal(t, "# Plan\nwrite plan.txt", plan.Plan)
		})
	}
}

func TestRealCLIPartialText(t *testing.T) {
	c := newRealCLI(t, claude.WithPartialText(true))
	c.api.Reply(fakeapi.Reply{Text: "Hello there, streaming world", Tools: []fakeapi.ToolUse{{Name: "Bash", Input: map[string]string{"command": "ls"}}}},
		fakeapi.Text("second block"))
	s := c.open(t, agent.SessionOptions{ChatID: "t1"})
	h := &recHandler{}
	res, err := s.Turn(context.Background(), agent.Text("hi"), h)
	require.NoError(t, err)
	assert.Equal(t, "second block", res.Text)
	// the fake API streams each text in three deltas
	assert.Equal(t, []string{"Hello the", "re, strea", "ming world", "seco", "nd b", "lock"}, h.texts)
	assert.Equal(t, []string{"Bash"}, h.tools)
}
