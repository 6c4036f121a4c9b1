package tgfake_test

import (
	"errors"
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
