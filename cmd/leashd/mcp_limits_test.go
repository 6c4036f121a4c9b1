package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/interactions"
)

// mcpClient connects the Go SDK's MCP client to leashd's /mcp for chat.
func mcpClient(t *testing.T, url, chat string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url + "/mcp?chat=" + chat, HTTPClient: &http.Client{Transport: bearer{askToken}}, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type callResult struct {
	text    string
	isError bool
	err     error
}

// approve calls request_approval in the background.
func approve(ctx context.Context, cs *mcp.ClientSession, action string) <-chan callResult {
	out := make(chan callResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "request_approval", Arguments: map[string]any{"action": action}})
		if err != nil {
			out <- callResult{err: err}
			return
		}
		out <- callResult{text: res.Content[0].(*mcp.TextContent).Text, isError: res.IsError}
	}()
	return out
}

// outcome is GET /api/interactions/{id}: how it ended.
func outcome(t *testing.T, url, id string) (status, text string) {
	t.Helper()
	var o struct{ Status, Text string }
	require.Equal(t, http.StatusOK, getJSON(t, url+"/api/interactions/"+id, &o))
	return o.Status, o.Text
}

// An MCP tool call waiting for a person counts against
// LEASHD_WEB_MAX_WAITS with the API's long-polls: past it a call gets an
// error result naming the variable, and a long-poll 503.
func TestMCPToolCallsCountAgainstTheWaitsCap(t *testing.T) {
	url, _, stop := startServe(t, testenv.PrivateDir(t), "LEASHD_WEB_TOKEN="+askToken, "LEASHD_WEB_MAX_WAITS=1")
	defer func() { require.NoError(t, stop()) }()
	const chat = "web:waits"
	cs := mcpClient(t, url, chat)
	first := approve(t.Context(), cs, "deploy")
	p := waitPending(t, url, chat, func(p pendingView) bool { return p.Question == "deploy" })

	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "request_approval", Arguments: map[string]any{"action": "rollback"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "at most 1 long-polls and MCP tool calls wait at once (LEASHD_WEB_MAX_WAITS)")
	resp, err := api.Get(url + "/api/interactions/" + p.ID + "?wait=1")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the long-poll shares the cap")

	code, body := postJSON(t, url+"/api/interactions/"+p.ID+"/reply", `{"answers":[["Approve"]]}`)
	require.Less(t, code, 300, body)
	r := <-first
	require.NoError(t, r.err)
	assert.Equal(t, "approved", r.text)
	resp, err = api.Get(url + "/api/interactions/" + p.ID + "?wait=1")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "released")
}

// A client that gives up its call withdraws the request: the chat shows it
// ended with the reason, and a lookup by ID says so.
func TestMCPCallOfAClientThatLeftIsWithdrawn(t *testing.T) {
	url, _, stop := startServe(t, testenv.PrivateDir(t), "LEASHD_WEB_TOKEN="+askToken)
	defer func() { require.NoError(t, stop()) }()
	const chat = "web:gone"
	ctx, cancel := context.WithCancel(t.Context())
	done := approve(ctx, mcpClient(t, url, chat), "deploy")
	p := waitPending(t, url, chat, func(p pendingView) bool { return p.Question == "deploy" })
	cancel()
	assert.ErrorIs(t, (<-done).err, context.Canceled)
	waitEvent(t, url, chat, interactions.AskerGoneText)
	require.Eventually(t, func() bool { st, _ := outcome(t, url, p.ID); return st == "cancelled" }, 10*time.Second, 20*time.Millisecond)
	_, text := outcome(t, url, p.ID)
	assert.Equal(t, interactions.AskerGoneText, text)
}

// After a restart, a request an MCP client asked is ended with the reason
// (no client can collect it), while one asked through the HTTP API is
// pending again for its caller to collect.
func TestServeRestartEndsMCPRequestsAndKeepsAPIOnes(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, _, stop := startServe(t, dir, "LEASHD_WEB_TOKEN="+askToken)
	const chat = "web:restart-mcp"
	done := approve(t.Context(), mcpClient(t, url, chat), "deploy")
	code, body := postJSON(t, url+"/api/interactions", `{"chat_id":"`+chat+`","kind":"approval","question":"migrate"}`)
	require.Equal(t, http.StatusCreated, code, body)
	var asked struct {
		ID string `json:"interaction_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &asked))
	viaMCP := waitPending(t, url, chat, func(p pendingView) bool { return p.Question == "deploy" })
	require.NoError(t, stop())
	<-done // the call ends with leashd

	url, logs, stop := startServe(t, dir, "LEASHD_WEB_TOKEN="+askToken)
	defer func() { assert.NoError(t, stop()) }()
	waitPending(t, url, chat, func(p pendingView) bool { return p.ID == asked.ID })
	waitEvent(t, url, chat, interactions.AskerGoneText)
	st, text := outcome(t, url, viaMCP.ID)
	assert.Equal(t, "cancelled", st)
	assert.Equal(t, interactions.AskerGoneText, text)
	var list []pendingView
	getJSON(t, url+"/api/interactions?chat="+chat, &list)
	require.Len(t, list, 1, "only the API's request is pending")
	assert.Equal(t, asked.ID, list[0].ID)
	assert.NotContains(t, logs.String(), "level=ERROR")
}
