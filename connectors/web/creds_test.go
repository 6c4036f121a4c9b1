package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/interactions"
)

const (
	ciToken  = "ci-t0ken-8d2f1b7a9e3c"
	cdToken  = "cd-t0ken-1a2b3c4d5e6f"
	opsToken = "ops-t0ken-9f8e7d6c5b4a"
)

// scoped starts leashd with the page's token and three programs': ci asks
// in web:ci-*, cd in web:cd, ops asks and answers in web:ci-*.
func scoped(t *testing.T, perSecond float64, burst int, opts ...interactions.Opt) *env {
	toks, err := config.ParseAPITokens("ci:" + ciToken + ":ask=web:ci-* cd:" + cdToken + ":ask=web:cd ops:" + opsToken + ":ask=web:ci-*,answer")
	require.NoError(t, err)
	cs := web.NewCredentials(harnessToken, "", toks, perSecond, burst)
	return start(t, setup{webOpts: []web.Option{web.WithCredentials(cs)}, coordOpts: opts})
}

func (e *env) as(token, method, path, body string) (int, string) {
	e.t.Helper()
	st, _, b := e.request(e.t, method, path, body, token)
	return st, b
}

func (e *env) askAs(token, chat string) string {
	e.t.Helper()
	st, b := e.as(token, "POST", "/api/interactions", `{"chat_id":"`+chat+`","question":"Deploy?","options":[{"label":"Yes"},{"label":"No"}]}`)
	require.Equal(e.t, http.StatusCreated, st, b)
	var r struct {
		ID string `json:"interaction_id"`
	}
	require.NoError(e.t, json.Unmarshal([]byte(b), &r))
	return r.ID
}

// An ask token asks only in its chats, reads and withdraws only what it
// asked, lists only its own, and answers nothing; the page's token still
// does everything.
func TestScopedTokenAsksOnlyInItsChatsAndSeesOnlyItsOwn(t *testing.T) {
	e := scoped(t, 0, 0)

	st, b := e.as(ciToken, "POST", "/api/interactions", `{"chat_id":"web:prod","question":"Deploy?"}`)
	assert.Equal(t, http.StatusForbidden, st, b)
	assert.Contains(t, b, `the token \"ci\" may not ask in chat \"web:prod\": its scope (LEASHD_API_TOKENS) is ask=web:ci-*`)

	mine := e.askAs(ciToken, "web:ci-1")
	theirs := e.askAs(cdToken, "web:cd")
	page := e.askAs(e.token, "web:ci-1")

	// Reading and withdrawing another program's request: refused.
	for _, m := range []string{"GET", "DELETE"} {
		st, b = e.as(ciToken, m, "/api/interactions/"+theirs, "")
		assert.Equal(t, http.StatusForbidden, st, m+" "+b)
		assert.Contains(t, b, "another program asked it")
	}
	st, b = e.as(ciToken, "GET", "/api/interactions/"+page, "")
	assert.Equal(t, http.StatusForbidden, st, "the page's request in its own chat: "+b)
	st, b = e.as(ciToken, "GET", "/api/interactions/"+mine, "")
	assert.Equal(t, http.StatusOK, st, b)
	assert.Contains(t, b, `"status":"pending"`)

	// Listing: only its own.
	st, b = e.as(ciToken, "GET", "/api/interactions", "")
	require.Equal(t, http.StatusOK, st, b)
	assert.Contains(t, b, mine)
	assert.NotContains(t, b, theirs)
	assert.NotContains(t, b, page)

	// Answering, even its own: refused; so are the event stream, the chat
	// list and messages.
	for _, path := range []string{"reply", "confirm", "reject"} {
		st, b = e.as(ciToken, "POST", "/api/interactions/"+mine+"/"+path, `{"answers":[["Yes"]]}`)
		assert.Equal(t, http.StatusForbidden, st, path+" "+b)
		assert.Contains(t, b, "may not answer")
	}
	for _, r := range [][3]string{{"GET", "/api/events", ""}, {"GET", "/api/chats", ""}, {"POST", "/api/chats/web:ci-1/messages", `{"text":"hi"}`}} {
		st, b = e.as(ciToken, r[0], r[1], r[2])
		assert.Equal(t, http.StatusForbidden, st, r[1]+" "+b)
	}

	// Its own: withdrawn, and the outcome says by whom.
	st, b = e.as(ciToken, "DELETE", "/api/interactions/"+mine, "")
	require.Equal(t, http.StatusNoContent, st, b)
	st, b = e.as(ciToken, "GET", "/api/interactions/"+mine, "")
	require.Equal(t, http.StatusOK, st, b)
	assert.Contains(t, b, "Withdrawn by ci")

	// The page's token does everything: reads, answers and withdraws
	// every program's request.
	st, b = e.as(e.token, "GET", "/api/interactions/"+theirs, "")
	assert.Equal(t, http.StatusOK, st, b)
	st, b = e.reply(theirs, `{"answers":[["Yes"]]}`)
	assert.Equal(t, http.StatusNoContent, st, b)
	st, b = e.as(e.token, "DELETE", "/api/interactions/"+page, "")
	assert.Equal(t, http.StatusNoContent, st, b)
}

