package main

import (
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

// TestServeTelegram runs leashd as an operator would, configured only by
// LEASHD_TELEGRAM_* variables against a Bot-API-compatible server (tgfake,
// driven through the real client library): a stranger is refused with
// their ID, the allowed user's prompt gets Allow/Deny buttons, a tap
// reaches the demo agent, and a question still pending at SIGTERM is
// edited to say the buttons keep working before leashd exits.
func TestServeTelegram(t *testing.T) {
	fake := tgfake.New()
	defer fake.Close()
	const me, stranger = int64(1001), int64(666)
	url, logs, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_TELEGRAM_BOT_TOKEN="+fake.Token(),
		"LEASHD_TELEGRAM_API_URL="+fake.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=1001")
	stopped := false
	defer func() {
		if !stopped {
			_ = stop()
		}
	}()

	waitBot := func(chat int64, what string, match func(tgfake.Message) bool) tgfake.Message {
		t.Helper()
		found, ok := waitBotMessage(fake, chat, 10*time.Second, match)
		require.True(t, ok, "no bot message in chat %d with %s; messages: %+v", chat, what, fake.BotMessages(chat))
		return found
	}

	fake.Text(stranger, stranger, "hello")
	waitBot(stranger, "a refusal naming the stranger's ID", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "666")
	})

	fake.Text(me, me, "bash please")
	ask := waitBot(me, "Allow and Deny buttons", func(m tgfake.Message) bool {
		return len(m.Buttons()) > 0 && strings.Contains(m.Text, "echo hello")
	})
	assert.Contains(t, ask.Buttons(), "Allow")
	assert.Contains(t, ask.Buttons(), "Deny")
	_, err := fake.TapButton(me, me, ask.ID, "Allow")
	require.NoError(t, err)
	waitBot(me, "the agent's reply to the allowed command", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "allowed") && strings.Contains(m.Text, "Output: hello")
	})

	checkReadyzNamesEveryPart(t, url)

	fake.Text(me, me, "question")
	q := waitBot(me, "the first question's buttons", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Which database?") && len(m.Buttons()) > 0
	})
	stopped = true
	require.NoError(t, stop())
	checkQuestionKeptAtExit(t, fake, me, q.ID)
	assert.NotContains(t, logs.String(), fake.Token(), "the bot token never reaches the log")
}

// checkReadyzNamesEveryPart checks that /readyz answers 200 and names the
// store, the demo agent and every connector (telegram, web) in its checks.
func checkReadyzNamesEveryPart(t *testing.T, url string) {
	t.Helper()
	var ready struct {
		Ready  bool `json:"ready"`
		Checks []struct {
			Name string `json:"name"`
		} `json:"checks"`
	}
	assert.Equal(t, http.StatusOK, getJSON(t, url+"/readyz", &ready))
	var names []string
	for _, c := range ready.Checks {
		names = append(names, c.Name)
	}
	assert.ElementsMatch(t, []string{"store", "demo", "telegram", "web"}, names, "the store, the agent and every connector")
}

// checkQuestionKeptAtExit checks, right after serve returned, that the
// question's message (id in chat) was edited to say leashd restarted and
// kept its buttons.
func checkQuestionKeptAtExit(t *testing.T, fake *tgfake.Server, chat int64, id int) {
	t.Helper()
	// Looked at once, right after serve returned: the edit was sent before
	// leashd exited, not by something still running in the background.
	var atExit *tgfake.Message
	for _, m := range fake.BotMessages(chat) {
		if m.ID == id {
			atExit = &m
		}
	}
	require.NotNil(t, atExit, "the question's message %d is gone; messages: %+v", id, fake.BotMessages(chat))
	assert.Contains(t, atExit.Text, "Which database?")
	assert.Contains(t, atExit.Text, "leashd restarted", "the chat is told before leashd exits")
	assert.Contains(t, atExit.Buttons(), "SQLite", "the buttons stay: they work after the restart")
}

