package slack_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/slack"
	"github.com/leashd/leashd/connectors/slack/slackfake"
)

func TestHTTPModeURLVerification(t *testing.T) {
	e := start(t, envOpt{httpMode: true})
	body := []byte(`{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)
	resp := e.rawSigned(slack.EventsPath, body, time.Now(), signingSecret)
	assert.Equal(t, http.StatusOK, resp.code)
	assert.Equal(t, "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", resp.body)
}

func TestHTTPModeSignaturesChecked(t *testing.T) {
	e := start(t, envOpt{httpMode: true})
	ev := slackfake.EventCallback("EvBad", slackfake.MessageEvent("D1", "im", allowedUser, e.nextTS(), "", "forged"))
	body, _ := json.Marshal(ev)
	for name, tc := range map[string]struct {
		secret string
		at     time.Time
	}{
		"wrong secret":        {"not-the-secret", time.Now()},
		"stale timestamp":     {signingSecret, time.Now().Add(-6 * time.Minute)},
		"timestamp in future": {signingSecret, time.Now().Add(10 * time.Minute)},
	} {
		resp := e.rawSigned(slack.EventsPath, body, tc.at, tc.secret)
		assert.Equal(t, http.StatusUnauthorized, resp.code, name)
		assert.Contains(t, resp.body, "invalid Slack signature", name)
	}
	// No signature at all, and a body altered after signing.
	resp, err := http.Post(e.http.URL+slack.EventsPath, "application/json", strings.NewReader(string(body)))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	tap := url.Values{"payload": {`{"type":"block_actions"}`}}.Encode()
	for _, path := range []string{slack.InteractionsPath, slack.CommandsPath} {
		r := e.rawSigned(path, []byte(tap), time.Now(), "wrong")
		assert.Equal(t, http.StatusUnauthorized, r.code, path)
	}
	e.settle()
	assert.Empty(t, e.agent.Prompts(), "nothing processed")
	assert.Empty(t, e.fake.Messages(""))
}

func TestHTTPModeEndToEnd(t *testing.T) {
	e := start(t, envOpt{httpMode: true})
	// A mention in a channel, delivered twice (app_mention and message),
	// plus Slack's retry of the first delivery.
	ts := e.nextTS()
	full := "<@" + slackfake.BotUserID + "> plan"
	mention := slackfake.EventCallback("EvM", slackfake.MentionEvent("C1", allowedUser, ts, "", full))
	e.deliver("events_api", mention, 0)
	e.deliver("events_api", slackfake.EventCallback("EvMsg", slackfake.MessageEvent("C1", "channel", allowedUser, ts, "", full)), 0)
	e.deliver("events_api", mention, 1)
	btn := e.waitButtons("C1", "Plan review")
	assert.Equal(t, ts, btn.ThreadTS)
	e.tap(stranger, btn, "Approve, fresh session (recommended)")
	e.waitEphemeral(stranger, "only approvers")
	e.tap(approverUser, btn, "Approve, review edits")
	r := e.agent.WaitResponses(t, 1)
	assert.True(t, r[0].Allow)
	e.waitText("C1", "✅ *Approve, review edits* — <@U2>")
	assert.Equal(t, []string{"plan"}, e.agent.Prompts())

	e.deliver("slash_commands", slackfake.SlashCommand("C1", allowedUser, "status"), 0)
	st := e.waitText("C1", "Pending: nothing") // /status of the thread's session
	assert.Equal(t, ts, st.ThreadTS)
}

func TestHTTPModeAcksBeforeWork(t *testing.T) {
	e := start(t, envOpt{httpMode: true})
	// Every Web API call stalls on 429s for a few seconds; the request is
	// still answered at once.
	e.fake.RateLimit("chat.postMessage", 2, 2)
	ev := slackfake.EventCallback("EvSlow", slackfake.MessageEvent("D1", "im", allowedUser, e.nextTS(), "", "hello"))
	body, _ := json.Marshal(ev)
	resp := e.rawSigned(slack.EventsPath, body, time.Now(), signingSecret)
	assert.Equal(t, http.StatusOK, resp.code)
	assert.Empty(t, posted(e), "answered before the work (stalled ≥ 4 s by 429s) was done")
	e.waitText("D1", "echo: hello")
	assert.Equal(t, int64(2), e.stats.limited.Load())
}

type rawResp struct {
	code int
	body string
}

func (e *env) rawSigned(path string, body []byte, at time.Time, secret string) rawResp {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.http.URL+path, strings.NewReader(string(body)))
	require.NoError(e.t, err)
	h := signHeaders(body, at, secret)
	for k, v := range h {
		req.Header[k] = v
	}
	if path == slack.EventsPath {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResp{resp.StatusCode, string(b)}
}

// posted lists the successful chat.postMessage calls.
func posted(e *env) []slackfake.Call {
	var out []slackfake.Call
	for _, c := range e.fake.Calls("chat.postMessage") {
		if c.Status == http.StatusOK {
			out = append(out, c)
		}
	}
	return out
}

func TestSocketModeAcksBeforeWork(t *testing.T) {
	e := start(t, envOpt{})
	e.fake.RateLimit("chat.postMessage", 2, 2)
	env, err := e.fake.Push("events_api", slackfake.EventCallback("EvS", slackfake.MessageEvent("D1", "im", allowedUser, e.nextTS(), "", "hello")), 0)
	require.NoError(t, err)
	require.True(t, e.fake.WaitFor(wait, func() bool { _, ok := e.fake.Acked(env); return ok }))
	assert.Empty(t, posted(e), "acknowledged before the work (stalled ≥ 4 s by 429s) was done")
	d, _ := e.fake.AckDelay(env)
	assert.Less(t, d, ackDeadline, "within Slack's 3 s although the work takes longer")
	e.waitText("D1", "echo: hello")
}

func TestHTTPModeMalformedRequests(t *testing.T) {
	e := start(t, envOpt{httpMode: true})
	for _, tc := range []struct{ path, body, want string }{
		{slack.EventsPath, `{not json`, "not an Events API payload"},
		{slack.InteractionsPath, `nopayload=1`, "expected a form with a payload field"},
		{slack.InteractionsPath, url.Values{"payload": {"[1,2"}}.Encode(), "payload is not an interaction"},
	} {
		r := e.rawSigned(tc.path, []byte(tc.body), time.Now(), signingSecret)
		assert.Equal(t, http.StatusBadRequest, r.code, tc.path)
		assert.Contains(t, r.body, tc.want, tc.path)
	}
	e.settle()
	assert.Empty(t, e.fake.Messages(""))
}

// A question Slack refused to show is not answered for anyone: it stays
// pending, the operator's log says why (without secrets), it is shown again
// in the background, and a tap then answers it.
func TestSlackErrorIsRetriedNeverAnAnswer(t *testing.T) {
	e := start(t, envOpt{})
	e.fake.FailNext("chat.postMessage", "channel_not_found")
	e.dm(allowedUser, "ask")
	m := e.waitMsg("D1", "the question shown by the retry", func(m slackfake.Message) bool {
		return len(slackfake.Buttons(m.Blocks)) > 0
	})
	assert.Empty(t, e.agent.Responses(), "nothing was decided for the person")
	assert.Contains(t, e.logs.String(), "presenting interaction failed")
	assert.Contains(t, e.logs.String(), "channel_not_found")
	assert.NotContains(t, e.logs.String(), botToken)
	e.tap(allowedUser, m, slackfake.Buttons(m.Blocks)[0].Text)
	r := e.agent.WaitResponses(t, 1)
	assert.True(t, r[0].Allow, "answered by the tap")
}

func TestHTTPModeBeforeRun(t *testing.T) {
	c := slack.New(botToken, slack.WithSigningSecret(signingSecret))
	mux := http.NewServeMux()
	c.Mount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	e := &env{t: t, http: srv}
	// The URL check is answered at once…
	r := e.rawSigned(slack.EventsPath, []byte(`{"type":"url_verification","challenge":"abc"}`), time.Now(), signingSecret)
	assert.Equal(t, http.StatusOK, r.code)
	assert.Equal(t, "abc", r.body)
	// …but an event is not acknowledged (and lost) before leashd runs:
	// Slack retries it.
	body, _ := json.Marshal(slackfake.EventCallback("Ev1", slackfake.MessageEvent("D1", "im", allowedUser, "1.1", "", "hi")))
	r = e.rawSigned(slack.EventsPath, body, time.Now(), signingSecret)
	assert.Equal(t, http.StatusServiceUnavailable, r.code)
	// Socket Mode serves nothing over HTTP.
	mux2 := http.NewServeMux()
	slack.New(botToken, slack.WithAppToken(appToken), slack.WithSigningSecret(signingSecret)).Mount(mux2)
	_, pattern := mux2.Handler(httptest.NewRequest(http.MethodPost, slack.EventsPath, nil))
	assert.Empty(t, pattern)
}
