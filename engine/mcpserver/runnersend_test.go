package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/mcpserver"
)

// forwarded records what a runner's send_file handed to the server.
type forwarded struct {
	mu    sync.Mutex
	calls []forwardCall
}

type forwardCall struct {
	chat, credential, name, caption string
	data                            []byte
}

func (f *forwarded) forward(_ context.Context, chat, credential, name, caption string, data []byte) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, forwardCall{chat, credential, name, caption, data})
	if credential == "retired" {
		return "", errors.New("unknown or retired session credential")
	}
	return "Sent " + name + " to the chat.", nil
}

func callSendFile(t *testing.T, cs *mcp.ClientSession, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolSendFile, Arguments: args})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// TestRunnerSendServerReadsHereAndForwards: on a runner, send_file reads
// the file in the runner's working directory (never outside it, not
// through a symlink) and hands its bytes, with the agent's credential,
// to the server; the server's answer, or its refusal, is what the agent
// gets. A caller without a credential granted on this runner (another
// local user) is turned away before anything is read.
func TestRunnerSendServerReadsHereAndForwards(t *testing.T) {
	dir := t.TempDir()
	report := []byte("build ok\n")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "out"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "out", "result.txt"), report, 0o644))
	outside := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(outside, []byte("not for the chat"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "link.txt")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, 2048), 0o644))

	rec := &forwarded{}
	srv, err := mcpserver.NewRunnerSendServer(dir, 1024, rec.forward, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })

	_, err = connectAs(t, agent.MCPServer{URL: srv.URL()})
	require.Error(t, err, "no credential, no send_file")
	_, err = connectAs(t, agent.MCPServer{URL: srv.URL(), Headers: map[string]string{"Authorization": "Bearer guess"}})
	require.Error(t, err, "a credential no agent here was started with")
	srv.Grant("c1", "telegram:42")
	srv.Grant("retired", "telegram:42")

	cs, err := connectAs(t, agent.MCPServer{URL: srv.URL(), Headers: map[string]string{"Authorization": "Bearer c1"}})
	require.NoError(t, err)
	out, isErr := callSendFile(t, cs, map[string]any{"path": "out/result.txt", "caption": "the log"})
	assert.False(t, isErr)
	assert.Equal(t, "Sent result.txt to the chat.", out)
	out, isErr = callSendFile(t, cs, map[string]any{"path": outside})
	assert.True(t, isErr)
	assert.Contains(t, out, "outside the working directory")
	out, isErr = callSendFile(t, cs, map[string]any{"path": "link.txt"})
	assert.True(t, isErr)
	assert.Contains(t, out, "link.txt cannot be sent")
	out, isErr = callSendFile(t, cs, map[string]any{"path": "big.bin"})
	assert.True(t, isErr)
	assert.Contains(t, out, "over the limit")

	old, err := connectAs(t, agent.MCPServer{URL: srv.URL(), Headers: map[string]string{"Authorization": "Bearer retired"}})
	require.NoError(t, err)
	out, isErr = callSendFile(t, old, map[string]any{"path": "out/result.txt"})
	assert.True(t, isErr)
	assert.Equal(t, "Not sent: unknown or retired session credential", out, "the server's refusal reaches the agent")

	require.Len(t, rec.calls, 2, "only files inside the working directory and within the limit leave the runner")
	assert.Equal(t, forwardCall{"telegram:42", "c1", "result.txt", "the log", report}, rec.calls[0])
	assert.Equal(t, "retired", rec.calls[1].credential)
}

// TestRunnerSendServerForgetsTheOldestGrants: a runner remembers the
// credentials of its last 4,096 sessions, not every one it ever ran.
func TestRunnerSendServerForgetsTheOldestGrants(t *testing.T) {
	srv, err := mcpserver.NewRunnerSendServer(t.TempDir(), 1024, (&forwarded{}).forward, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	for i := range 4097 {
		srv.Grant(fmt.Sprintf("cred-%d", i), "telegram:1")
	}
	_, err = connectAs(t, agent.MCPServer{URL: srv.URL(), Headers: map[string]string{"Authorization": "Bearer cred-0"}})
	require.Error(t, err, "the oldest is forgotten")
	_, err = connectAs(t, agent.MCPServer{URL: srv.URL(), Headers: map[string]string{"Authorization": "Bearer cred-1"}})
	require.NoError(t, err)
}
