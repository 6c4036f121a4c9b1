package tgfake_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

func bot(t *testing.T, f *tgfake.Server) *tgbotapi.BotAPI {
	t.Helper()
	b, err := tgbotapi.NewBotAPIWithClient(f.Token(), f.URL()+"/bot%s/%s", &http.Client{})
	require.NoError(t, err)
	return b
}

func apiErr(t *testing.T, err error) *tgbotapi.Error {
	t.Helper()
	var te *tgbotapi.Error
	require.True(t, errors.As(err, &te), "want a Bot API error, got %v", err)
	return te
}

func TestWrongTokenIsUnauthorized(t *testing.T) {
	f := tgfake.New()
	defer f.Close()
	_, err := tgbotapi.NewBotAPIWithClient("1:wrong", f.URL()+"/bot%s/%s", &http.Client{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Unauthorized")
}

func TestTheFakeEnforcesTelegramsRules(t *testing.T) {
	f := tgfake.New()
	defer f.Close()
	b := bot(t, f)

	html := func(text string) tgbotapi.MessageConfig {
		m := tgbotapi.NewMessage(42, text)
		m.ParseMode = tgbotapi.ModeHTML
		return m
	}
	for _, bad := range []string{"<b>open", "a < b", "x & y", "<script>x</script>", "<b><i>x</b></i>", "&nbsp;", `<a>x</a>`, "<pre><b>x</b></pre>"} {
		_, err := b.Send(html(bad))
		assert.Contains(t, apiErr(t, err).Message, "can't parse entities", bad)
	}
	_, err := b.Send(tgbotapi.NewMessage(42, strings.Repeat("x", 4097)))
	assert.Contains(t, apiErr(t, err).Message, "message is too long")
	_, err = b.Send(tgbotapi.NewMessage(42, strings.Repeat("😀", 2049))) // 4098 UTF-16 units
	assert.Contains(t, apiErr(t, err).Message, "message is too long")
	_, err = b.Send(html(strings.Repeat("&lt;", 4096))) // 4096 visible characters
	assert.NoError(t, err)

	m := tgbotapi.NewMessage(42, "pick")
	m.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("x", strings.Repeat("d", 65))))
	_, err = b.Send(m)
	assert.Contains(t, apiErr(t, err).Message, "BUTTON_DATA_INVALID")

	m.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("x", "k:0")))
	sent, err := b.Send(m)
	require.NoError(t, err)
	_, err = b.Send(tgbotapi.NewEditMessageText(42, sent.MessageID, "pick"))
	require.NoError(t, err, "dropping the keyboard is a change")
	_, err = b.Send(tgbotapi.NewEditMessageText(42, sent.MessageID, "pick"))
	assert.Contains(t, apiErr(t, err).Message, "message is not modified")

	q := f.Tap(42, 42, sent.MessageID, "k:0")
	_, err = b.Request(tgbotapi.NewCallback(q, "ok"))
	require.NoError(t, err)
	_, err = b.Request(tgbotapi.NewCallback(q, "again"))
	assert.Contains(t, apiErr(t, err).Message, "query is too old")
	a, ok := f.CallbackAnswer(q)
	require.True(t, ok)
	assert.Equal(t, "ok", a.Text)
}

func TestTheFakeRateLimitsAndRecordsViolations(t *testing.T) {
	f := tgfake.New(tgfake.WithLimits(tgfake.Limits{PerChat: 1, RetryAfter: 2}))
	defer f.Close()
	b := bot(t, f)
	_, err := b.Send(tgbotapi.NewMessage(42, "one"))
	require.NoError(t, err)
	_, err = b.Send(tgbotapi.NewMessage(42, "two"))
	te := apiErr(t, err)
	assert.Equal(t, 429, te.Code)
	assert.Equal(t, 2, te.RetryAfter)
	assert.Empty(t, f.Violations())
	_, err = b.Send(tgbotapi.NewMessage(43, "other chat"))
	assert.NoError(t, err, "limits are per chat")
	_, err = b.Send(tgbotapi.NewMessage(42, "too early"))
	assert.Equal(t, 429, apiErr(t, err).Code)
	assert.Len(t, f.Violations(), 1, "a request inside retry_after is recorded")
}

func TestTheFakeDeliversUpdatesAndConflicts(t *testing.T) {
	f := tgfake.New()
	defer f.Close()
	b := bot(t, f)
	id := f.Text(42, 42, "/start now")
	ups, err := b.GetUpdates(tgbotapi.UpdateConfig{Offset: 0, Timeout: 1})
	require.NoError(t, err)
	require.Len(t, ups, 1)
	assert.Equal(t, id, ups[0].UpdateID)
	assert.True(t, ups[0].Message.IsCommand())
	start := time.Now()
	ups, err = b.GetUpdates(tgbotapi.UpdateConfig{Offset: id + 1, Timeout: 1})
	require.NoError(t, err)
	assert.Empty(t, ups)
	assert.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond, "long polling waits for the timeout")

	f.SetConflict(true)
	_, err = b.GetUpdates(tgbotapi.UpdateConfig{Offset: id + 1})
	assert.Equal(t, 409, apiErr(t, err).Code)
}

