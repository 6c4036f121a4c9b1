package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/slack/slackfake"
)

// TestServeSlackSocketMode runs leashd configured only by LEASHD_SLACK_*
// variables against a fake Slack (Web API and Socket Mode websocket,
// driven through slack-go): a teammate mentions the bot in a channel, the
// agent's plan is posted in the thread, a tap by someone who is not an
// approver is refused and changes nothing, and the approver's tap approves
// it so the agent goes on.
func TestServeSlackSocketMode(t *testing.T) {
	const bot, app = "xoxb-serve-test", "xapp-serve-test"
	fake := slackfake.New(bot, app)
	defer fake.Close()
	const dev, lead = "UDEV", "ULEAD"
	_, logs, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_SLACK_BOT_TOKEN="+bot,
		"LEASHD_SLACK_APP_TOKEN="+app,
		"LEASHD_SLACK_API_URL="+fake.APIURL(),
		"LEASHD_SLACK_ALLOWED_USERS="+dev,
		"LEASHD_SLACK_APPROVERS="+lead)
	defer func() { assert.NoError(t, stop()) }()
	require.True(t, fake.WaitFor(10*time.Second, func() bool { return fake.Connected() > 0 }), "Socket Mode connected")

	var seq int
	slk := slackDriver{t, fake}
	push := slk.push
	waitMsg := slk.waitMsg
	tap := slk.tap

	seq++
	ts := fmt.Sprintf("1700000000.%06d", seq)
	text := "<@" + slackfake.BotUserID + "> plan"
	push("events_api", slackfake.EventCallback("Ev1", slackfake.MentionEvent("C1", dev, ts, "", text)))
	push("events_api", slackfake.EventCallback("Ev2", slackfake.MessageEvent("C1", "channel", dev, ts, "", text)))

	waitMsg("the plan in the thread", func(m slackfake.Message) bool {
		return m.ThreadTS == ts && strings.Contains(slackfake.Texts(m.Blocks), "Plan: add a greeting")
	})
	plan := waitMsg("the plan's buttons in the thread", func(m slackfake.Message) bool {
		return m.ThreadTS == ts && len(slackfake.Buttons(m.Blocks)) == 4 && strings.Contains(slackfake.Texts(m.Blocks), "Only approvers can decide")
	})
	tap(dev, plan, "Approve, auto-accept edits")
	require.True(t, fake.WaitFor(10*time.Second, func() bool {
		for _, e := range fake.Ephemerals() {
			if e.User == dev && strings.Contains(e.Text, "approver") {
				return true
			}
		}
		return false
	}), "the non-approver is told only approvers decide: %+v", fake.Ephemerals())
	for _, m := range fake.Messages("C1") {
		if m.TS == plan.TS {
			assert.NotEmpty(t, slackfake.Buttons(m.Blocks), "a refused tap leaves the plan waiting")
		}
	}

	tap(lead, plan, "Approve, auto-accept edits")
	waitMsg("the approval recorded on the plan", func(m slackfake.Message) bool {
		return m.TS == plan.TS && len(slackfake.Buttons(m.Blocks)) == 0 && strings.Contains(slackfake.Texts(m.Blocks), lead)
	})
	waitMsg("the agent going on in the thread", func(m slackfake.Message) bool {
		return m.ThreadTS == ts && strings.Contains(m.Text+slackfake.Texts(m.Blocks), "hello.txt") && m.TS != plan.TS
	})
	assert.NotContains(t, logs.String(), bot)
	assert.NotContains(t, logs.String(), app)
}