// A token whose scope says answer answers in its chats, as itself, and
// nowhere else.
func TestAnswerTokenAnswersInItsChatsAsItself(t *testing.T) {
	e := scoped(t, 0, 0)
	ci := e.askAs(ciToken, "web:ci-7")
	cd := e.askAs(cdToken, "web:cd")

	st, b := e.as(opsToken, "GET", "/api/interactions?chat=web:ci-7", "")
	require.Equal(t, http.StatusOK, st, b)
	assert.Contains(t, b, ci)
	st, b = e.as(opsToken, "GET", "/api/chats?chat=web:ci-7", "")
	assert.Equal(t, http.StatusForbidden, st, "the chat list names every chat: "+b)
	st, b = e.as(opsToken, "POST", "/api/interactions/"+cd+"/reply", `{"answers":[["Yes"]]}`)
	assert.Equal(t, http.StatusForbidden, st, b)
	assert.Contains(t, b, `may not answer in chat \"web:cd\"`)

	st, b = e.as(opsToken, "POST", "/api/interactions/"+ci+"/reply", `{"answers":[["Yes"]]}`)
	require.Equal(t, http.StatusNoContent, st, b)
	st, b = e.as(ciToken, "GET", "/api/interactions/"+ci+"?wait=5", "")
	require.Equal(t, http.StatusOK, st, b)
	assert.Contains(t, b, `"by":"ops"`)
}

// Each credential's POSTs are paced: past its burst, 429 with Retry-After
// naming the limit; another credential still posts.
func TestPostsArePacedPerCredential(t *testing.T) {
	e := scoped(t, 0.001, 2)
	e.askAs(ciToken, "web:ci-1")
	e.askAs(ciToken, "web:ci-2")
	st, h, b := e.request(t, "POST", "/api/interactions", `{"chat_id":"web:ci-3","question":"Deploy?"}`, ciToken)
	assert.Equal(t, http.StatusTooManyRequests, st, b)
	assert.NotEmpty(t, h.Get("Retry-After"))
	assert.Contains(t, b, `too many requests from the token \"ci\"`)
	assert.Contains(t, b, "LEASHD_API_RATE")
	e.askAs(cdToken, "web:cd")
	e.askAs(e.token, "web:x")
}

// A program's request beyond the pending cap gets 429 naming the cap and
// its variable.
func TestAskBeyondThePendingCapIs429(t *testing.T) {
	e := scoped(t, 0, 0, interactions.WithCaps(interactions.Caps{PerChat: 1, PerChatSetting: "LEASHD_API_MAX_PENDING_PER_CHAT"}))
	e.askAs(ciToken, "web:ci-1")
	st, h, b := e.request(t, "POST", "/api/interactions", `{"chat_id":"web:ci-1","question":"Again?"}`, ciToken)
	assert.Equal(t, http.StatusTooManyRequests, st, b)
	assert.Contains(t, b, "LEASHD_API_MAX_PENDING_PER_CHAT")
	assert.NotEmpty(t, h.Get("Retry-After"))
}

// GET /api/interactions?limit=N pages through what is pending, oldest
// first, each page's next leading to the following one.
func TestListInteractionsIsPaged(t *testing.T) {
	e := scoped(t, 0, 0)
	var want []string
	for range 5 {
		want = append(want, e.askAs(e.token, "web:pages"))
	}
	var got []string
	path := "/api/interactions?limit=2"
	for pages := 0; ; pages++ {
		require.Less(t, pages, 4)
		st, b := e.do("GET", path, "")
		require.Equal(t, http.StatusOK, st, b)
		var p struct {
			Interactions []struct {
				ID string `json:"interaction_id"`
			} `json:"interactions"`
			Next string `json:"next"`
		}
		require.NoError(t, json.Unmarshal([]byte(b), &p))
		for _, it := range p.Interactions {
			got = append(got, it.ID)
		}
		if p.Next == "" {
			break
		}
		path = "/api/interactions?limit=2&cursor=" + p.Next
	}
	assert.ElementsMatch(t, want, got)
	assert.Len(t, got, 5)
	st, b := e.do("GET", "/api/interactions?limit=0", "")
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, b, "from 1 to 1000")
	st, b = e.do("GET", "/api/interactions?cursor=nope", "")
	assert.Equal(t, http.StatusBadRequest, st)
	assert.True(t, strings.Contains(b, "is not a cursor"), b)
}
