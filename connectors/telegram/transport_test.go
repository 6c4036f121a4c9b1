package telegram_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/interactions"
)

// A 429 storm: the fake allows one message a second per chat and the
// connector is told no limits, so it is refused again and again. No
// message is lost, order is kept, and no request reaches a chat before the
// retry_after it was given has elapsed.
func TestRateLimitStormLosesNothingAndHonoursRetryAfter(t *testing.T) {
	h := newHarness(t, setup{fakeOpts: []tgfake.Option{tgfake.WithLimits(tgfake.Limits{PerChat: 1, RetryAfter: 1})}})
	const perChat = 4
	chats := []int64{42, 43, 44}
	var wg sync.WaitGroup
	for _, chat := range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perChat {
				assert.NoError(t, h.conn.Say(context.Background(), fmt.Sprintf("telegram:%d", chat), fmt.Sprintf("message %d", i)))
			}
		}()
	}
	wg.Wait()
	for _, chat := range chats {
		var texts []string
		for _, m := range h.fake.BotMessages(chat) {
			texts = append(texts, m.Text)
		}
		assert.Equal(t, []string{"message 0", "message 1", "message 2", "message 3"}, texts, "chat %d", chat)
	}
	rejected := 0
	for _, r := range h.fake.Requests() {
		if r.Status == http.StatusTooManyRequests {
			rejected++
		}
	}
	assert.Positive(t, rejected, "the storm did hit the limit")
	assert.Empty(t, h.fake.Violations(), "a request came before retry_after elapsed")
}

// With Telegram's published limits the connector paces itself.
func TestDefaultLimitsPaceAChat(t *testing.T) {
	h := newHarness(t, setup{limits: &telegram.DefaultLimits})
	start := time.Now()
	for i := range 3 {
		require.NoError(t, h.conn.Say(context.Background(), "telegram:42", fmt.Sprintf("m%d", i)))
	}
	var at []time.Time
	for _, r := range h.fake.Requests() {
		if r.Method == "sendMessage" && r.ChatID == 42 {
			at = append(at, r.At)
		}
	}
	require.Len(t, at, 3)
	for i := 1; i < len(at); i++ {
		assert.GreaterOrEqual(t, at[i].Sub(at[i-1]), 900*time.Millisecond, "at most one message a second in a chat")
	}
	assert.GreaterOrEqual(t, time.Since(start), 1800*time.Millisecond)
}

func TestServerErrorsAreRetried(t *testing.T) {
	h := newHarness(t, setup{})
	h.fake.FailNext("sendMessage", http.StatusBadGateway, 2)
	require.NoError(t, h.conn.Say(context.Background(), "telegram:42", "after two 502s"))
	assert.Len(t, h.fake.BotMessages(42), 1)
	assert.Equal(t, 3, h.fake.Count("sendMessage"))
}

func TestBadChatIDIsAClearError(t *testing.T) {
	h := newHarness(t, setup{})
	err := h.conn.Say(context.Background(), "slack:C1", "x")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "telegram:<numeric chat id>")
}

func TestLongStreamedOutputRollsOverAndStaysValid(t *testing.T) {
	var lines []string
	for i := range 300 {
		lines = append(lines, fmt.Sprintf("line %03d: a < b & **bold %d**", i, i))
	}
	h := newHarness(t, setup{turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
		for i := 0; i < len(lines); i += 50 {
			th.Text(strings.Join(lines[i:i+50], "\n") + "\n")
			time.Sleep(5 * time.Millisecond)
		}
		return agent.Result{Text: "done"}, nil
	}})
	h.fake.Text(me, me, "talk a lot")
	h.botMessage(me, "<i>Done")
	var visible strings.Builder
	for _, m := range h.fake.BotMessages(me) {
		v, err := tgfake.ParseHTML(m.Text)
		require.NoError(t, err)
		assert.LessOrEqual(t, tgfake.Len(v), 4096)
		visible.WriteString(v + "\n")
	}
	require.Greater(t, len(h.fake.BotMessages(me)), 3, "output over 4096 characters rolls to new messages")
	for _, l := range []string{"line 000: a < b & bold 0", "line 150: a < b & bold 150", "line 299: a < b & bold 299"} {
		assert.Contains(t, visible.String(), l)
	}
	assert.NotContains(t, h.logs.String(), "failed")
}

