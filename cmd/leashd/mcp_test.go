package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/leashd/leashd/config/testenv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// /mcp follows the API's token rules: 401 without the token; a chat no
// connector serves is 404; with the token an MCP client lists the tools.
func TestMCPOverHTTPNeedsTheToken(t *testing.T) {
	url, _, stop := startServe(t, testenv.PrivateDir(t), "LEASHD_WEB_TOKEN="+askToken)
	defer func() { require.NoError(t, stop()) }()
	post := func(path, token string) (int, string) {
		req, err := http.NewRequest("POST", url+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	st, body := post("/mcp", "")
	assert.Equal(t, http.StatusUnauthorized, st, body)
	assert.Contains(t, body, "a token is required")
	st, body = post("/mcp?chat=telegram:42", askToken)
	assert.Equal(t, http.StatusNotFound, st, body)
	var eb struct{ Error string }
	require.NoError(t, json.Unmarshal([]byte(body), &eb), body)
	assert.Contains(t, eb.Error, `there is no chat "telegram:42" here: Telegram is not connected to this leashd`)

	httpc := &http.Client{Transport: bearer{askToken}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url + "/mcp?chat=ci", HTTPClient: httpc, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	assert.ElementsMatch(t, []string{"ask_user", "request_approval", "permission_prompt"}, names)
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// `leashd mcp` serves the tools on stdio and asks through the running
// leashd: an ask_user multi-select is shown in the web chat, answered there
// over the API, and the MCP client gets the answers; the interaction is
// counted in /metrics and is in the audit log like any other. Neither
// leashd nor leashd mcp is given a token: leashd mcp finds the one leashd
// generated.
func TestMCPStdioProxiesToARunningLeashd(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, _, stop := startServe(t, dir)
	token := testenv.WebToken(t, dir)
	stopped := false
	defer func() {
		if !stopped {
			require.NoError(t, stop())
		}
	}()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainArgs+"=mcp --url "+url+" --chat web:stdio")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user", Arguments: map[string]any{"questions": []map[string]any{
			{"question": "Which regions?", "header": "Regions", "multiSelect": true,
				"options": []map[string]string{{"label": "eu"}, {"label": "us"}, {"label": "ap"}}}}}})
		done <- result{res, err}
	}()
	api := func(method, path, body string) (int, string) {
		req, err := http.NewRequest(method, url+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var id string
	require.Eventually(t, func() bool {
		_, b := api("GET", "/api/interactions?chat=web:stdio", "")
		var list []pendingView
		_ = json.Unmarshal([]byte(b), &list)
		if len(list) == 1 && list[0].Question == "Which regions?" {
			id = list[0].ID
			return true
		}
		return false
	}, 20*time.Second, 20*time.Millisecond, "the question is shown in the web chat")
	for _, l := range []string{"eu", "ap"} {
		st, b := api("POST", "/api/interactions/"+id+"/toggle", `{"label":"`+l+`"}`)
		require.Equal(t, http.StatusOK, st, b)
	}
	st, b := api("POST", "/api/interactions/"+id+"/confirm", "")
	require.Equal(t, http.StatusNoContent, st, b)
	r := <-done
	require.NoError(t, r.err)
	require.False(t, r.res.IsError)
	assert.Equal(t, `"Which regions?"="eu, ap"`, r.res.Content[0].(*mcp.TextContent).Text)

	waitAnsweredCounted(t, url, "question")
	stopped = true
	require.NoError(t, stop())
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"audit", "--json", "--chat", "web:stdio"}, nil, &out, io.Discard))
	assert.Contains(t, out.String(), `"interaction_id":"`+id+`"`)
	assert.Contains(t, out.String(), `"answer":"eu, ap"`)
}
