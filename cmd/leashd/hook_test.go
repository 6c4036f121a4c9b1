package main

import (
	"bytes"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
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
		for _, sub := range []string{"permission-request", "stop", "notify"} {
			var stdout, stderr bytes.Buffer
			start := time.Now()
			err := run(t.Context(), []string{"hook", sub, "--chat", "desk", "--url", url}, strings.NewReader(bashEvent), &stdout, &stderr)
			t.Logf("%s against %s: returned in %s", sub, url, time.Since(start).Round(time.Millisecond))
			require.NoError(t, err)
			assert.Empty(t, stdout.String(), "no decision")
			assert.Contains(t, stderr.String(), "the terminal decides")
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