// waitBotMessage waits up to timeout for a message of the bot's in chat
// that match accepts, and returns it; false if none came in time.
func waitBotMessage(fake *tgfake.Server, chat int64, timeout time.Duration, match func(tgfake.Message) bool) (tgfake.Message, bool) {
	var found tgfake.Message
	ok := fake.Wait(timeout, func() bool {
		for _, m := range fake.BotMessages(chat) {
			if match(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found, ok
}

// TestServeTelegramWebhook runs leashd in webhook mode: it registers the
// webhook with its secret, serves Telegram's posts on the web address at
// the webhook URL's own path (and says so in the log), and refuses a post
// without the right secret before anything is handled.
func TestServeTelegramWebhook(t *testing.T) {
	fake := tgfake.New()
	defer fake.Close()
	const me = int64(1001)
	const secret = "webhook-Secret_123"
	const path = "/hooks/tg-7f3a" // not /telegram/webhook: the URL's own path is served
	const public = "https://leashd.example.test" + path
	url, logs, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_TELEGRAM_BOT_TOKEN="+fake.Token(),
		"LEASHD_TELEGRAM_API_URL="+fake.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=1001",
		"LEASHD_TELEGRAM_WEBHOOK_URL="+public,
		"LEASHD_TELEGRAM_WEBHOOK_SECRET="+secret)
	defer func() { require.NoError(t, stop()) }()

	checkWebhookRegistered(t, fake, logs, public, secret)
	pointWebhookAt(t, fake, url+path, secret)

	waitBot := func(what string, match func(tgfake.Message) bool) tgfake.Message {
		t.Helper()
		found, ok := waitBotMessage(fake, me, 10*time.Second, match)
		require.True(t, ok, "no bot message with %s; messages: %+v\nlog:\n%s", what, fake.BotMessages(me), logs)
		return found
	}

	postForgedUpdates(t, url+path)

	// The real update, delivered by the fake with the secret, is handled:
	// the demo agent asks its question, and a tap (also through the
	// webhook) reaches it.
	fake.Text(me, me, "question")
	q := waitBot("the question's buttons", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Which database?") && len(m.Buttons()) > 0
	})
	_, err := fake.TapButton(me, me, q.ID, "SQLite")
	require.NoError(t, err)
	waitBot("the next question, after the tap", func(m tgfake.Message) bool {
		return strings.Contains(m.Text, "Which features?")
	})
	for _, r := range fake.Requests() {
		if r.Method == "webhook" {
			assert.Equal(t, http.StatusOK, r.Status, "the fake's deliveries are accepted")
		}
	}
	// The chat's messages are handled in order, so had the forged /help
	// been handled, its answer would have come before the question. A real
	// /help now shows what that answer looks like: it is the only one.
	fake.Text(me, me, "/help")
	help := waitBot("the answer to /help", func(m tgfake.Message) bool { return m.ID > q.ID && strings.Contains(m.Text, "/clear") })
	for _, m := range fake.BotMessages(me) {
		if m.ID != help.ID {
			assert.NotEqual(t, help.Text, m.Text, "the forged /help was answered (message %d)", m.ID)
		}
	}
	assert.Contains(t, logs.String(), "request without the right secret token refused")
	assert.Contains(t, logs.String(), "serving Telegram's posts at "+path+" ", "the log names the path served")
	assert.NotContains(t, logs.String(), fake.Token(), "the bot token never reaches the log")
	assert.NotContains(t, logs.String(), secret, "the webhook secret never reaches the log")
}

// checkWebhookRegistered checks that leashd called setWebhook with the
// public URL and the secret, and does no long polling.
func checkWebhookRegistered(t *testing.T, fake *tgfake.Server, logs *testenv.Buffer, public, secret string) {
	t.Helper()
	require.True(t, fake.Wait(10*time.Second, func() bool { u, _ := fake.Webhook(); return u != "" }),
		"leashd never called setWebhook; log:\n%s", logs)
	hook, token := fake.Webhook()
	assert.Equal(t, public, hook)
	assert.Equal(t, secret, token, "setWebhook carried the secret_token")
	assert.Zero(t, fake.Count("getUpdates"), "no long polling in webhook mode")
}

// pointWebhookAt points the fake's webhook at hook, with secret, as a
// proxy in front of the web address would, and checks the fake accepted it.
func pointWebhookAt(t *testing.T, fake *tgfake.Server, hook, secret string) {
	t.Helper()
	// The public URL would reach the web address through a proxy; here the
	// fake is pointed at the web address itself, with the same secret, and
	// then delivers updates as Telegram does.
	resp, err := http.PostForm(fake.URL()+"/bot"+fake.Token()+"/setWebhook",
		neturl.Values{"url": {hook}, "secret_token": {secret}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// postForgedUpdates posts a well-formed /help update from the allowed user
// to hook with a wrong secret, then with none, and checks that each is
// refused with 401 naming the secret token header.
func postForgedUpdates(t *testing.T, hook string) {
	t.Helper()
	// A forged post: a well-formed update from the allowed user with a
	// wrong secret, then one with none. Neither is handled. (/help would
	// be answered at once, before the chat's next message is handled.)
	forged := `{"update_id":900001,"message":{"message_id":900,"date":1700000000,"text":"/help",` +
		`"entities":[{"type":"bot_command","offset":0,"length":5}],` +
		`"from":{"id":1001,"is_bot":false,"first_name":"Me"},"chat":{"id":1001,"type":"private"}}}`
	for _, header := range []string{"wrong-secret", ""} {
		req, err := http.NewRequest(http.MethodPost, hook, strings.NewReader(forged))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if header != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", header)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "secret %q: %s", header, body)
		assert.Contains(t, string(body), "X-Telegram-Bot-Api-Secret-Token")
	}
}

// TestServeTelegramOutageDoesNotDeny: Telegram answers every sendMessage
// with 502. The tool approval it cannot show is not turned into an answer
// once Telegram's retries give up: the operator's log says so, the request
// stays pending, the web API answers it, and the agent gets that answer.
func TestServeTelegramOutageDoesNotDeny(t *testing.T) {
	fake := tgfake.New()
	defer fake.Close()
	const me = int64(1001)
	const chat = "telegram:1001"
	url, logs, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_TELEGRAM_BOT_TOKEN="+fake.Token(),
		"LEASHD_TELEGRAM_API_URL="+fake.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=1001",
		"LEASHD_SHUTDOWN_TIMEOUT_SECONDS=3")
	defer func() { assert.NoError(t, stop()) }()
	fake.FailNext("sendMessage", http.StatusBadGateway, 1000)

	fake.Text(me, me, "bash please")
	// Until Telegram's own retries give up on the message (~15 s): then
	// the request is either still pending (and the operator told) or it
	// was settled without anyone answering.
	require.Eventually(t, func() bool {
		l := logs.String()
		return strings.Contains(l, "presenting interaction failed") || strings.Contains(l, "msg=\"interaction resolved\"")
	}, 40*time.Second, 50*time.Millisecond, "Telegram's retries never gave up:\n%s", logs)
	assert.NotContains(t, logs.String(), "msg=\"interaction resolved\"", "settled while nobody answered")
	assert.Regexp(t, `level=ERROR msg="presenting interaction failed[^\n]*502`, logs.String(), "the operator is told")
	p := waitPending(t, url, chat, func(p pendingView) bool { return p.ToolName == "Bash" })
	code, body := postJSON(t, url+"/api/interactions/"+p.ID+"/reply", `{"answers":[["allow"]]}`)
	require.Less(t, code, 300, "answered on the web page: %d %s", code, body)
	waitEvent(t, url, chat, "Output: hello")
	assert.NotContains(t, logs.String(), "denied")
	assert.NotContains(t, logs.String(), fake.Token(), "the bot token never reaches the log")
}
