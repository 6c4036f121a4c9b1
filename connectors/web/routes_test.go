package web_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// errorOf checks that body is a JSON error and returns its message.
func errorOf(t *testing.T, hdr http.Header, body string) string {
	t.Helper()
	assert.Equal(t, "application/json", hdr.Get("Content-Type"))
	var eb struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &eb), "not JSON: %s", body)
	require.NotEmpty(t, eb.Error, body)
	return eb.Error
}

// A reply to an interaction that expired is refused with 409 and says so;
// the timeout, not a race, decides: the reply is sent only after the
// expiry was published.
func TestReplyAfterExpiryIsAConflict(t *testing.T) {
	e := start(t, setup{coordOpts: []interactions.Opt{interactions.WithTimeout(100 * time.Millisecond)}})
	s := e.subscribe("?chat=exp")
	e.send("exp", "bash", "agent")
	req := s.next("interaction.requested")
	r := s.resolved(id(req))
	require.Equal(t, "expired", r.Data["status"])
	s.saying("Bash `echo hello` denied: No answer came within 100ms; the user did not respond.")

	for _, c := range []struct{ route, body string }{
		{"reply", `{"answers":[["allow"]]}`},
		{"reply", `{"text":"too late"}`},
		{"reject", ``},
	} {
		st, body := e.post("/api/interactions/"+id(req)+"/"+c.route, c.body)
		require.Equal(t, http.StatusConflict, st, "%s %s: %s", c.route, c.body, body)
		assert.JSONEq(t, `{"error":"interaction is no longer pending: it was expired"}`, body)
	}
}

// apiRoute is one route of the HTTP API, with a request that would
// succeed given the token.
type apiRoute struct {
	method, pattern, path, body string
}

// TestEveryAPIRouteNeedsTheToken: with a token set, every /api route
// answers 401 and a JSON error without it — including the catch-all for
// unknown routes — and the routes that take an interaction ID answer 404
// with a JSON error for an ID nobody knows.
func TestEveryAPIRouteNeedsTheToken(t *testing.T) {
	e := start(t, setup{token: "s3cret"})
	routes := []apiRoute{
		{"GET", "GET /api/info", "/api/info", ""},
		{"GET", "GET /api/events", "/api/events?chat=a", ""},
		{"GET", "GET /api/chats", "/api/chats", ""},
		{"POST", "POST /api/chats/{chat}/messages", "/api/chats/a/messages", `{"text":"hi"}`},
		{"POST", "POST /api/chats/{chat}/files", "/api/chats/a/files", `{"text":"hi"}`},
		{"GET", "GET /api/files/{id}", "/api/files/nope", ""},
		{"GET", "GET /api/interactions", "/api/interactions?chat=a", ""},
		{"POST", "POST /api/interactions/{id}/reply", "/api/interactions/nope/reply", `{"answers":[["allow"]]}`},
		{"POST", "POST /api/interactions/{id}/toggle", "/api/interactions/nope/toggle", `{"label":"Auth"}`},
		{"POST", "POST /api/interactions/{id}/confirm", "/api/interactions/nope/confirm", ``},
		{"POST", "POST /api/interactions/{id}/reject", "/api/interactions/nope/reject", ``},
		{"POST", "POST /api/interactions", "/api/interactions", `{"chat_id":"a","question":"Go?"}`},
		{"GET", "GET /api/interactions/{id}", "/api/interactions/nope", ""},
		{"DELETE", "DELETE /api/interactions/{id}", "/api/interactions/nope", ""},
		{"GET", "/api/", "/api/nothing", ""},
		{"GET", "GET /api/away", "/api/away?chat=a", ""},
		{"POST", "POST /api/away", "/api/away", `{"chat_id":"a","away":true}`},
		{"POST", "POST /api/away/notice", "/api/away/notice", `{"chat_id":"a","text":"waiting"}`},
		{"POST", "POST /api/away/activity", "/api/away/activity", `{"chat_id":"a"}`},
	}

	// The table is every route api.go registers behind the token.
	src, err := os.ReadFile("api.go")
	require.NoError(t, err)
	var registered, tested []string
	for _, m := range regexp.MustCompile(`\bapi\("([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		registered = append(registered, m[1])
	}
	for _, r := range routes {
		tested = append(tested, r.pattern)
	}
	slices.Sort(registered)
	slices.Sort(tested)
	require.Equal(t, registered, tested, "a route was added or removed: test it here")

	for _, r := range routes {
		t.Run(r.pattern, func(t *testing.T) {
			st, hdr, b := e.request(t, r.method, r.path, r.body, "")
			require.Equal(t, http.StatusUnauthorized, st, b)
			assert.Contains(t, errorOf(t, hdr, b), "a token is required: send Authorization: Bearer <token>")
		})
	}

	for _, route := range []string{"reply", "reject", "toggle", "confirm"} {
		t.Run("unknown id "+route, func(t *testing.T) {
			var body string
			for _, r := range routes {
				if strings.HasSuffix(r.pattern, "/"+route) {
					body = r.body
				}
			}
			st, hdr, b := e.request(t, "POST", "/api/interactions/nope/"+route, body, "s3cret")
			require.Equal(t, http.StatusNotFound, st, b)
			assert.Equal(t, `no such interaction: "nope"`, errorOf(t, hdr, b))
		})
	}
}
