package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/interactions/client"
)

const bashEvent = `{"session_id":"s1","cwd":"/tmp/p","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"make deploy"}}`

// TestHookWithoutLeashdDecidesNothing: nobody listening, or a listener
// that never answers, and the hooks print nothing (no decision) and exit
// 0, so the terminal goes on as without them.
func TestHookWithoutLeashdDecidesNothing(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LEASHD_WEB_TOKEN", "tok")
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedURL := "http://" + closed.Addr().String()
	require.NoError(t, closed.Close())
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accepted, never answered
		}
	}()
	for _, url := range []string{closedURL, "http://" + silent.Addr().String()} {
		for _, sub := range []string{"permission-request", "stop", "notify", "prompt"} {
			var stdout, stderr bytes.Buffer
			start := time.Now()
			err := run(t.Context(), []string{"hook", sub, "--chat", "desk", "--url", url}, strings.NewReader(bashEvent), &stdout, &stderr)
			t.Logf("%s against %s: returned in %s", sub, url, time.Since(start).Round(time.Millisecond))
			require.NoError(t, err)
			assert.Empty(t, stdout.String(), "no decision")
			assert.Contains(t, stderr.String(), "leashd is not reachable")
		}
	}
}

// TestAwayCommandAndAPI: leashd away on|off|status set and show the
// state a hook asks; the API refuses a bad body with what it accepts.
func TestAwayCommandAndAPI(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, _, stop := startServe(t, dir)
	defer func() { require.NoError(t, stop()) }()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"away", "status", "--url", url}, nil, &out, &out))
	assert.Contains(t, out.String(), "At the desk (desk)")
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"away", "on", "--url", url}, nil, &out, &out))
	assert.Contains(t, out.String(), "Away from the desk (desk)")
	var st struct {
		Away bool `json:"away"`
	}
	assert.Equal(t, http.StatusOK, getJSON(t, url+"/api/away?chat=desk", &st))
	assert.True(t, st.Away)
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"away", "off", "--url", url}, nil, &out, &out))
	assert.Contains(t, out.String(), "At the desk (desk)")

	code, body := postJSON(t, url+"/api/away", `{"chat_id":"desk"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, `away: missing: true (away from the desk) or false (back)`)
	code, body = postJSON(t, url+"/api/interactions", `{"chat_id":"desk","kind":"text","question":"q","source":{"kind":"cron"}}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, `source.kind: \"cron\" is not a source (accepted: \"hook\")`)
	err := run(t.Context(), []string{"away", "maybe", "--url", url}, nil, &out, &out)
	assert.ErrorContains(t, err, `"maybe" is not on, off or status`)
}

// TestHookRequestsMeetThePolicy: away, a hook's request is a program's
// tool approval, decided by LEASHD_POLICY_FILE before anyone is asked —
// a deny rule's reason is what Claude Code reads, an allow rule's path is
// judged in the terminal session's working directory (not leashd's) —
// and both are audited with source=hook.
func TestHookRequestsMeetThePolicy(t *testing.T) {
	dir := testenv.PrivateDir(t)
	proj := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(pol, []byte(`rules:
  - tool: Bash
    command: '\bgit\s+push\b'
    decision: deny
    reason: Pushing is done by CI.
  - tool: Write
    path: 'notes/**'
    decision: allow
`), 0o600))
	url, _, stop := startServe(t, dir, "LEASHD_POLICY_FILE="+pol)
	defer func() { require.NoError(t, stop()) }()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"away", "on", "--url", url}, nil, &out, &out))
	hook := func(event string) string {
		var stdout, stderr bytes.Buffer
		require.NoError(t, run(t.Context(), []string{"hook", "permission-request", "--chat", "desk", "--url", url}, strings.NewReader(event), &stdout, &stderr))
		return stdout.String()
	}
	got := hook(`{"session_id":"s1","cwd":` + quoteJSON(proj) + `,"tool_name":"Bash","tool_input":{"command":"git push origin main"}}`)
	assert.JSONEq(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"denied by policy rule 1 (line 2): Pushing is done by CI."}}}`, got)
	write := `{"file_path":` + quoteJSON(filepath.Join(proj, "notes", "a.md")) + `,"content":"x"}`
	got = hook(`{"session_id":"s1","cwd":` + quoteJSON(proj) + `,"tool_name":"Write","tool_input":` + write + `}`)
	assert.JSONEq(t, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":`+write+`}}}`, got)

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"audit", "--chat", "desk"}, nil, &out, &out))
	assert.Contains(t, out.String(), "denied by policy")
	assert.Contains(t, out.String(), "allowed by policy")
	assert.Contains(t, out.String(), "source=hook session=s1 cwd="+proj)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestBackReleasesOnlyTheHooksRequests: back at the desk, what a hook
