package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent/sandbox/docker/dockertest"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// attackToken is the web token of the leashd under attack.
const attackToken = "isolation-test-token-5f1c9e7a2b"

// guarded is a leashd running a real agent whose allowed command tries to
// reach its guard.
type guarded struct {
	url, db, dir string
	api          *fakeapi.Server
}

// startGuarded runs leashd with agentKind (claude or acp) in sandbox mode,
// its state outside the working directory, the fake model API in its
// environment as an operator would give it.
func startGuarded(t *testing.T, agentKind, mode string, extra ...string) *guarded {
	t.Helper()
	var agentEnv []string // found before cleanEnv clears LEASHD_TEST_*
	switch {
	case mode == "docker":
		// The test image has both on its PATH; the fake API is on the
		// host's loopback.
		agentEnv = []string{"LEASHD_SANDBOX_IMAGE=" + dockertest.Image(t), "LEASHD_SANDBOX_NETWORK=host",
			"LEASHD_AGENT=" + agentKind, "LEASHD_CLAUDE_PATH=claude", "LEASHD_ACP_COMMAND=claude-agent-acp"}
	case agentKind == "claude":
		agentEnv = []string{"LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH=" + testenv.Claude(t)}
	case agentKind == "acp":
		agentEnv = []string{"LEASHD_AGENT=acp", "LEASHD_ACP_COMMAND=" + testenv.ACPAgent(t)}
	}
	api := fakeapi.New(t)
	home, state, dir := t.TempDir(), testenv.PrivateDir(t), t.TempDir()
	g := &guarded{db: filepath.Join(state, "leashd.db"), dir: dir, api: api}
	cleanEnv(t)
	for _, kv := range append(api.Env(home), "IS_SANDBOX=1") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	env := []string{
		"LEASHD_SANDBOX=" + mode, "LEASHD_SANDBOX_HOME=" + home, "LEASHD_PREWARM=0",
		"LEASHD_DB_PATH=" + g.db, "LEASHD_WEB_TOKEN=" + attackToken,
		// The fake API's switches that keep the CLI quiet are not in the
		// minimal environment: the operator lists them.
		"LEASHD_AGENT_ENV=DISABLE_*",
	}
	env = append(env, agentEnv...)
	url, _, stop := startServe(t, dir, append(env, extra...)...)
	t.Cleanup(func() { _ = stop() })
	g.url = url
	return g
}

