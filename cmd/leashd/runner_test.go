package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/engine/agent/sandbox"
)

// TestRunnerPointsSendFileAtItself: a runner rewrites only the URL of
// leashd's own MCP server in the server's inline --mcp-config (the
// server's loopback address means nothing on the runner's machine); the
// credential reference, other servers and other arguments stay.
func TestRunnerPointsSendFileAtItself(t *testing.T) {
	cfg := `{"mcpServers":{"leashd":{"type":"http","url":"http://127.0.0.1:4100/mcp","headers":{"Authorization":"${MCP_SERVER_1_HEADER_1}"}},` +
		`"other":{"type":"http","url":"http://127.0.0.1:4200/mcp"}}}`
	args := []string{"--output-format", "stream-json", "--mcp-config", cfg, "--resume", "abc"}
	out, credVar, err := localMCPConfig(args, "http://127.0.0.1:5999/mcp")
	require.NoError(t, err)
	assert.Equal(t, "MCP_SERVER_1_HEADER_1", credVar, "where the session's credential is")
	assert.Equal(t, cfg, args[3], "the server's spec is not changed in place")
	require.Len(t, out, len(args))
	assert.Equal(t, []string{"--output-format", "stream-json", "--mcp-config"}, out[:3])
	assert.Equal(t, []string{"--resume", "abc"}, out[4:])
	var got struct {
		MCPServers map[string]struct {
			Type, URL string
			Headers   map[string]string
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out[3]), &got))
	assert.Equal(t, "http://127.0.0.1:5999/mcp", got.MCPServers["leashd"].URL)
	assert.Equal(t, "http", got.MCPServers["leashd"].Type)
	assert.Equal(t, "${MCP_SERVER_1_HEADER_1}", got.MCPServers["leashd"].Headers["Authorization"])
	assert.Equal(t, "http://127.0.0.1:4200/mcp", got.MCPServers["other"].URL)

	plain := []string{"--output-format", "stream-json"}
	out, credVar, err = localMCPConfig(plain, "http://127.0.0.1:5999/mcp")
	require.NoError(t, err)
	assert.Equal(t, plain, out)
	assert.Empty(t, credVar)

	_, _, err = localMCPConfig([]string{"--mcp-config", "/srv/leashd/.leashd/mcp-1.json"}, "http://127.0.0.1:5999/mcp")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not inline JSON", "an older server's file path is named as the problem")
}

// grants records what a runner granted its send_file server.
type grants map[string]string

func (g grants) URL() string                   { return "http://127.0.0.1:5999/mcp" }
func (g grants) Grant(credential, chat string) { g[credential] = chat }

// TestRunnerGrantsEachSessionsCredential: a Claude Code session the
// server starts on a runner has its credential granted for its chat on
// the runner's send_file server (so only its agents can send, and an
// agent adopted by a restarted server still can); the runner's own
// program and directory replace the server's.
func TestRunnerGrantsEachSessionsCredential(t *testing.T) {
	g := grants{}
	local, err := runnerLocal(config.Config{Agent: config.AgentClaude, ClaudePath: "/opt/claude"}, "/work", g)
	require.NoError(t, err)
	cfg := `{"mcpServers":{"leashd":{"type":"http","url":"http://127.0.0.1:4100/mcp","headers":{"Authorization":"${MCP_SERVER_1_HEADER_1}"}}}}`
	spec, err := local(sandbox.Spec{Path: "claude", Dir: "/srv", Name: "telegram:7", Args: []string{"--mcp-config", cfg},
		Env: []string{"A=1", "MCP_SERVER_1_HEADER_1=Bearer s3cr3t"}})
	require.NoError(t, err)
	assert.Equal(t, "/opt/claude", spec.Path)
	assert.Equal(t, "/work", spec.Dir)
	assert.Contains(t, spec.Args[1], "http://127.0.0.1:5999/mcp")
	assert.Equal(t, grants{"s3cr3t": "telegram:7"}, g)
}
