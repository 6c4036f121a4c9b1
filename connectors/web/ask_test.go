package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// askID posts a request and returns its interaction ID.
func (e *env) askID(body string) string {
	e.t.Helper()
	st, b := e.post("/api/interactions", body)
	require.Equal(e.t, http.StatusCreated, st, b)
	var r struct {
		ID string `json:"interaction_id"`
	}
	require.NoError(e.t, json.Unmarshal([]byte(b), &r))
	require.NotEmpty(e.t, r.ID)
	return r.ID
}

func (e *env) outcome(id, wait string) map[string]any {
	e.t.Helper()
	st, b := e.do("GET", "/api/interactions/"+id+"?wait="+wait, "")
	require.Equal(e.t, http.StatusOK, st, b)
	var m map[string]any
	require.NoError(e.t, json.Unmarshal([]byte(b), &m))
	return m
}

// A program asks through the API: the question is shown in the chat like
// any other, a long-poll waiting for it gets the person's answer.
func TestProgramAsksAndLongPollGetsTheAnswer(t *testing.T) {
	e := start(t, setup{token: "s3cret-token"})
	s := e.subscribe("?chat=deploys")
	id := e.askID(`{"chat_id":"deploys","kind":"question","header":"Deploy","question":"Ship v2 to prod?","options":[{"label":"Ship","description":"go"},{"label":"Wait"}]}`)
	req := s.next("interaction.requested")
	assert.Equal(t, id, str(req.Data["interaction_id"]))
	assert.Equal(t, "Ship v2 to prod?", str(req.Data["question"]))
	assert.Equal(t, "Deploy", str(req.Data["header"]))

	pending := e.outcome(id, "0")
	assert.Equal(t, "pending", pending["status"])

	got := make(chan map[string]any, 1)
	go func() { got <- e.outcome(id, "30") }()
	st, b := e.reply(id, `{"answers":[["Ship"]]}`)
	require.Equal(t, http.StatusNoContent, st, b)
	o := <-got
	assert.Equal(t, "answered", o["status"])
	assert.Equal(t, "Ship", o["answer"])
	assert.Equal(t, []any{"Ship"}, o["answers"])
	assert.Equal(t, true, o["approved"])
	assert.Equal(t, "web", o["by"])
	assert.NotEmpty(t, o["resolved_at"])
	// Asked again later, the outcome is still there.
	assert.Equal(t, "Ship", e.outcome(id, "0")["answer"])
}

// A multi-select answer comes back as its labels, even when a label
// contains the ", " that joins them.
func TestProgramMultiSelectAnswers(t *testing.T) {
	e := start(t, setup{})
	id := e.askID(`{"chat_id":"c","question":"Which?","multi_select":true,"options":[{"label":"A, B"},{"label":"C"},{"label":"D"}]}`)
	for _, l := range []string{"D", "A, B"} {
		st, b := e.post("/api/interactions/"+id+"/toggle", `{"label":"`+l+`"}`)
		require.Equal(t, http.StatusOK, st, b)
	}
	st, b := e.post("/api/interactions/"+id+"/confirm", "")
	require.Equal(t, http.StatusNoContent, st, b)
	o := e.outcome(id, "10")
	assert.Equal(t, "A, B, D", o["answer"])
	assert.Equal(t, []any{"A, B", "D"}, o["answers"])
}

