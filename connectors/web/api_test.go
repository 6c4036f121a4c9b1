package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/engine/agent/demo"
	"github.com/leashd/leashd/interactions"
)

func labels(ev sseEvent) []string {
	var out []string
	for _, o := range ev.Data["options"].([]any) {
		out = append(out, o.(map[string]any)["label"].(string))
	}
	return out
}

func id(ev sseEvent) string { return str(ev.Data["interaction_id"]) }

func TestQuestionFlowWithToggles(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=c1")
	e.send("c1", "ask me a question", "agent")

	q1 := s.next("interaction.requested")
	assert.Equal(t, "question", q1.Data["kind"])
	assert.Equal(t, "c1", q1.Data["chat_id"])
	assert.Equal(t, "Database", q1.Data["header"])
	assert.Equal(t, "Which database?", q1.Data["question"])
	assert.Equal(t, false, q1.Data["multi_select"])
	assert.EqualValues(t, 1, q1.Data["index"])
	assert.EqualValues(t, 2, q1.Data["total"])
	assert.Equal(t, []string{"Postgres", "SQLite"}, labels(q1))

	st, body := e.do("GET", "/api/interactions?chat=c1", "")
	require.Equal(t, http.StatusOK, st)
	var pending []map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &pending))
	require.Len(t, pending, 1)
	assert.Equal(t, id(q1), pending[0]["interaction_id"])
	st, body = e.do("GET", "/api/interactions?chat=nobody", "")
	require.Equal(t, http.StatusOK, st)
	assert.JSONEq(t, `[]`, body)

	st, body = e.reply(id(q1), `{"answers":[["SQLite"]]}`)
	require.Equal(t, http.StatusNoContent, st, body)
	r1 := s.resolved(id(q1))
	assert.Equal(t, id(q1), id(r1))
	assert.Equal(t, "answered", r1.Data["status"])
	assert.Equal(t, "SQLite", r1.Data["answer"])
	assert.Equal(t, "web", r1.Data["by"])

	q2 := s.next("interaction.requested")
	assert.Equal(t, "Features", q2.Data["header"])
	assert.Equal(t, true, q2.Data["multi_select"])
	assert.EqualValues(t, 2, q2.Data["index"])
	assert.Equal(t, []string{"Auth", "Search", "Billing"}, labels(q2))

	for _, step := range []struct{ label, want string }{
		{"Billing", `["Billing"]`}, {"Search", `["Search","Billing"]`}, {"Auth", `["Auth","Search","Billing"]`}, {"Search", `["Auth","Billing"]`},
	} {
		st, body = e.post("/api/interactions/"+id(q2)+"/toggle", `{"label":"`+step.label+`"}`)
		require.Equal(t, http.StatusOK, st, body)
		assert.JSONEq(t, `{"selected":`+step.want+`}`, body)
		up := s.next("interaction.updated")
		b, _ := json.Marshal(up.Data["selected"])
		assert.JSONEq(t, step.want, string(b))
	}
	// The pending list carries the selection, for a page that reconnects.
	_, body = e.do("GET", "/api/interactions", "")
	require.NoError(t, json.Unmarshal([]byte(body), &pending))
	require.Len(t, pending, 1)
	assert.Equal(t, []any{"Auth", "Billing"}, pending[0]["selected"])

	st, body = e.post("/api/interactions/"+id(q2)+"/confirm", "")
	require.Equal(t, http.StatusNoContent, st, body)
	r2 := s.resolved(id(q2))
	assert.Equal(t, "Auth, Billing", r2.Data["answer"])

	s.saying(`Thanks. Your answers: Which database? SQLite; Which features? Auth, Billing`)
	done := s.next("agent.done")
	assert.Equal(t, `Thanks. Your answers: Which database? SQLite; Which features? Auth, Billing`, done.Data["result"])
	assert.Equal(t, false, done.Data["is_error"])
	assert.EqualValues(t, 0, done.Data["cost_usd"])
	assert.EqualValues(t, 2, done.Data["num_turns"])
}

func TestMultiSelectAsOneReply(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=c2")
	e.send("c2", "question", "agent")
	q1 := s.next("interaction.requested")
	st, _ := e.reply(id(q1), `{"answers":[["Postgres"]]}`)
	require.Equal(t, http.StatusNoContent, st)
	q2 := s.next("interaction.requested")
	st, body := e.reply(id(q2), `{"answers":[["Billing","Auth"]]}`)
	require.Equal(t, http.StatusNoContent, st, body)
	s.saying(`Which database? Postgres; Which features? Auth, Billing`)
}

