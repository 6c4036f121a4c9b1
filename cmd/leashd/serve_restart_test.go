package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leashd/leashd/config/testenv"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeRestartKeepsAPendingQuestionAnswerable stops leashd with a
// question pending and starts it again on the same database: the question
// is listed as interrupted, a reply to its old ID is accepted, and the
// agent gets the answer.
func TestServeRestartKeepsAPendingQuestionAnswerable(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, _, stop := startServe(t, dir)
	const chat = "web:restart"
	code, body := postJSON(t, url+"/api/chats/"+chat+"/messages", `{"text":"question"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	p := waitPending(t, url, chat, func(p pendingView) bool { return p.Question == "Which database?" })
	require.NoError(t, stop())

	url, logs, stop := startServe(t, dir)
	defer func() { assert.NoError(t, stop()) }()
	old := waitPending(t, url, chat, func(q pendingView) bool { return q.ID == p.ID })
	assert.True(t, old.Interrupted, "listed as interrupted by the restart")
	code, body = postJSON(t, url+"/api/interactions/"+p.ID+"/reply", `{"answers":[["SQLite"]]}`)
	require.Less(t, code, 300, "a tap on a button from before the restart is accepted: %d %s", code, body)

	// The agent receives the recovered answer as its next prompt and says so.
	waitEvent(t, url, chat, "Got your answer from before leashd restarted")
	require.Eventually(t, func() bool {
		var out bytes.Buffer
		if err := run(t.Context(), []string{"audit", "--json", "--chat", chat}, nil, &out, io.Discard); err != nil {
			return false
		}
		return strings.Contains(out.String(), `"answer":"SQLite"`) && strings.Contains(out.String(), `"status":"answered"`)
	}, 10*time.Second, 50*time.Millisecond, "the audit log records the answer given after the restart")
	assert.NotContains(t, logs.String(), "level=ERROR")
}