func TestParseHTML(t *testing.T) {
	v, err := tgfake.ParseHTML(`<b>a</b> &lt;&#65;&#x42;&quot; <a href="https://x.y/?a=1&amp;b">l</a><pre><code class="language-go">x</code></pre>`)
	require.NoError(t, err)
	assert.Equal(t, `a <AB" lx`, v)
}

// FuzzParseHTML: the checker never panics, and what it accepts re-escaped
// as plain text is accepted with the same visible text.
func FuzzParseHTML(f *testing.F) {
	for _, s := range []string{"<b>x</b>", "&amp;&#128512;", "<a href='u'>l</a>", "<pre><code class=\"language-x\">c</code></pre>", "<", "&", "<b", "&#xD800;", "<span class=\"tg-spoiler\">s</span>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := tgfake.ParseHTML(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error must say what is wrong")
			}
			return
		}
		esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(v)
		v2, err := tgfake.ParseHTML(esc)
		if err != nil || v2 != v {
			t.Fatalf("escaped visible text %q of %q: %q, %v", esc, s, v2, err)
		}
	})
}

// TestTheFakeAnswersAtMostLimitUpdates: like Telegram, one getUpdates
// answers at most limit updates (1-100, default 100), oldest first; the
// offset confirms them and the next call answers the rest, in order.
func TestTheFakeAnswersAtMostLimitUpdates(t *testing.T) {
	f := tgfake.New()
	defer f.Close()
	b := bot(t, f)
	const n = 250
	ids := make([]int, n)
	for i := range n {
		ids[i] = f.Text(42, 42, fmt.Sprintf("message %d", i))
	}
	var got []int
	offset := 0
	for _, want := range []int{100, 100, 50} {
		ups, err := b.GetUpdates(tgbotapi.UpdateConfig{Offset: offset})
		require.NoError(t, err)
		require.Len(t, ups, want, "the default limit is 100")
		for _, u := range ups {
			got = append(got, u.UpdateID)
			assert.Equal(t, fmt.Sprintf("message %d", len(got)-1), u.Message.Text)
			offset = u.UpdateID + 1
		}
	}
	assert.Equal(t, ids, got, "every update once, in order")

	for i := range 5 {
		f.Text(42, 42, fmt.Sprintf("more %d", i))
	}
	ups, err := b.GetUpdates(tgbotapi.UpdateConfig{Offset: offset, Limit: 2})
	require.NoError(t, err)
	require.Len(t, ups, 2)
	assert.Equal(t, "more 0", ups[0].Message.Text)
	ups, err = b.GetUpdates(tgbotapi.UpdateConfig{Offset: offset, Limit: 500})
	require.NoError(t, err)
	assert.Len(t, ups, 5, "unconfirmed updates come again; a limit above 100 is 100")
	assert.Equal(t, 5, f.PendingUpdates())
}

// TestTheFakeAnswersALongPollWhenAnUpdateArrives: a long poll answers as
// soon as an update arrives, however many other requests the fake serves
// meanwhile, and the update is the one injected.
func TestTheFakeAnswersALongPollWhenAnUpdateArrives(t *testing.T) {
	f := tgfake.New()
	defer f.Close()
	b := bot(t, f)
	got := make(chan []tgbotapi.Update, 1)
	go func() {
		ups, err := b.GetUpdates(tgbotapi.UpdateConfig{Timeout: 30})
		assert.NoError(t, err)
		got <- ups
	}()
	for i := range 20 { // other chats' traffic while the poll waits
		_, err := b.Send(tgbotapi.NewMessage(int64(100+i), "busy"))
		require.NoError(t, err)
	}
	select {
	case ups := <-got:
		t.Fatalf("the long poll answered before any update: %v", ups)
	default:
	}
	qid := f.Tap(42, 42, 1, "q:x:0")
	select {
	case ups := <-got:
		require.Len(t, ups, 1)
		require.NotNil(t, ups[0].CallbackQuery)
		assert.Equal(t, qid, ups[0].CallbackQuery.ID)
	case <-time.After(20 * time.Second):
		t.Fatal("the long poll did not answer the tap")
	}
}

// TestTheFakeStallsTheCallsItIsTold: a stalled call hangs until released;
// other calls go through meanwhile.
func TestTheFakeStallsTheCallsItIsTold(t *testing.T) {
	f := tgfake.New()
	defer f.Close()
	b := bot(t, f)
	release := f.Stall(func(r tgfake.Request) bool { return r.ChatID == 7 })
	sent := make(chan error, 1)
	go func() {
		_, err := b.Send(tgbotapi.NewMessage(7, "held"))
		sent <- err
	}()
	require.True(t, f.Wait(10*time.Second, func() bool { return f.Held() == 1 }))
	_, err := b.Send(tgbotapi.NewMessage(8, "not held"))
	require.NoError(t, err)
	select {
	case err := <-sent:
		t.Fatalf("the stalled call returned before its release: %v", err)
	default:
	}
	assert.Empty(t, f.BotMessages(7))
	release()
	require.NoError(t, <-sent)
	assert.Equal(t, 0, f.Held())
	require.Len(t, f.BotMessages(7), 1)
	assert.Equal(t, "held", f.BotMessages(7)[0].Text)
}