func TestQuestionTypedAnswerAndDecline(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=c3")
	e.send("c3", "question", "agent")
	q1 := s.next("interaction.requested")
	st, body := e.reply(id(q1), `{"text":"DuckDB"}`)
	require.Equal(t, http.StatusNoContent, st, body)
	q2 := s.next("interaction.requested")
	// A chat message while a question is pending answers it.
	e.send("c3", "everything", "interaction")
	r := s.until("interaction.resolved", func(ev sseEvent) bool { return id(ev) == id(q2) })
	assert.Equal(t, "everything", r.Data["answer"])
	s.saying(`Which database? DuckDB; Which features? everything`)

	e.send("c3", "question", "agent")
	q3 := s.next("interaction.requested")
	st, body = e.post("/api/interactions/"+id(q3)+"/reject", "")
	require.Equal(t, http.StatusNoContent, st, body)
	r = s.resolved(id(q3))
	assert.Equal(t, "rejected", r.Data["status"])
	assert.Equal(t, "reject", r.Data["decision"])
	s.saying("You did not answer my questions: The user rejected this request.")
}

func TestPlanReviewAdjustThenApprove(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=p")
	e.send("p", "/plan", "command")
	s.saying("Mode: plan")
	e.send("p", "make a plan", "agent")
	p := s.next("interaction.requested")
	assert.Equal(t, "plan_review", p.Data["kind"])
	assert.Equal(t, demo.Plan, p.Data["plan"])
	assert.Equal(t, []string{"clean_edit", "edit", "default", "adjust"}, labels(p))
	assert.Equal(t, []any{"Approve, fresh session (recommended)", "Approve, auto-accept edits", "Approve, review edits", "Adjust"}, p.Data["option_texts"])
	for _, k := range []string{"interaction_id", "chat_id", "kind", "header", "question", "options", "multi_select", "index", "total", "plan", "tool_name", "tool_input"} {
		assert.Contains(t, p.Data, k, "every field is present whatever the kind")
	}

	st, body := e.reply(id(p), `{"answers":[["adjust"]]}`)
	require.Equal(t, http.StatusAccepted, st, body)
	assert.Contains(t, body, `"awaiting_feedback":true`)
	up := s.next("interaction.updated")
	assert.Equal(t, true, up.Data["awaiting_feedback"])
	_, body = e.do("GET", "/api/interactions?chat=p", "")
	assert.Contains(t, body, `"awaiting_feedback":true`)

	e.send("p", "use a table", "interaction")
	r := s.resolved(id(p))
	assert.Equal(t, "rejected", r.Data["status"])
	assert.Equal(t, "adjust", r.Data["decision"])
	assert.Equal(t, "use a table", r.Data["text"])
	s.saying(`Plan not approved, so I stay in plan mode. Your feedback: "use a table"`)
	s.next("agent.done")

	// adjust with the feedback in the same body resolves at once.
	e.send("p", "plan", "agent")
	p2 := s.next("interaction.requested")
	st, body = e.reply(id(p2), `{"answers":[["adjust"]],"text":"shorter"}`)
	require.Equal(t, http.StatusNoContent, st, body)
	s.saying(`Your feedback: "shorter"`)
	s.next("agent.done")

	e.send("p", "plan", "agent")
	p3 := s.next("interaction.requested")
	st, body = e.reply(id(p3), `{"answers":[["edit"]]}`)
	require.Equal(t, http.StatusNoContent, st, body)
	r = s.resolved(id(p3))
	assert.Equal(t, "answered", r.Data["status"])
	assert.Equal(t, "edit", r.Data["decision"])
	s.saying("Plan approved. Mode: acceptEdits — edits are applied without asking.")
}

// After a plan approved with "edit" the Write is allowed by the engine
// without asking; Bash still asks.
func TestPlanApprovalModeAppliesToTools(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=pm")
	e.send("pm", "/plan", "command")
	e.send("pm", "edit and bash", "agent")
	p := s.next("interaction.requested")
	require.Equal(t, "plan_review", p.Data["kind"])
	st, _ := e.reply(id(p), `{"answers":[["edit"]]}`)
	require.Equal(t, http.StatusNoContent, st)
	b := s.next("interaction.requested")
	assert.Equal(t, "tool_approval", b.Data["kind"])
	assert.Equal(t, "Bash", b.Data["tool_name"], "Write was auto-allowed in acceptEdits")
	s.saying("Write of /w/hello.txt allowed.")
	st, _ = e.reply(id(b), `{"answers":[["allow"]]}`)
	require.Equal(t, http.StatusNoContent, st)
	s.saying("Bash `echo hello` allowed. Output: hello")
}