// An approval: the second option (or typed text) is not an approval; the
// typed text is the reason.
func TestProgramApprovalRejected(t *testing.T) {
	e := start(t, setup{})
	id := e.askID(`{"chat_id":"c","kind":"approval","question":"Drop the table?"}`)
	it, ok := e.coord.Get(id)
	require.True(t, ok)
	assert.Equal(t, []interactions.Choice{{Label: "Approve", Style: interactions.StyleApprove}, {Label: "Reject", Style: interactions.StyleDeny}}, it.Options)
	assert.Equal(t, interactions.AnswerApproval, it.AnswerMode())
	assert.Equal(t, engine.AskerAPI, it.Asker, "asked by a program")
	st, b := e.reply(id, `{"text":"not on a Friday"}`)
	require.Equal(t, http.StatusNoContent, st, b)
	o := e.outcome(id, "10")
	assert.Equal(t, "answered", o["status"])
	assert.Equal(t, false, o["approved"])
	assert.Equal(t, "not on a Friday", o["text"])

	id = e.askID(`{"chat_id":"c","kind":"approval","question":"Drop it?"}`)
	st, b = e.reply(id, `{"answers":[["Reject"]]}`)
	require.Equal(t, http.StatusNoContent, st, b)
	o = e.outcome(id, "10")
	assert.Equal(t, false, o["approved"])
	assert.Equal(t, []any{"Reject"}, o["answers"])
}

// timeout_seconds expires the request on its own; the long-poll says so.
func TestProgramAskTimesOut(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=c")
	id := e.askID(`{"chat_id":"c","kind":"text","question":"Name?","timeout_seconds":1}`)
	o := e.outcome(id, "30")
	assert.Equal(t, "expired", o["status"])
	assert.Equal(t, "No answer came within 1s; the user did not respond.", o["text"])
	assert.Equal(t, "expired", s.resolved(id).Data["status"])
}

// DELETE cancels a pending request (Ctrl+C in leashd ask); then 409.
func TestProgramCancelsItsRequest(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=c")
	id := e.askID(`{"chat_id":"c","question":"Name?"}`)
	st, b := e.do("DELETE", "/api/interactions/"+id, "")
	require.Equal(t, http.StatusNoContent, st, b)
	assert.Equal(t, "cancelled", s.resolved(id).Data["status"])
	o := e.outcome(id, "0")
	assert.Equal(t, "cancelled", o["status"])
	assert.Equal(t, "The program that asked cancelled the request.", o["text"])
	st, b = e.do("DELETE", "/api/interactions/"+id, "")
	require.Equal(t, http.StatusConflict, st, b)
}

// Bad input is refused with 400 naming the field; an unknown chat 404.
func TestProgramAskBadInput(t *testing.T) {
	e := start(t, setup{})
	for _, c := range []struct{ body, want string }{
		{``, "empty body"},
		{`{"chat_id":"c","question":"q","colour":"red"}`, `unknown field "colour"`},
		{`{"question":"q"}`, "chat_id: missing"},
		{`{"chat_id":"a b","question":"q"}`, "chat_id: chat ID \"a b\": no spaces"},
		{`{"chat_id":"c"}`, "question: missing"},
		{`{"chat_id":"c","question":"q","kind":"poll"}`, `kind: "poll" is not a kind`},
		{`{"chat_id":"c","question":"q","timeout_seconds":-1}`, "timeout_seconds: -1 is out of range"},
		{`{"chat_id":"c","question":"q","timeout_seconds":604801}`, "timeout_seconds: 604801 is out of range"},
		{`{"chat_id":"c","question":"q","options":[{"label":"a"},{"label":" "}]}`, "options[1].label: missing"},
		{`{"chat_id":"c","question":"q","options":[{"label":"a"},{"label":"a"}]}`, `options[1].label: "a" is given twice`},
		{`{"chat_id":"c","question":"q","multi_select":true}`, "multi_select: needs options"},
		{`{"chat_id":"c","kind":"text","question":"q","options":[{"label":"a"}]}`, "options: a text question takes no options"},
		{`{"chat_id":"c","kind":"approval","question":"q","options":[{"label":"a"}]}`, "options: an approval has exactly 2 options"},
		{`{"chat_id":"c","kind":"plan_review"}`, "plan: missing"},
		{`{"chat_id":"c","kind":"plan_review","plan":"p","question":"q"}`, `question: not taken by kind "plan_review"`},
		{`{"chat_id":"c","kind":"tool_approval","tool_name":"Bash","tool_input":[1]}`, "tool_input: must be a JSON object"},
	} {
		st, hdr, b := e.request(t, "POST", "/api/interactions", c.body, e.token)
		require.Equal(t, http.StatusBadRequest, st, "%s: %s", c.body, b)
		assert.Contains(t, errorOf(t, hdr, b), c.want, c.body)
	}
	st, hdr, b := e.request(t, "POST", "/api/interactions", `{"chat_id":"telegram:42","question":"q"}`, e.token)
	require.Equal(t, http.StatusNotFound, st, b)
	assert.Contains(t, errorOf(t, hdr, b), `there is no chat "telegram:42" here: Telegram is not connected to this leashd`)

	st, hdr, b = e.request(t, "GET", "/api/interactions/nope?wait=0", "", e.token)
	require.Equal(t, http.StatusNotFound, st, b)
	assert.Equal(t, `no such interaction: "nope"`, errorOf(t, hdr, b))
	for _, w := range []string{"-1", "601", "soon"} {
		st, hdr, b = e.request(t, "GET", "/api/interactions/nope?wait="+w, "", e.token)
		require.Equal(t, http.StatusBadRequest, st, b)
		assert.Contains(t, errorOf(t, hdr, b), "wait: \""+w+"\" is not a number of seconds from 0 to 600")
	}
	assert.Empty(t, e.coord.Pending(""), "nothing was asked")
}