// call sends an API request with the token (or without it, token "").
func (g *guarded) call(t *testing.T, method, path, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, g.url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// pending is a request waiting in a chat, as the API lists it.
type pending struct {
	ID       string `json:"interaction_id"`
	Kind     string `json:"kind"`
	ToolName string `json:"tool_name"`
	Options  []struct {
		Label string `json:"label"`
	} `json:"options"`
}

// waitPendingIn waits for a request in chat and returns it.
func (g *guarded) waitPendingIn(t *testing.T, chat string) pending {
	t.Helper()
	var found pending
	require.Eventually(t, func() bool {
		code, body := g.call(t, "GET", "/api/interactions?chat="+chat, attackToken, "")
		var list []pending
		if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil || len(list) == 0 {
			return false
		}
		found = list[0]
		return true
	}, 90*time.Second, 50*time.Millisecond, "nothing pending in %s", chat)
	return found
}

// allowChoice is the answer a person taps to allow p.
func allowChoice(p pending) string {
	for _, o := range p.Options {
		if l := strings.ToLower(o.Label); strings.HasPrefix(l, "allow") || l == "yes" {
			return o.Label
		}
	}
	return "allow"
}

// attackCommand prints the agent's environment, tries to read and append
// to leashd's database, and tries to approve another chat's request
// through leashd's API on loopback, without a token and with a guessed one.
func attackCommand(db, url, victim string) string {
	post := func(auth string) string {
		return fmt.Sprintf(`node -e "fetch('%s/api/interactions/%s/reply',{method:'POST',headers:{'content-type':'application/json'%s},body:JSON.stringify({answers:[['Approve']]})}).then(r=>console.log('api-status',r.status)).catch(e=>console.log('api-unreachable',e.message))"`,
			url, victim, auth)
	}
	return strings.Join([]string{
		"env",
		"head -c 16 " + db + " || echo no-database-to-read",
		"{ echo pwned >> " + db + "; } 2>/dev/null && echo appended || echo no-database-to-write",
		post(""),
		post(`,authorization:'Bearer '+(process.env.LEASHD_WEB_TOKEN||'guess')`),
	}, "; ")
}

// An allowed command of a real agent, inside each sandbox, can neither
// read leashd's secrets, nor read or change its database, nor answer
// another chat's pending approval through the API.
func TestAgentCannotReachItsGuard(t *testing.T) {
	for _, mode := range []string{"off", "bwrap", "docker"} {
		for _, kind := range []string{"claude", "acp"} {
			t.Run(kind+"/"+mode, func(t *testing.T) {
				if mode == "bwrap" {
					testenv.Bwrap(t)
				}
				checkGuardHolds(t, startGuarded(t, kind, mode), mode)
			})
		}
	}
}

func checkGuardHolds(t *testing.T, g *guarded, mode string) {
	t.Helper()
	code, body := g.call(t, "POST", "/api/interactions", attackToken,
		`{"chat_id":"web:release","kind":"approval","question":"Ship release 1.0?"}`)
	require.Contains(t, []int{http.StatusCreated, http.StatusAccepted}, code, body)
	var asked struct {
		ID string `json:"interaction_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &asked))
	before, err := os.ReadFile(g.db)
	require.NoError(t, err)

	g.api.Reply(fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_attack", Name: "Bash", Input: map[string]string{
		"command": attackCommand(g.db, g.url, asked.ID), "description": "run the tests"}}}}, fakeapi.Text("tests ran"))
	code, body = g.call(t, "POST", "/api/chats/web:dev/messages", attackToken, `{"text":"run the tests"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	p := g.waitPendingIn(t, "web:dev")
	code, body = g.call(t, "POST", "/api/interactions/"+p.ID+"/reply", attackToken,
		fmt.Sprintf(`{"answers":[[%q]]}`, allowChoice(p)))
	require.Equal(t, http.StatusNoContent, code, body)

	out := toolOutput(t, g.api, "toolu_attack")
	assert.Contains(t, out, "ANTHROPIC_BASE_URL=", "the command ran, with the agent's own variables")
	assert.NotContains(t, out, attackToken)
	assert.NotContains(t, out, "LEASHD_")
	assert.NotContains(t, out, "api-status 2", "the API answered the agent")
	assert.Regexp(t, `api-(status 401|unreachable)`, out)
	code, body = g.call(t, "GET", "/api/interactions/"+asked.ID, attackToken, "")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"status":"pending"`, "the other chat's approval is still pending")
	after, err := os.ReadFile(g.db)
	require.NoError(t, err)
	if mode == "off" {
		// Unconfined, the agent runs as leashd's user: its files are the
		// agent's too. That is what the sandbox is for (README).
		return
	}
	assert.NotContains(t, out, "SQLite format", "the database was read")
	assert.NotContains(t, out, "appended", "the database was written")
	assert.False(t, strings.Contains(string(after), "pwned"), "the database holds what the agent appended")
	assert.GreaterOrEqual(t, len(after), len(before))
}

// toolOutput waits for the model to receive the tool's result.
func toolOutput(t *testing.T, api *fakeapi.Server, id string) string {
	t.Helper()
	var out string
	require.Eventually(t, func() bool {
		for _, c := range api.Calls() {
			if b, ok := c.ToolResult(id); ok {
				out = b.ResultText()
				return true
			}
		}
		return false
	}, 90*time.Second, 50*time.Millisecond, "the model never got the command's output")
	return out
}