func TestCleanApprovalStartsFreshSession(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=clean")
	e.send("clean", "plan", "agent")
	p := s.next("interaction.requested")
	st, _ := e.reply(id(p), `{"answers":[["clean_edit"]]}`)
	require.Equal(t, http.StatusNoContent, st)
	s.saying("Starting a fresh session to implement it")
	s.saying("Working through the plan: writing hello.txt, then running `echo hello`.")
	b := s.next("interaction.requested")
	assert.Equal(t, "Bash", b.Data["tool_name"])
}

func TestBashApprovals(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=b")

	e.send("b", "run bash", "agent")
	b := s.next("interaction.requested")
	assert.Equal(t, "tool_approval", b.Data["kind"])
	assert.Equal(t, "Bash", b.Data["tool_name"])
	assert.Equal(t, map[string]any{"command": "echo hello", "description": "Print hello"}, b.Data["tool_input"])
	assert.Equal(t, "echo hello\n# Print hello", b.Data["tool_summary"])
	assert.Equal(t, []string{"allow", "allow_session", "deny"}, labels(b))
	st, _ := e.reply(id(b), `{"answers":[["deny"]],"text":"not today"}`)
	require.Equal(t, http.StatusNoContent, st)
	r := s.resolved(id(b))
	assert.Equal(t, "rejected", r.Data["status"])
	assert.Equal(t, "deny", r.Data["decision"])
	s.saying("Bash `echo hello` denied: not today")
	s.next("agent.done")

	e.send("b", "bash", "agent")
	b = s.next("interaction.requested")
	st, _ = e.reply(id(b), `{"answers":[["allow_session"]]}`)
	require.Equal(t, http.StatusNoContent, st)
	s.saying("Bash `echo hello` allowed for the session. Output: hello")
	s.next("agent.done")

	// Allowed for the session: not asked again.
	e.send("b", "bash again", "agent")
	s.saying("Bash `echo hello` allowed. Output: hello")
	s.next("agent.done")
	assert.Empty(t, e.coord.Pending("b"))

	e.send("b", "/clear", "command")
	e.send("b", "bash", "agent")
	b = s.next("interaction.requested")
	st, _ = e.post("/api/interactions/"+id(b)+"/reject", `{"text":"no shell"}`)
	require.Equal(t, http.StatusNoContent, st)
	s.saying("Bash `echo hello` denied: The user rejected this request: no shell") // a rejection, with its reason
}

func TestCommandsAndEcho(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=h")
	e.send("h", "/help", "command")
	help := s.saying("/help")
	for _, w := range []string{"question", "plan", "bash", "edit"} {
		assert.Contains(t, str(help.Data["text"]), w)
	}
	e.send("h", "/nope", "command")
	s.saying("Unknown command /nope — try /help")
	e.send("h", "hello", "agent")
	u := s.next("message")
	assert.Contains(t, str(u.Data["text"]), "You said: ")
	d := s.next("agent.done")
	assert.Contains(t, d.Data["summary"], "Done")

	st, body := e.do("GET", "/api/chats", "")
	require.Equal(t, http.StatusOK, st)
	var chats []map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &chats))
	require.NotEmpty(t, chats)
	assert.Equal(t, "h", chats[0]["chat_id"])

	st, body = e.do("GET", "/api/info", "")
	require.Equal(t, http.StatusOK, st)
	var info map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &info))
	assert.Equal(t, "demo agent", info["agent"])
	assert.Equal(t, true, info["auth"], "the API always needs a token")
	assert.Len(t, info["boot"], 8)
}

func TestStreamingIsOneMessageUpdated(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=st")
	e.send("st", "hello world", "agent")
	u := s.next("user.message")
	assert.Equal(t, "hello world", u.Data["text"])
	first := s.next("message")
	last := s.until("message.updated", func(ev sseEvent) bool { return strings.Contains(str(ev.Data["text"]), "\"edit\" to see") })
	assert.Equal(t, first.Data["message_id"], last.Data["message_id"])
	assert.True(t, strings.HasPrefix(str(last.Data["text"]), str(first.Data["text"])))
}