// A request made before a restart is answered after it, and a long-poll
// started after the restart gets that answer from the journal.
func TestProgramAskAnsweredAfterRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leashd.db")
	e := start(t, setup{db: db})
	id := e.askID(`{"chat_id":"c","question":"Ship?","options":[{"label":"Yes"},{"label":"No"}]}`)
	e.stop()

	e = start(t, setup{db: db})
	s := e.subscribe("?chat=c")
	assert.Equal(t, "pending", e.outcome(id, "0")["status"], "interrupted, and still answerable")
	got := make(chan map[string]any, 1)
	go func() { got <- e.outcome(id, "30") }()
	time.Sleep(50 * time.Millisecond) // let the long-poll start first (either order works)
	st, b := e.reply(id, `{"answers":[["Yes"]]}`)
	require.Equal(t, http.StatusNoContent, st, b)
	o := <-got
	assert.Equal(t, "answered", o["status"])
	assert.Equal(t, "Yes", o["answer"])
	assert.Equal(t, []any{"Yes"}, o["answers"])

	// The answer went to the program, not to the chat's agent as a prompt:
	// the next turn the agent runs is the person's own message.
	e.send("c", "hello", "agent")
	// Turns run in order: had the answer been sent to the agent, the first
	// turn to finish would be that one.
	done := s.next("agent.done")
	assert.NotContains(t, str(done.Data["result"]), "before leashd restarted")
	assert.NotContains(t, done.Raw, agent.RecoveredPromptPrefix)
	st, b = e.do("GET", "/api/chats", "")
	require.Equal(t, http.StatusOK, st)
	assert.NotContains(t, b, "answer recovered after restart")
}

// A long-poll in flight when leashd stops is answered "pending" at once
// (the question can still be answered after the restart), rather than
// holding up the shutdown and then losing its connection.
func TestLongPollEndsAtShutdown(t *testing.T) {
	e := start(t, setup{})
	id := e.askID(`{"chat_id":"c","question":"Ship?"}`)
	type result struct {
		status int
		body   string
		err    error
	}
	got := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("GET", e.url+"/api/interactions/"+id+"?wait=60", nil)
		req.Header.Set("Authorization", "Bearer "+e.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{resp.StatusCode, string(b), err}
	}()
	require.Eventually(t, func() bool { return len(e.coord.Pending("c")) == 1 }, 5*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // the long-poll is waiting (either way the answer is the same)
	e.stop()
	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Contains(t, r.body, `"status":"pending"`)
}
