package telegram

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// libraryDecode is how go-telegram-bot-api reads a getUpdates answer: the
// reference decodeUpdates must agree with.
func libraryDecode(body string) ([]tgbotapi.Update, error) {
	var resp tgbotapi.APIResponse
	if err := json.NewDecoder(strings.NewReader(body)).Decode(&resp); err != nil {
		return nil, err
	}
	if !resp.Ok {
		return nil, &tgbotapi.Error{Code: resp.ErrorCode, Message: resp.Description}
	}
	var ups []tgbotapi.Update
	err := json.Unmarshal(resp.Result, &ups)
	return ups, err
}

func collect(body string) ([]tgbotapi.Update, error) {
	var got []tgbotapi.Update
	err := decodeUpdates(strings.NewReader(body), func(u tgbotapi.Update) { got = append(got, u) })
	return got, err
}

func TestDecodeUpdates(t *testing.T) {
	body := `{"ok":true,"result":[{"update_id":7,"message":{"message_id":1,"chat":{"id":42,"type":"private"},"from":{"id":42,"first_name":"A"},"text":"hi"}},` +
		`{"update_id":8,"callback_query":{"id":"q1","from":{"id":42,"first_name":"A"},"data":"q:x:0","message":{"message_id":2,"chat":{"id":42,"type":"private"}}}}]}`
	got, err := collect(body)
	require.NoError(t, err)
	want, err := libraryDecode(body)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	require.Len(t, got, 2)
	assert.Equal(t, "hi", got[0].Message.Text)
	assert.Equal(t, "q:x:0", got[1].CallbackQuery.Data)

	_, err = collect(`{"ok":false,"error_code":409,"description":"Conflict: terminated by other getUpdates request","parameters":{"retry_after":3}}`)
	var te *tgbotapi.Error
	require.True(t, errors.As(err, &te), "a refusal is the library's error: %v", err)
	assert.Equal(t, 409, te.Code)
	assert.Equal(t, 3, te.RetryAfter)

	got, err = collect(`{"ok":true,"result":[{"update_id":9},{"update_id":`)
	assert.Error(t, err, "a cut answer is an error")
	assert.Len(t, got, 1, "the updates read before the cut are handed on (the offset moves past them)")

	for _, bad := range []string{``, `[]`, `{"ok":true,"result":{}}`, `<html>502 Bad Gateway</html>`} {
		_, err := collect(bad)
		assert.Error(t, err, bad)
	}
}

// decodeUpdates never panics, and when it accepts an answer it hands on
// what the library would have read from it.
func FuzzDecodeUpdates(f *testing.F) {
	for _, s := range []string{
		`{"ok":true,"result":[]}`,
		`{"ok":true,"result":[{"update_id":1,"message":{"message_id":1,"chat":{"id":1,"type":"private"},"text":"x"}}]}`,
		`{"ok":false,"error_code":429,"description":"Too Many Requests","parameters":{"retry_after":1}}`,
		`{"result":[{"update_id":2}],"ok":true,"extra":[1,{"a":null}]}`,
		`{"ok":true,"result":[{"update_id":3,"callback_query":{"id":"q","data":"d"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, err := collect(body)
		if err != nil {
			return
		}
		want, lerr := libraryDecode(body)
		if lerr != nil {
			// The library reads only the first JSON value (trailing data,
			// duplicate keys…); ours may accept what it does not, never
			// the other way round for a well-formed answer.
			return
		}
		if len(want) == 0 {
			want = nil
		}
		assert.Equal(t, want, got)
	})
}

// BenchmarkDecodeUpdates: one full getUpdates answer (100 taps on a
// question with five buttons), read the library's way (two passes) and
// decodeUpdates' way.
func BenchmarkDecodeUpdates(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"ok":true,"result":[`)
	for i := range 100 {
		if i > 0 {
			sb.WriteByte(',')
		}
		kb := `{"inline_keyboard":[[{"text":"Auth","callback_data":"q:abcdefgh:0"}],[{"text":"Search","callback_data":"q:abcdefgh:1"}],[{"text":"Billing","callback_data":"q:abcdefgh:2"}],[{"text":"Other…","callback_data":"q:abcdefgh:o"}],[{"text":"Done","callback_data":"q:abcdefgh:d"}]]}`
		fmt.Fprintf(&sb, `{"update_id":%d,"callback_query":{"id":"q%d","from":{"id":%d,"is_bot":false,"first_name":"User %d"},"message":{"message_id":7,"date":0,"chat":{"id":%d,"type":"private"},"text":"<b>Which features?</b> (choose any, then Done)","reply_markup":%s},"chat_instance":"ci%d","data":"q:abcdefgh:d"}}`,
			1000+i, i, 1000+i, 1000+i, 1000+i, kb, 1000+i)
	}
	sb.WriteString(`]}`)
	body := sb.String()
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			ups, err := libraryDecode(body)
			if err != nil || len(ups) != 100 {
				b.Fatal(err, len(ups))
			}
		}
	})
	b.Run("decodeUpdates", func(b *testing.B) {
		for b.Loop() {
			n := 0
			if err := decodeUpdates(strings.NewReader(body), func(tgbotapi.Update) { n++ }); err != nil || n != 100 {
				b.Fatal(err, n)
			}
		}
	})
}

// An update Telegram sent that the library cannot read (here a message that
// is a string) is handed on with only its update_id, so that the offset
// passes it, and the error names it; the updates after it in the same
// answer are handled, not asked for again behind it forever.
func TestDecodeUpdatesSkipsAnUnreadableUpdate(t *testing.T) {
	body := `{"ok":true,"result":[{"update_id":7,"message":{"message_id":1,"chat":{"id":42,"type":"private"},"text":"hi"}},` +
		`{"update_id":8,"message":"oops"},` +
		`{"update_id":9,"callback_query":{"id":"q1","from":{"id":42,"first_name":"A"},"data":"q:x:0"}}]}`
	got, err := collect(body)
	var bad *badUpdatesError
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "update 8 skipped")
	require.Len(t, got, 3)
	assert.Equal(t, "hi", got[0].Message.Text)
	assert.Equal(t, tgbotapi.Update{UpdateID: 8}, got[1])
	require.NotNil(t, got[2].CallbackQuery)
	assert.Equal(t, "q:x:0", got[2].CallbackQuery.Data)

	// Without an update_id nothing can be confirmed: the answer is an error.
	_, err = collect(`{"ok":true,"result":[{"message":"oops"}]}`)
	require.Error(t, err)
	assert.NotErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), "no update_id")
}