func TestErrors(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=err")
	e.send("err", "question", "agent")
	q := s.next("interaction.requested")
	qid := id(q)

	cases := []struct {
		name, path, body string
		status           int
		msg              string
	}{
		{"unknown id", "/api/interactions/nope/reply", `{"answers":[["SQLite"]]}`, 404, `no such interaction: "nope"`},
		{"not an option", "/api/interactions/" + qid + "/reply", `{"answers":[["MySQL"]]}`, 400, `"MySQL" is not an option (accepted: "Postgres", "SQLite")`},
		{"two options single", "/api/interactions/" + qid + "/reply", `{"answers":[["Postgres","SQLite"]]}`, 400, "takes one option, got 2"},
		{"two lists", "/api/interactions/" + qid + "/reply", `{"answers":[["SQLite"],["Auth"]]}`, 400, "each question is its own interaction"},
		{"bad json", "/api/interactions/" + qid + "/reply", `{"answers":`, 400, "invalid JSON body"},
		{"wrong type", "/api/interactions/" + qid + "/reply", `{"answers":["SQLite"]}`, 400, "invalid JSON body"},
		{"unknown field", "/api/interactions/" + qid + "/reply", `{"answer":"SQLite"}`, 400, `unknown field "answer"`},
		{"trailing", "/api/interactions/" + qid + "/reply", `{"text":"a"} {}`, 400, "extra data"},
		{"empty body", "/api/interactions/" + qid + "/reply", ``, 400, "empty body"},
		{"nothing", "/api/interactions/" + qid + "/reply", `{"answers":[[]],"text":"  "}`, 400, "nothing to answer with"},
		{"too large", "/api/interactions/" + qid + "/reply", `{"text":"` + strings.Repeat("x", 70<<10) + `"}`, 413, "larger than 64 KiB"},
		{"toggle single", "/api/interactions/" + qid + "/toggle", `{"label":"SQLite"}`, 400, "not a multi-select question"},
		{"confirm single", "/api/interactions/" + qid + "/confirm", ``, 400, "only multi-select"},
		{"confirm body", "/api/interactions/" + qid + "/confirm", `{"x":1}`, 400, `unknown field "x"`},
		{"empty message", "/api/chats/err/messages", `{"text":"  "}`, 400, "empty message"},
		{"bad chat", "/api/chats/a%20b/messages", `{"text":"hi"}`, 400, "no spaces or control characters"},
		{"unknown route", "/api/nothing", `{}`, 404, "no such API route: POST /api/nothing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, body := e.post(tc.path, tc.body)
			require.Equal(t, tc.status, st, body)
			var eb struct{ Error string }
			require.NoError(t, json.Unmarshal([]byte(body), &eb), body)
			assert.Contains(t, eb.Error, tc.msg)
		})
	}
	st, body := e.do("GET", "/api/events?after=x-y", "")
	require.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, body, "expected <boot>-<number>")

	// Nothing above changed the question: it is still answerable, once.
	st, body = e.reply(qid, `{"answers":[["SQLite"]]}`)
	require.Equal(t, http.StatusNoContent, st, body)
	st, body = e.reply(qid, `{"answers":[["SQLite"]]}`)
	require.Equal(t, http.StatusConflict, st, body)
	assert.JSONEq(t, `{"error":"interaction is no longer pending: it was answered"}`, body)
	st, body = e.post("/api/interactions/"+qid+"/reject", "")
	require.Equal(t, http.StatusConflict, st, body)
	st, _ = e.post("/api/interactions/"+qid+"/toggle", `{"label":"Auth"}`)
	require.Equal(t, http.StatusConflict, st)

	q2 := s.next("interaction.requested")
	st, body = e.post("/api/interactions/"+id(q2)+"/confirm", "")
	require.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, body, "select at least one option")
	st, body = e.post("/api/interactions/"+id(q2)+"/toggle", `{"label":"Nope"}`)
	require.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, body, `accepted: \"Auth\", \"Search\", \"Billing\"`)

	// /stop cancels it: a late tap is refused and says so.
	e.send("err", "/stop", "command")
	s.until("interaction.resolved", func(ev sseEvent) bool { return id(ev) == id(q2) && ev.Data["status"] == "cancelled" })
	st, body = e.reply(id(q2), `{"answers":[["Auth"]]}`)
	require.Equal(t, http.StatusConflict, st)
	assert.Contains(t, body, "it was cancelled")
}