// hookPath is a webhook URL's path in the tests: leashd serves the path of
// the URL it registers, whatever it is.
const hookPath = "/hooks/tg-7f3a"

func TestWebhookChecksTheSecret(t *testing.T) {
	mux := http.NewServeMux()
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	h := newHarness(t, setup{noRun: true, connOpts: []telegram.Option{telegram.WithWebhook(web.URL+hookPath, "s3cret-value")}})
	var m connectors.Mounter = h.conn
	m.Mount(mux)
	h.run()
	u, secret := h.fake.Webhook()
	assert.Equal(t, web.URL+hookPath, u)
	assert.Equal(t, "s3cret-value", secret)

	// Through the fake, which sends the secret it was given.
	h.fake.Text(me, me, "via webhook")
	h.botMessage(me, "echo: via webhook")
	assert.Zero(t, h.fake.Count("getUpdates"))

	body := `{"update_id": 5000, "message": {"message_id": 9, "from": {"id": 42, "first_name": "x"}, "chat": {"id": 42, "type": "private"}, "date": 1, "text": "forged"}}`
	for _, hdr := range []string{"", "wrong", "s3cret-valuf", "s3cret-value-longer"} {
		req, err := http.NewRequest(http.MethodPost, web.URL+hookPath, strings.NewReader(body))
		require.NoError(t, err)
		if hdr != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", hdr)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "secret %q", hdr)
	}
	req, _ := http.NewRequest(http.MethodPost, web.URL+hookPath, strings.NewReader("{not json"))
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", "s3cret-value")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, []string{"via webhook"}, h.prompts(), "nothing without the secret reached the agent")
}

// An update Telegram sends that leashd cannot read (a field of another
// type) is answered 200 and logged: a 4xx would have Telegram send it again
// and again, holding the chat's later updates behind it. The chat's next
// message goes through.
func TestWebhookSkipsAnUnreadableUpdate(t *testing.T) {
	mux := http.NewServeMux()
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	h := newHarness(t, setup{noRun: true, connOpts: []telegram.Option{telegram.WithWebhook(web.URL+hookPath, "s3cret-value")}})
	var m connectors.Mounter = h.conn
	m.Mount(mux)
	h.run()

	req, err := http.NewRequest(http.MethodPost, web.URL+hookPath, strings.NewReader(`{"update_id": 900, "message": "oops"}`))
	require.NoError(t, err)
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", "s3cret-value")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, h.logs.String(), "skipped an update that could not be read")
	assert.Contains(t, h.logs.String(), "update 900 skipped")

	h.fake.Text(me, me, "after it")
	h.botMessage(me, "echo: after it")
	assert.Equal(t, []string{"after it"}, h.prompts())
}

func TestPollingDeletesALeftoverWebhook(t *testing.T) {
	fake := tgfake.New()
	t.Cleanup(fake.Close)
	resp, err := http.PostForm(fake.URL()+"/bot"+fake.Token()+"/setWebhook", url.Values{"url": {"https://example.com/hook"}})
	require.NoError(t, err)
	resp.Body.Close()
	h := newHarness(t, setup{fakeServer: fake})
	h.fake.Text(me, me, "polled")
	h.botMessage(me, "echo: polled")
	u, _ := fake.Webhook()
	assert.Empty(t, u)
}

func TestConflictIsReportedLoudlyAndRecovers(t *testing.T) {
	h := newHarness(t, setup{})
	h.fake.SetConflict(true)
	h.waitFor("Ready to report the conflict", func() bool {
		err := h.conn.Ready()
		return err != nil && strings.Contains(err.Error(), "409")
	})
	assert.Contains(t, h.logs.String(), "level=ERROR")
	assert.Contains(t, h.logs.String(), "another process polls this bot")
	n := h.fake.Count("getUpdates")
	time.Sleep(150 * time.Millisecond)
	assert.Less(t, h.fake.Count("getUpdates")-n, 10, "backs off instead of looping")
	h.fake.SetConflict(false)
	h.waitReady()
	h.fake.Text(me, me, "back")
	h.botMessage(me, "echo: back")
}

