package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
)

const ciAPIToken = "ci-api-t0ken-7c1e5a9b"

// call sends one request with token and returns the status and body.
func call(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A token of LEASHD_API_TOKENS asks only in its scope's chats at /mcp as
// on the API, and the audit log names it as who asked; the page's token
// answers and withdraws.
func TestScopedTokenOnMCPAndInTheAuditLog(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, logs, stop := startServe(t, dir, "LEASHD_WEB_TOKEN="+askToken, "LEASHD_API_TOKENS=ci:"+ciAPIToken+":ask=web:ci-*")

	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	st, body := call(t, "POST", url+"/mcp?chat=web:prod", ciAPIToken, list)
	assert.Equal(t, http.StatusForbidden, st, body)
	assert.Contains(t, body, `the token \"ci\" may not ask in chat \"web:prod\": its scope (LEASHD_API_TOKENS) is ask=web:ci-*`)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url + "/mcp?chat=web:ci-1", HTTPClient: &http.Client{Transport: bearer{ciAPIToken}}, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err, "in its scope")
	approved := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "request_approval", Arguments: map[string]any{"action": "Ship it"}})
		if err != nil || len(res.Content) == 0 {
			approved <- fmt.Sprint(err)
			return
		}
		approved <- res.Content[0].(*mcp.TextContent).Text
	}()
	var pending []struct {
		ID       string `json:"interaction_id"`
		Question string `json:"question"`
	}
	require.Eventually(t, func() bool {
		st, body := call(t, "GET", url+"/api/interactions?chat=web:ci-1", askToken, "")
		return st == http.StatusOK && json.Unmarshal([]byte(body), &pending) == nil && len(pending) == 1
	}, 10*time.Second, 20*time.Millisecond)
	st, body = call(t, "POST", url+"/api/interactions/"+pending[0].ID+"/reply", askToken, `{"answers":[["Approve"]]}`)
	require.Equal(t, http.StatusNoContent, st, body)
	assert.Equal(t, "approved", <-approved)
	require.NoError(t, cs.Close())

	st, body = call(t, "POST", url+"/api/interactions", ciAPIToken, `{"chat_id":"web:prod","question":"Deploy?"}`)
	assert.Equal(t, http.StatusForbidden, st, body)
	ids := map[string]string{}
	for _, q := range []string{"Deploy?", "Roll back?"} {
		st, body = call(t, "POST", url+"/api/interactions", ciAPIToken, `{"chat_id":"web:ci-1","question":"`+q+`","options":[{"label":"Yes"},{"label":"No"}]}`)
		require.Equal(t, http.StatusCreated, st, body)
		var r struct {
			ID string `json:"interaction_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &r))
		ids[q] = r.ID
	}
	st, body = call(t, "POST", url+"/api/interactions/"+ids["Deploy?"]+"/reply", ciAPIToken, `{"answers":[["Yes"]]}`)
	assert.Equal(t, http.StatusForbidden, st, "an ask token answers nothing: "+body)
	st, body = call(t, "POST", url+"/api/interactions/"+ids["Deploy?"]+"/reply", askToken, `{"answers":[["Yes"]]}`)
	require.Equal(t, http.StatusNoContent, st, body)
	st, body = call(t, "DELETE", url+"/api/interactions/"+ids["Roll back?"], ciAPIToken, "")
	require.Equal(t, http.StatusNoContent, st, body)
	require.NoError(t, stop())
	assert.NotContains(t, logs.String(), ciAPIToken, "the token never reaches the log")

	cleanEnv(t)
	t.Setenv("LEASHD_DB_PATH", filepath.Join(dir, "leashd.db"))
	var out, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"audit", "--json"}, strings.NewReader(""), &out, &errOut), errOut.String())
	byQ := map[string]map[string]any{}
	for _, l := range jsonLines(t, out.String()) {
		byQ[l["question"].(string)] = l
	}
	require.Contains(t, byQ, "Deploy?", out.String())
	assert.Equal(t, "api:ci", byQ["Deploy?"]["asked_by"])
	assert.Equal(t, "web", byQ["Deploy?"]["by"])
	assert.Equal(t, "api:ci", byQ["Roll back?"]["asked_by"])
	assert.Equal(t, "cancelled", byQ["Roll back?"]["status"])
	assert.Contains(t, byQ["Roll back?"]["text"], "Withdrawn by ci")
	require.Contains(t, byQ, "Ship it", out.String())
	assert.Equal(t, "mcp:ci", byQ["Ship it"]["asked_by"], "asked at /mcp with the ci token")
}

// A bad entry stops leashd at start, naming the entry and what is
// accepted, never the token.
func TestBadAPITokensStopLeashdNamingTheEntry(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LEASHD_API_TOKENS", "ci:"+ciAPIToken+":ask=web:x,write")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), nil, strings.NewReader(""), &stdout, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `LEASHD_API_TOKENS: entry 1 (ci): the scope item "write" is not ask=CHAT or answer; accepted: entries name:token:scope`)
	assert.NotContains(t, err.Error(), ciAPIToken)
}