// Many taps on the same question at once: exactly one wins, every other
// gets 409, and the agent receives the winner's answer.
func TestDoubleTapsRace(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=race")
	for round := range 5 {
		e.send("race", "bash", "agent")
		b := s.next("interaction.requested")
		var wg sync.WaitGroup
		codes := make([]int, 16)
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dec := []string{`{"answers":[["allow"]]}`, `{"answers":[["deny"]],"text":"tap ` + fmt.Sprint(i) + `"}`}[i%2]
				codes[i], _ = e.reply(id(b), dec)
			}()
		}
		wg.Wait()
		won := -1
		for i, c := range codes {
			if c == http.StatusNoContent {
				require.Equal(t, -1, won, "round %d: two taps won: %v", round, codes)
				won = i
			} else {
				require.Equal(t, http.StatusConflict, c, "round %d: %v", round, codes)
			}
		}
		require.NotEqual(t, -1, won, "round %d: no tap won: %v", round, codes)
		r := s.resolved(id(b))
		if won%2 == 0 {
			assert.Equal(t, "allow", r.Data["decision"])
			s.saying("Bash `echo hello` allowed. Output: hello")
		} else {
			assert.Equal(t, fmt.Sprintf("tap %d", won), r.Data["text"])
			s.saying(fmt.Sprintf("Bash `echo hello` denied: tap %d", won))
		}
		s.next("agent.done")
	}
}

// A tap racing the answer timeout: either the tap wins (204, the agent
// runs the command) or the timeout does (409, the agent is told nobody
// answered) — never both, never neither.
func TestTapRacesTimeout(t *testing.T) {
	e := start(t, setup{coordOpts: []interactions.Opt{interactions.WithTimeout(15 * time.Millisecond)}})
	s := e.subscribe("?chat=to")
	won := map[int]int{}
	for i := range 20 {
		e.send("to", "bash", "agent")
		b := s.next("interaction.requested")
		time.Sleep(time.Duration(i) * time.Millisecond)
		st, body := e.reply(id(b), `{"answers":[["allow"]]}`)
		won[st]++
		r := s.resolved(id(b))
		switch st {
		case http.StatusNoContent:
			assert.Equal(t, "answered", r.Data["status"])
			s.saying("Bash `echo hello` allowed. Output: hello")
		case http.StatusConflict:
			assert.Contains(t, body, "it was expired")
			assert.Equal(t, "expired", r.Data["status"])
			s.saying("Bash `echo hello` denied: No answer came within 15ms")
		default:
			t.Fatalf("status %d: %s", st, body)
		}
		s.next("agent.done")
	}
	t.Logf("outcomes: %v", won)
}

// Taps racing /stop: the tap either lands (204) or finds the interaction
// cancelled (409).
func TestTapRacesStop(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=rs")
	for range 10 {
		e.send("rs", "bash", "agent")
		b := s.next("interaction.requested")
		var wg sync.WaitGroup
		var st int
		wg.Add(2)
		go func() { defer wg.Done(); st, _ = e.reply(id(b), `{"answers":[["allow"]]}`) }()
		go func() { defer wg.Done(); e.send("rs", "/stop", "command") }()
		wg.Wait()
		r := s.until("interaction.resolved", func(ev sseEvent) bool { return id(ev) == id(b) })
		if st == http.StatusNoContent {
			assert.Equal(t, "answered", r.Data["status"])
		} else {
			require.Equal(t, http.StatusConflict, st)
			assert.Equal(t, "cancelled", r.Data["status"])
		}
		s.until("agent.done", func(sseEvent) bool { return true })
	}
}

func TestAuth(t *testing.T) {
	health := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mounted := mounter{}
	e := start(t, setup{token: "s3cret",
		routes: map[string]http.Handler{"GET /healthz": health}, mounts: []connectors.Mounter{mounted},
	})

	get := func(path string, hdr ...string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", e.url+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return resp, b.String()
	}

	resp, body := get("/api/info")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, body, "a token is required: send Authorization: Bearer <token>, or open /?token=<token> in the browser")
	assert.Contains(t, body, "the token is LEASHD_WEB_TOKEN")
	resp, body = get("/api/info", "Authorization", "Bearer wrong")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.JSONEq(t, `{"error":"wrong bearer token"}`, body)
	resp, body = get("/api/info", "Authorization", "Basic czNjcmV0")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, body, "unsupported Authorization scheme")
	resp, body = get("/api/info", "Authorization", "Bearer s3cret")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `"auth":true`)
	resp, _ = get("/api/events", "Cookie", "leashd_token=nope")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	st, _ := e.do("POST", "/api/chats/x/messages", `{"text":"hi"}`)
	assert.Equal(t, http.StatusAccepted, st, "the env's bearer token")

	// The page itself carries no secret; ?token= sets the cookie.
	resp, body = get("/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "<title>leashd</title>")
	resp, _ = get("/?token=wrong")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, _ = get("/?token=s3cret")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/", resp.Header.Get("Location"))
	ck := resp.Cookies()
	require.Len(t, ck, 1)
	assert.Equal(t, "leashd_token", ck[0].Name)
	assert.True(t, ck[0].HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, ck[0].SameSite)
	assert.Equal(t, "/", ck[0].Path)
	assert.False(t, ck[0].Secure, "plain HTTP: a Secure cookie would never come back")
	resp, _ = get("/api/info", "Cookie", "leashd_token="+ck[0].Value)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = get("/?token=s3cret", "X-Forwarded-Proto", "https")
	require.Len(t, resp.Cookies(), 1)
	assert.True(t, resp.Cookies()[0].Secure, "behind an HTTPS proxy the cookie is Secure")

	// Routes for probes and mounted endpoints need no token.
	resp, body = get("/healthz")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok", body)
	resp, body = get("/hook")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "mounted", body)

	// Another site's page cannot use the cookie to post.
	st, body = e.do("POST", "/api/chats/x/messages", `{"text":"hi"}`, "Origin", "https://evil.example")
	assert.Equal(t, http.StatusForbidden, st)
	assert.Contains(t, body, "cross-origin request from")
	st, _ = e.do("POST", "/api/chats/x/messages", `{"text":"hi"}`, "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, st)
	st, _ = e.do("POST", "/api/chats/x/messages", `{"text":"hi"}`, "Origin", e.url)
	assert.Equal(t, http.StatusAccepted, st)
}

