package web_test

import (
	"fmt"
	"github.com/leashd/leashd/connectors/web"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/httpserver"
)

// A long-poll answered after the server's write timeout still gets the
// answer: the timeout bounds each write, not the wait for a person.
func TestLongPollAnsweredAfterTheWriteTimeout(t *testing.T) {
	e := start(t, setup{server: httpserver.Options{WriteTimeout: 300 * time.Millisecond}})
	id := e.askID(`{"chat_id":"slow","kind":"approval","question":"Deploy?"}`)
	got := make(chan string, 1)
	go func() { got <- e.longPoll(id, 10) }()
	time.Sleep(time.Second) // more than three write timeouts
	st, b := e.reply(id, `{"answers":[["Approve"]]}`)
	require.Equal(t, 204, st, b)
	select {
	case o := <-got:
		assert.Contains(t, o, `"status":"answered"`)
		assert.Contains(t, o, `"approved":true`)
	case <-time.After(15 * time.Second):
		t.Fatal("the long-poll got nothing")
	}
}

// longPoll returns what GET /api/interactions/{id}?wait= answers, or the
// error the client saw (it may run on another goroutine). Like curl, it
// uses a connection of its own: Go's client would silently retry a GET
// cut off on a reused connection.
func (e *env) longPoll(id string, wait int) string {
	req, err := http.NewRequest("GET", fmt.Sprintf("%s/api/interactions/%s?wait=%d", e.url, id, wait), nil)
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, b)
}

// A long-poll nobody answers, longer than the write timeout, says pending.
func TestLongPollWithoutAnswerSaysPending(t *testing.T) {
	e := start(t, setup{server: httpserver.Options{WriteTimeout: 300 * time.Millisecond}})
	id := e.askID(`{"chat_id":"slow","question":"Anyone?"}`)
	began := time.Now()
	o := e.longPoll(id, 1)
	assert.Contains(t, o, "200 {")
	assert.Contains(t, o, `"status":"pending"`)
	assert.Contains(t, o, `"interaction_id":"`+id+`"`)
	assert.GreaterOrEqual(t, time.Since(began), time.Second, "it waited")
}

// A plain GET of a request answered before a restart (only in the
// journal now) says how it ended, not pending.
func TestOutcomeFromTheJournalWithoutWait(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leashd.db")
	e := start(t, setup{db: db})
	id := e.askID(`{"chat_id":"j","question":"Ship?","options":[{"label":"Ship"},{"label":"Wait"}]}`)
	st, b := e.reply(id, `{"answers":[["Ship"]]}`)
	require.Equal(t, 204, st, b)
	require.Equal(t, "answered", e.outcome(id, "5")["status"])
	e.stop()

	e2 := start(t, setup{db: db})
	o := e2.outcome(id, "0")
	assert.Equal(t, "answered", o["status"])
	assert.Equal(t, "Ship", o["answer"])
	o = e2.outcome(id, "")
	assert.Equal(t, "answered", o["status"], "no ?wait at all")
}

// Issue 30 item 8: long-polls fill their own cap, not the server's
// connections. With more long-polls than the server holds connections, a
// reply from the page and a health check still answer, those past the
// cap are told so (503 naming LEASHD_WEB_MAX_WAITS), and those waiting
// get the answer.
func TestLongPollsLeaveRoomForRepliesAndHealthChecks(t *testing.T) {
	const conns, waits = 16, 4
	e := start(t, setup{server: httpserver.Options{MaxConns: conns}, webOpts: []web.Option{web.WithMaxWaits(waits)},
		routes: map[string]http.Handler{"GET /healthz": healthz()}})
	id := e.askID(`{"chat_id":"busy","kind":"approval","question":"Deploy?"}`)
	got := make(chan string, conns)
	for range conns {
		go func() { got <- e.longPoll(id, 30) }()
	}
	var refused []string
	for len(refused) < conns-waits {
		select {
		case o := <-got:
			require.True(t, strings.HasPrefix(o, "503 "), "past the cap: %s", o)
			refused = append(refused, o)
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d long-polls refused, %d expected", len(refused), conns-waits)
		}
	}
	assert.Contains(t, refused[0], "LEASHD_WEB_MAX_WAITS")

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(e.url + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "health check with every long-poll waiting")
	st, b := e.reply(id, `{"answers":[["Approve"]]}`)
	require.Equal(t, http.StatusNoContent, st, b)
	for range waits {
		select {
		case o := <-got:
			assert.Contains(t, o, `"status":"answered"`)
		case <-time.After(10 * time.Second):
			t.Fatal("a waiting long-poll got no answer")
		}
	}
}