// TestServeSlackHTTPMode runs leashd with a bot token and a signing
// secret (no app token: HTTP mode) against a fake Slack Web API, Slack's
// requests posted to /slack/events on the web address: a correctly signed
// mention reaches the demo agent, whose reply goes into the thread; a
// badly signed or stale request is refused with 401 and nothing happens.
func TestServeSlackHTTPMode(t *testing.T) {
	const bot, secret = "xoxb-serve-http", "serve-http-signing-secret"
	fake := slackfake.New(bot, "")
	defer fake.Close()
	const dev = "UDEV"
	url, logs, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_SLACK_BOT_TOKEN="+bot,
		"LEASHD_SLACK_SIGNING_SECRET="+secret,
		"LEASHD_SLACK_API_URL="+strings.TrimSuffix(fake.APIURL(), "/"),
		"LEASHD_SLACK_ALLOWED_USERS="+dev)
	defer func() { assert.NoError(t, stop()) }()
	require.Eventually(t, func() bool { return getJSON(t, url+"/readyz", nil) == http.StatusOK }, 10*time.Second, 10*time.Millisecond,
		"leashd ready (the bot authenticated): %s", logs)

	sh := slackHTTP{t: t, url: url, fake: fake}
	post, event, replies := sh.post, sh.event, sh.replies

	code, body := post([]byte(`{"type":"url_verification","token":"x","challenge":"ch4llenge"}`), time.Now(), secret)
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "ch4llenge", "the URL verification challenge is answered")

	// A mention, delivered as Slack does (app_mention and message).
	const root = "1700000000.000001"
	text := "<@" + slackfake.BotUserID + "> hello there"
	code, _ = post(event("EvH1", slackfake.MentionEvent("C1", dev, root, "", text)), time.Now(), secret)
	require.Equal(t, http.StatusOK, code)
	code, _ = post(event("EvH2", slackfake.MessageEvent("C1", "channel", dev, root, "", text)), time.Now(), secret)
	require.Equal(t, http.StatusOK, code)
	require.True(t, fake.WaitFor(10*time.Second, func() bool { return replies(root, `You said: "hello there"`) > 0 }),
		"the demo agent replies in the mention's thread; messages:\n%s", dumpSlack(fake))

	// In the thread: a reply signed with the wrong secret, and one signed
	// correctly but five minutes old (a replay), are refused.
	code, _ = post(event("EvBad", slackfake.MessageEvent("C1", "channel", dev, "1700000000.000002", root, "forged words")), time.Now(), "not-the-secret")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _ = post(event("EvOld", slackfake.MessageEvent("C1", "channel", dev, "1700000000.000003", root, "replayed words")), time.Now().Add(-6*time.Minute), secret)
	assert.Equal(t, http.StatusUnauthorized, code)
	// The chat's next, genuine message is answered; nothing came of the
	// refused ones before it (a chat's messages are handled in order).
	code, _ = post(event("EvH3", slackfake.MessageEvent("C1", "channel", dev, "1700000000.000004", root, "and again")), time.Now(), secret)
	require.Equal(t, http.StatusOK, code)
	require.True(t, fake.WaitFor(10*time.Second, func() bool { return replies(root, `You said: "and again"`) > 0 }),
		"the genuine reply is answered; messages:\n%s", dumpSlack(fake))
	assert.Equal(t, 1, replies(root, `You said: "hello there"`), "the mention delivered twice is one prompt")
	for _, m := range fake.Messages("") {
		assert.NotContains(t, m.Text, "forged", "a badly signed request reached the agent")
		assert.NotContains(t, m.Text, "replayed", "a stale request reached the agent")
		assert.Equal(t, root, m.ThreadTS, "everything goes into the thread")
	}
	assert.Empty(t, fake.Ephemerals())
	assert.Empty(t, fake.Rejected(), "Slack would refuse a message leashd sent")
	assert.NotContains(t, logs.String(), bot)
	assert.NotContains(t, logs.String(), secret)
}

// slackHTTP is Slack's side of an HTTP-mode conversation with leashd at
// url: it posts signed events to /slack/events and counts leashd's replies
// in channel C1 of the fake.
type slackHTTP struct {
	t    *testing.T
	url  string
	fake *slackfake.Server
}

// post posts body to /slack/events signed with key at time at, checks it
// is answered within the 3 s Slack waits, and returns the status and body.
func (h slackHTTP) post(body []byte, at time.Time, key string) (int, string) {
	t := h.t
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url+"/slack/events", bytes.NewReader(body))
	require.NoError(t, err)
	stamp := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte("v0:" + stamp + ":"))
	mac.Write(body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Slack-Request-Timestamp", stamp)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Less(t, time.Since(start), 3*time.Second, "Slack waits 3 s for the answer")
	return resp.StatusCode, string(b)
}

// event returns the JSON of an event callback id wrapping inner.
func (h slackHTTP) event(id string, inner map[string]any) []byte {
	b, err := json.Marshal(slackfake.EventCallback(id, inner))
	require.NoError(h.t, err)
	return b
}

// replies counts the messages in C1's thread whose text contains substr.
func (h slackHTTP) replies(thread, substr string) int {
	n := 0
	for _, m := range h.fake.Messages("C1") {
		if m.ThreadTS == thread && strings.Contains(m.Text, substr) {
			n++
		}
	}
	return n
}

// slackDriver is Slack's side of a Socket Mode conversation with leashd
// through the fake: it pushes envelopes (each acknowledged, within the 3 s
// Slack allows), finds what leashd posted in channel C1 and taps buttons.
type slackDriver struct {
	t    *testing.T
	fake *slackfake.Server
}

func (d slackDriver) push(typ string, payload any) {
	d.t.Helper()
	env, err := d.fake.Push(typ, payload, 0)
	require.NoError(d.t, err)
	require.True(d.t, d.fake.WaitFor(10*time.Second, func() bool { _, ok := d.fake.Acked(env); return ok }), "envelope %s acknowledged", env)
	delay, _ := d.fake.AckDelay(env)
	require.Less(d.t, delay, 3*time.Second, "Slack waits 3 s for the acknowledgement of %s", env)
}

func (d slackDriver) waitMsg(what string, ok func(slackfake.Message) bool) slackfake.Message {
	d.t.Helper()
	var found slackfake.Message
	require.True(d.t, d.fake.WaitFor(10*time.Second, func() bool {
		for _, m := range d.fake.Messages("C1") {
			if ok(m) {
				found = m
				return true
			}
		}
		return false
	}), "no message in C1 with %s; messages:\n%s", what, dumpSlack(d.fake))
	return found
}

func (d slackDriver) tap(user string, m slackfake.Message, label string) {
	d.t.Helper()
	for _, b := range slackfake.Buttons(m.Blocks) {
		if b.Text == label {
			d.push("interactive", slackfake.BlockAction(user, m, b.ActionID, b.Value))
			return
		}
	}
	d.t.Fatalf("no button %q on %s: %+v", label, m.TS, slackfake.Buttons(m.Blocks))
}

func dumpSlack(fake *slackfake.Server) string {
	var b strings.Builder
	for _, m := range fake.Messages("C1") {
		fmt.Fprintf(&b, "[%s thread=%s] %q %q buttons=%+v\n", m.TS, m.ThreadTS, m.Text, slackfake.Texts(m.Blocks), slackfake.Buttons(m.Blocks))
	}
	return b.String()
}