// Every API request needs the token, on loopback too: an agent leashd
// started runs on this machine as leashd's user, and must not answer the
// requests it waits on. The 401 says where the token is.
func TestLoopbackNeedsTheToken(t *testing.T) {
	e := start(t, setup{})
	for _, host := range []string{"localhost:8080", "127.0.0.1", "[::1]:80", "LOCALHOST", "evil.example"} {
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/api/info", ""}, {"GET", "/api/interactions", ""},
			{"POST", "/api/interactions/x/reply", `{"answers":[["allow"]]}`}, {"POST", "/api/chats/c/messages", `{"text":"hi"}`},
		} {
			req, err := http.NewRequest(r.method, e.url+r.path, strings.NewReader(r.body))
			require.NoError(t, err)
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s %s for %s: %s", r.method, r.path, host, b)
			assert.Contains(t, string(b), "a token is required")
		}
	}
	st, _ := e.do("GET", "/api/info", "")
	assert.Equal(t, http.StatusOK, st, "with the token")
}

// A connector given no token answers no API request at all.
func TestNoTokenNothingAnswered(t *testing.T) {
	srv := httptest.NewServer(web.New().Handler())
	defer srv.Close()
	for _, tok := range []string{"", "anything"} {
		req, err := http.NewRequest("GET", srv.URL+"/api/info", nil)
		require.NoError(t, err)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		assert.Contains(t, string(b), "this server has no API token")
	}
	resp, err := http.Get(srv.URL + "/?token=anything")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no cookie for any token")
}

// A generated token: the 401 names the file it is kept in.
func TestGeneratedTokenNamesItsFile(t *testing.T) {
	e := start(t, setup{webOpts: []web.Option{web.WithTokenFile("/state/web-token")}})
	st, _, body := e.request(t, "GET", "/api/info", "", "")
	assert.Equal(t, http.StatusUnauthorized, st)
	assert.Contains(t, body, "the token is in /state/web-token")
	assert.Contains(t, body, "leashd ask and leashd mcp read it there")
}

type mounter struct{}

func (mounter) Mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /hook", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("mounted")) })
}

// The page watches every connector's chats and can answer them.
func TestWatchesOtherConnectorsChats(t *testing.T) {
	tg := &otherConn{}
	e := start(t, setup{extra: []connectors.Connector{tg}})
	s := e.subscribe("") // every chat
	_, err := e.eng.HandleMessage(context.Background(), connectors.Incoming{ChatID: "telegram:42", UserID: "7", Text: "bash"})
	require.NoError(t, err)
	b := s.next("interaction.requested")
	assert.Equal(t, "telegram:42", b.Data["chat_id"])
	st, _ := e.reply(id(b), `{"answers":[["allow"]]}`)
	require.Equal(t, http.StatusNoContent, st)
	s.saying("Bash `echo hello` allowed")
	tg.mu.Lock()
	assert.Equal(t, []string{id(b)}, tg.shown, "the owner showed it too")
	tg.mu.Unlock()

	// A stream for another chat sees none of it.
	other := e.subscribe("?chat=web-only")
	e.send("web-only", "hi", "agent")
	first := other.next("user.message")
	assert.Equal(t, "web-only", first.Data["chat_id"])
}