const secretToken = "123456:AAE-very-secret-token-value"

func TestTokenNeverAppearsInLogsOrErrors(t *testing.T) {
	// Rejected token: Run fails with a clear error.
	fake := tgfake.New(tgfake.WithToken("123456:other"))
	t.Cleanup(fake.Close)
	logs := &testenv.Buffer{}
	c := telegram.New(secretToken, telegram.WithAPIURL(fake.URL()), telegram.WithLogger(newLogger(logs)))
	err := c.Run(context.Background(), nopHandler{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LEASHD_TELEGRAM_BOT_TOKEN")
	assert.NotContains(t, err.Error(), "very-secret")

	// Unreachable API: network errors (which carry the URL) are logged
	// redacted while retrying.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	c = telegram.New(secretToken, telegram.WithAPIURL(dead.URL), telegram.WithLogger(newLogger(logs)), telegram.WithRetryDelay(10*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	assert.NoError(t, c.Run(ctx, nopHandler{}))
	require.Error(t, c.Ready())
	assert.NotContains(t, c.Ready().Error(), "very-secret")
	assert.Contains(t, logs.String(), "getMe failed")
	assert.Contains(t, logs.String(), "<token>", "the URL is logged with the token replaced")
	assert.NotContains(t, logs.String(), "very-secret")
}

func newLogger(w *testenv.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type nopHandler struct{ connectors.Handler }

// Taps racing the timeout: whatever wins, the person, the message and the
// agent agree, and every tap is answered exactly once.
func TestTapsRacingTimeouts(t *testing.T) {
	h := newHarness(t, setup{
		coordOpts: []interactions.Opt{interactions.WithTimeout(40 * time.Millisecond)},
		turn:      askTurn(agent.ToolAskUserQuestion, func() any { return dbQuestion() }),
	})
	const rounds = 25
	won, lost := 0, 0
	for i := range rounds {
		h.fake.Text(me, me, fmt.Sprintf("round %d", i))
		var sent []tgfake.Request
		h.waitFor("question", func() bool {
			sent = sentWith(h.fake, "Which database")
			return len(sent) == i+1
		})
		var kb tgbotapi.InlineKeyboardMarkup
		require.NoError(t, json.Unmarshal([]byte(sent[i].Params.Get("reply_markup")), &kb))
		var msgID int
		h.waitFor("message id", func() bool {
			for _, m := range h.fake.BotMessages(me) {
				if strings.Contains(m.Text, "Which database") {
					msgID = m.ID
				}
			}
			return msgID > 0
		})
		time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
		q := h.fake.Tap(me, me, msgID, *kb.InlineKeyboard[0][0].CallbackData)
		a := h.answer(q)
		resp := h.response(i + 1)
		final := h.waitMessage(me, msgID, "the outcome shown", func(m tgfake.Message) bool { return m.Markup == nil })
		if resp.Allow {
			won++
			assert.Equal(t, "✓", a.Text)
			assert.Contains(t, final.Text, "✅ <b>Postgres</b>")
		} else {
			lost++
			assert.Equal(t, telegram.StaleText, a.Text)
			assert.Contains(t, final.Text, telegram.ExpiredText)
		}
		h.waitFor("summary", func() bool { return strings.Count(h.dump(me), "<i>Done") == i+1 })
	}
	t.Logf("tap won %d, timeout won %d", won, lost)
	for _, r := range h.fake.Requests() {
		if r.Method == "answerCallbackQuery" {
			assert.Equal(t, http.StatusOK, r.Status, "each query answered once: %s", r.Error)
		}
	}
	assert.Equal(t, rounds, h.fake.Count("answerCallbackQuery"))
}

// sentWith returns the sendMessage requests whose text contains substr.
func sentWith(f *tgfake.Server, substr string) []tgfake.Request {
	var out []tgfake.Request
	for _, r := range f.Requests() {
		if r.Method == "sendMessage" && r.Status == http.StatusOK && strings.Contains(r.Params.Get("text"), substr) {
			out = append(out, r)
		}
	}
	return out
}

func TestWebhookWithoutSecretIsRefused(t *testing.T) {
	c := telegram.New(tgfake.DefaultToken, telegram.WithWebhook("https://example.com"+hookPath, ""))
	err := c.Run(context.Background(), nopHandler{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LEASHD_TELEGRAM_WEBHOOK_SECRET")
}

// A tap is answered, and the agent unblocked, while the chat's outbound
// queue is held up by a 429's retry_after.
func TestTapIsNotQueuedBehindTheChatsMessages(t *testing.T) {
	h := newHarness(t, setup{turn: askTurn(agent.ToolAskUserQuestion, func() any { return dbQuestion() })})
	h.fake.Text(me, me, "pick")
	m := h.botMessage(me, "Which database")
	h.fake.SetLimits(tgfake.Limits{PerChat: 1, RetryAfter: 5})
	saysDone := make(chan struct{})
	go func() {
		defer close(saysDone)
		for i := range 3 {
			assert.NoError(t, h.conn.Say(context.Background(), "telegram:42", fmt.Sprintf("busy %d", i)))
		}
	}()
	h.waitFor("the chat to be rate limited", func() bool { return count429(h.fake) > 0 })
	q := h.tap(me, me, m.ID, "Postgres")
	assert.Equal(t, "✓", h.answer(q).Text)
	assert.True(t, h.response(1).Allow)
	select {
	case <-saysDone:
		t.Fatal("the tap waited for the chat's queued messages")
	default:
	}
	h.fake.SetLimits(tgfake.Limits{})
	<-saysDone
	assert.Empty(t, h.fake.Violations())
	h.botMessage(me, "<i>Done") // the turn's end got through too
}

// Messages of one chat reach the engine in the order they were written.
func TestMessagesOfAChatStayInOrder(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, setup{turn: func(ctx context.Context, prompt string, th agent.TurnHandler) (agent.Result, error) {
		if prompt == "first" {
			<-release
		}
		return agent.Result{Text: "ok " + prompt}, nil
	}})
	h.fake.Text(me, me, "first")
	h.waitFor("the first turn", func() bool { return len(h.prompts()) == 1 })
	var want []string
	for i := range 8 {
		want = append(want, fmt.Sprintf("m%d", i))
		h.fake.Text(me, me, want[i])
	}
	h.waitFor("every message queued", func() bool { return strings.Count(h.dump(me), "queued") == 8 })
	close(release)
	h.waitFor("every turn", func() bool { return len(h.prompts()) == 9 })
	assert.Equal(t, append([]string{"first"}, want...), h.prompts())
}

func TestOutputBeforeRunIsAClearError(t *testing.T) {
	c := telegram.New(tgfake.DefaultToken)
	err := c.Say(context.Background(), "telegram:42", "hi")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not connected yet")
	assert.Error(t, c.Ready())
}

func TestPollingSurvivesServerErrors(t *testing.T) {
	h := newHarness(t, setup{})
	h.fake.FailNext("getUpdates", http.StatusBadGateway, 3)
	h.fake.Text(me, me, "still there?")
	h.botMessage(me, "echo: still there?")
	assert.Contains(t, h.logs.String(), "getUpdates failed; retrying")
	// Updates are handled as they are read, so the reply can go out
	// before the getUpdates that carried it has returned and logged.
	h.waitFor("the recovery logged", func() bool { return strings.Contains(h.logs.String(), "getUpdates works again") })
	h.waitReady()
}

func TestWebhookSecretMustFollowTelegramsRule(t *testing.T) {
	c := telegram.New(tgfake.DefaultToken, telegram.WithWebhook("https://example.com"+hookPath, "has spaces!"))
	err := c.Run(context.Background(), nopHandler{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "A-Z, a-z, 0-9, _ and -")
}

func TestParseUserIDs(t *testing.T) {
	ids, err := telegram.ParseUserIDs([]string{"42", " 7 ", ""})
	require.NoError(t, err)
	assert.Equal(t, []int64{42, 7}, ids)
	_, err = telegram.ParseUserIDs([]string{"42", "@alice"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"@alice"`)
}