// relayed and nobody answered is cancelled (its terminal asks again); a
// program's own request stays pending. A notification reaches the chat
// only while away.
func TestBackReleasesOnlyTheHooksRequests(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, _, stop := startServe(t, dir)
	defer func() { require.NoError(t, stop()) }()
	notify := func() {
		var stdout, stderr bytes.Buffer
		require.NoError(t, run(t.Context(), []string{"hook", "notify", "--chat", "desk", "--url", url},
			strings.NewReader(`{"session_id":"s1","cwd":"/src/app","hook_event_name":"Notification","message":"Claude needs your permission","notification_type":"permission_prompt"}`), &stdout, &stderr))
		assert.Empty(t, stdout.String())
	}
	notify() // at the desk: nothing
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"away", "on", "--url", url}, nil, &out, &out))
	notify()
	waitEvent(t, url, "desk", "Claude Code is waiting at the terminal in /src/app: Claude needs your permission")

	code, body := postJSON(t, url+"/api/interactions", `{"chat_id":"desk","kind":"approval","question":"Deploy?"}`)
	require.Equal(t, http.StatusCreated, code, body)
	code, body = postJSON(t, url+"/api/interactions", `{"chat_id":"desk","kind":"tool_approval","tool_name":"Bash","tool_input":{"command":"make"},"source":{"kind":"hook","session_id":"s1","cwd":"/src/app"}}`)
	require.Equal(t, http.StatusCreated, code, body)
	var created struct {
		ID string `json:"interaction_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &created))

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"away", "off", "--url", url}, nil, &out, &out))
	assert.Contains(t, out.String(), "1 request(s) waiting in the chat went back to the terminal")
	var o struct{ Status, Text string }
	getJSON(t, url+"/api/interactions/"+created.ID, &o)
	assert.Equal(t, "cancelled", o.Status)
	assert.Equal(t, "Back at the desk: the terminal asks again.", o.Text)
	var pending []pendingView
	getJSON(t, url+"/api/interactions?chat=desk", &pending)
	require.Len(t, pending, 1)
	assert.Equal(t, "Deploy?", pending[0].Question, "the program's own request stays")
}

// TestAwayAfterIdleTerminal: with LEASHD_AWAY_AFTER_SECONDS, a terminal
// with no prompt typed for that long counts as away; a prompt typed there
// (the UserPromptSubmit hook) is at the desk again, but does not end an
// away that leashd away on started.
func TestAwayAfterIdleTerminal(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, _, stop := startServe(t, dir, "LEASHD_AWAY_AFTER_SECONDS=1")
	defer func() { require.NoError(t, stop()) }()
	away := func() bool {
		var st struct {
			Away bool `json:"away"`
		}
		require.Equal(t, http.StatusOK, getJSON(t, url+"/api/away?chat=desk", &st))
		return st.Away
	}
	assert.False(t, away(), "no prompt seen yet: at the desk")
	prompt := func() {
		var stdout, stderr bytes.Buffer
		require.NoError(t, run(t.Context(), []string{"hook", "prompt", "--chat", "desk", "--url", url},
			strings.NewReader(`{"session_id":"s1","cwd":"/src/app","hook_event_name":"UserPromptSubmit","prompt":"go"}`), &stdout, &stderr))
		assert.Empty(t, stdout.String(), "the prompt goes on unchanged")
		assert.Empty(t, stderr.String())
	}
	prompt()
	assert.Eventually(t, away, 20*time.Second, 50*time.Millisecond, "idle past LEASHD_AWAY_AFTER_SECONDS: away")
	st, err := client.New(url, useToken(t, url, dir)).DeskActive(t.Context(), "desk")
	require.NoError(t, err)
	assert.False(t, st.Away, "a prompt typed at the terminal: at the desk")

	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"away", "on", "--url", url}, nil, &out, &out))
	prompt()
	assert.True(t, away(), "leashd away on holds until off or /back")
}

// TestHookStopRelaysTheFinalMessage: away, the Stop hook shows the final
// message (cut to the limit, a long working directory shortened to its
// end in the header) as a text request, and the text typed back is the
// block reason that continues the session.
func TestHookStopRelaysTheFinalMessage(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, _, stop := startServe(t, dir)
	defer func() { require.NoError(t, stop()) }()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"away", "on", "--url", url}, nil, &out, &out))
	cwd := "/home/someone/" + strings.Repeat("deeply/nested/", 12) + "project"
	final := "Done. " + strings.Repeat("All green. ", 3000)
	event, err := json.Marshal(map[string]any{"session_id": "s9", "cwd": cwd, "hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": final})
	require.NoError(t, err)
	done := make(chan string, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), []string{"hook", "stop", "--chat", "desk", "--url", url}, bytes.NewReader(event), &stdout, &stderr)
		assert.NoError(t, err)
		done <- stdout.String()
	}()
	p := waitPending(t, url, "desk", func(p pendingView) bool { return strings.HasPrefix(p.Question, "Done. All green.") })
	assert.Contains(t, p.Question, "Type the next instruction to continue this session")
	code, body := postJSON(t, url+"/api/interactions/"+p.ID+"/reply", `{"text":"now deploy to staging"}`)
	require.Equal(t, http.StatusNoContent, code, body)
	var got struct{ Decision, Reason string }
	require.NoError(t, json.Unmarshal([]byte(<-done), &got))
	assert.Equal(t, "block", got.Decision)
	assert.Contains(t, got.Reason, "now deploy to staging")

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"audit", "--json", "--chat", "desk"}, nil, &out, &out))
	assert.Contains(t, out.String(), `"header":"Claude Code finished in …`)
	assert.Contains(t, out.String(), `nested/project"`)
}