// A page that reconnects gets what it missed; a page from before a restart
// (another boot) gets everything kept.
func TestReplayAfterReconnect(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=r")
	e.send("r", "hello", "agent")
	mid := s.next("user.message")
	done := s.next("agent.done")

	again := e.subscribe("?chat=r", "Last-Event-ID", mid.ID)
	assert.Equal(t, "message", again.next("message").Name)
	assert.Equal(t, done.Raw, again.next("agent.done").Raw)

	all := e.subscribe("?chat=r&after=0")
	assert.Equal(t, mid.Raw, all.next("user.message").Raw)
	old := e.subscribe("?chat=r", "Last-Event-ID", "deadbeef-99999")
	assert.Equal(t, mid.Raw, old.next("user.message").Raw)
	other := e.subscribe("?after=0&chat=none")
	e.send("none", "x", "agent")
	assert.Equal(t, "x", other.next("user.message").Data["text"], "nothing of chat r replayed first")
}

func TestHeartbeat(t *testing.T) {
	e := start(t, setup{webOpts: []web.Option{web.WithHeartbeat(10 * time.Millisecond)}})
	s := e.subscribe("")
	select {
	case l := <-s.lines:
		assert.Equal(t, ": heartbeat", l)
	case <-time.After(5 * time.Second):
		t.Fatal("no heartbeat")
	}
}

// Run returns promptly on cancel even with an event stream open, and the
// stream ends.
func TestShutdownWithOpenStream(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("")
	e.send("sd", "question", "agent")
	s.next("interaction.requested")
	t0 := time.Now()
	e.stop()
	t.Logf("shutdown took %s", time.Since(t0))
	for range s.events { // the stream ends
	}
	require.Error(t, e.web.Ready())
}

// Many chats at once through the API: each gets its own questions and its
// own report, nothing crosses over.
func TestManyChatsAtOnce(t *testing.T) {
	e := start(t, setup{})
	const n = 24
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chat := fmt.Sprintf("many-%d", i)
			s := e.subscribe("?chat=" + chat)
			e.send(chat, "question", "agent")
			q1 := s.next("interaction.requested")
			assert.Equal(t, chat, q1.Data["chat_id"])
			db := []string{"Postgres", "SQLite"}[i%2]
			st, _ := e.reply(id(q1), `{"answers":[["`+db+`"]]}`)
			assert.Equal(t, http.StatusNoContent, st)
			q2 := s.next("interaction.requested")
			st, _ = e.reply(id(q2), `{"text":"feature `+chat+`"}`)
			assert.Equal(t, http.StatusNoContent, st)
			s.saying(fmt.Sprintf(`Which database? %s; Which features? feature %s`, db, chat))
		}()
	}
	wg.Wait()
	assert.Zero(t, e.coord.PendingCount())
}

// After a crash (a real SQLite file), a request left pending is shown
// again, marked interrupted, and its buttons keep working: the answer
// reaches the agent as its next prompt.
func TestInterruptedRequestAnswerableAfterCrash(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leashd.db")
	e := start(t, setup{db: db, crash: true})
	s := e.subscribe("?chat=rr")
	e.send("rr", "bash", "agent")
	b := s.next("interaction.requested")
	e.stop()

	e2 := start(t, setup{db: db})
	s2 := e2.subscribe("?chat=rr&after=0")
	again := s2.next("interaction.requested")
	assert.Equal(t, id(b), id(again))
	assert.Equal(t, true, again.Data["interrupted"])
	assert.Equal(t, "leashd restarted — tap again to send this answer to the agent", again.Data["notice"], "the page says the buttons still work")
	_, body := e2.do("GET", "/api/interactions?chat=rr", "")
	var pending []map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &pending))
	require.Len(t, pending, 1)
	assert.Equal(t, true, pending[0]["interrupted"])

	st, body := e2.reply(id(b), `{"answers":[["allow"]]}`)
	require.Equal(t, http.StatusNoContent, st, body)
	r := s2.resolved(id(b))
	assert.Equal(t, "answered", r.Data["status"])
	s2.saying("Got your answer from before leashd restarted: The user allowed it.")
	st, body = e2.reply(id(b), `{"answers":[["allow"]]}`)
	require.Equal(t, http.StatusConflict, st, "a second tap: %s", body)
	_, body = e2.do("GET", "/api/interactions?chat=rr", "")
	assert.JSONEq(t, `[]`, body)
}

// After a clean restart the old request's ID still takes an answer.
func TestAnswerAfterCleanRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leashd.db")
	e := start(t, setup{db: db})
	s := e.subscribe("?chat=cr")
	e.send("cr", "question", "agent")
	q := s.next("interaction.requested")
	e.stop()

	e2 := start(t, setup{db: db})
	s2 := e2.subscribe("?chat=cr")
	st, body := e2.reply(id(q), `{"answers":[["Postgres"]]}`)
	require.Equal(t, http.StatusNoContent, st, body)
	s2.saying(`Got your answer from before leashd restarted: The user answered: "Postgres".`)
	st, _ = e2.reply(id(q), `{"answers":[["SQLite"]]}`)
	require.Equal(t, http.StatusConflict, st)
}

// Toggles racing a confirm on the same multi-select question: the confirm
// either finds something selected (204) or not (400), or comes after
// another confirm (409); the resolved answer is exactly a selection that
// existed, and the agent reports that answer.
func TestTogglesRaceConfirm(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("?chat=tc")
	for range 8 {
		e.send("tc", "question", "agent")
		q1 := s.next("interaction.requested")
		st, _ := e.reply(id(q1), `{"answers":[["SQLite"]]}`)
		require.Equal(t, http.StatusNoContent, st)
		q2 := s.until("interaction.requested", func(ev sseEvent) bool { return ev.Data["header"] == "Features" })
		var wg sync.WaitGroup
		confirms := make([]int, 3)
		for i, label := range []string{"Auth", "Search", "Billing", "Auth"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, body := e.post("/api/interactions/"+id(q2)+"/toggle", `{"label":"`+label+`"}`)
				assert.Contains(t, []int{http.StatusOK, http.StatusConflict}, st, "toggle %d: %s", i, body)
			}()
		}
		for i := range confirms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				confirms[i], _ = e.post("/api/interactions/"+id(q2)+"/confirm", "")
			}()
		}
		wg.Wait()
		won := 0
		for _, c := range confirms {
			require.Contains(t, []int{http.StatusNoContent, http.StatusBadRequest, http.StatusConflict}, c)
			if c == http.StatusNoContent {
				won++
			}
		}
		if won == 0 { // every confirm came before any toggle: confirm now
			st, body := e.post("/api/interactions/"+id(q2)+"/confirm", "")
			require.Equal(t, http.StatusNoContent, st, body)
			won = 1
		}
		require.Equal(t, 1, won, "exactly one confirm resolves it: %v", confirms)
		r := s.resolved(id(q2))
		answer := str(r.Data["answer"])
		require.NotEmpty(t, answer)
		for _, part := range strings.Split(answer, ", ") {
			require.Contains(t, []string{"Auth", "Search", "Billing"}, part)
		}
		s.saying("Which features? " + answer)
		s.next("agent.done")
	}
}

// A multi-select question pending at a restart works through the API as
// before it: toggle and confirm are accepted after the restart (they were
// 404), the selection is kept across a second restart, the request is
// listed once with its selection, and confirm sends every checked option.
func TestMultiSelectAfterRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leashd.db")
	e := start(t, setup{db: db})
	s := e.subscribe("?chat=ms")
	e.send("ms", "question", "agent")
	q1 := s.next("interaction.requested")
	st, body := e.reply(id(q1), `{"answers":[["SQLite"]]}`)
	require.Equal(t, http.StatusNoContent, st, body)
	q2 := s.until("interaction.requested", func(ev sseEvent) bool { return ev.Data["header"] == "Features" })
	st, body = e.post("/api/interactions/"+id(q2)+"/toggle", `{"label":"Auth"}`)
	require.Equal(t, http.StatusOK, st, body)
	e.stop()

	e2 := start(t, setup{db: db})
	st, body = e2.post("/api/interactions/"+id(q2)+"/toggle", `{"label":"Search"}`)
	require.Equal(t, http.StatusOK, st, "toggle after a restart: %s", body)
	assert.JSONEq(t, `{"selected":["Auth","Search"]}`, body, "the selection from before the restart is kept")
	e2.stop() // a second restart

	e3 := start(t, setup{db: db})
	s3 := e3.subscribe("?chat=ms")
	_, body = e3.do("GET", "/api/interactions?chat=ms", "")
	var pending []map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &pending))
	require.Len(t, pending, 1, "listed once: %s", body)
	assert.Equal(t, []any{"Auth", "Search"}, pending[0]["selected"])
	st, body = e3.post("/api/interactions/"+id(q2)+"/confirm", "")
	require.Equal(t, http.StatusNoContent, st, "confirm after a restart: %s", body)
	r := s3.resolved(id(q2))
	assert.Equal(t, "Auth, Search", r.Data["answer"])
	s3.saying(`The user answered: "Auth, Search"`)
	st, _ = e3.post("/api/interactions/"+id(q2)+"/confirm", "")
	require.Equal(t, http.StatusConflict, st, "answered once")
}
