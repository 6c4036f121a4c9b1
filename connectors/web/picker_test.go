package web_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// optionLabel is the picker's label of a chat.
func optionLabel(t *testing.T, ctx context.Context, chat string) string {
	t.Helper()
	return evalJS[string](t, ctx, `(document.querySelector('#chats option[value="`+chat+`"]') || {}).textContent || ""`)
}

// waitLabel waits until the picker's label of chat matches re.
func waitLabel(t *testing.T, ctx context.Context, chat, re string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !regexp.MustCompile(re).MatchString(optionLabel(t, ctx, chat)) {
		if time.Now().After(deadline) {
			t.Fatalf("the picker calls %s %q, want %s", chat, optionLabel(t, ctx, chat), re)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Issue 31.6: with requests pending in two chats of this browser, the
// picker says which chat waits for the person and how many, and names
// each chat by its first message, or by the name the person gives it
// (kept after a reload).
func TestBrowserPickerSaysWhichChatWaits(t *testing.T) {
	ctx, e, s, first := phone(t)
	click(t, ctx, "#newchat")
	second := evalJS[string](t, ctx, `localStorage.getItem("leashd.chat")`)
	require.NotEqual(t, first, second)

	ask := func(chat, q string) string {
		b, _ := json.Marshal(map[string]any{"chat_id": chat, "question": q, "options": []map[string]string{{"label": "Yes"}, {"label": "No"}}})
		return e.askID(string(b))
	}
	ask(first, "Ship release 1.2?")
	s.next("interaction.requested")
	a2 := ask(second, "Rotate the API keys?")
	s.next("interaction.requested")
	ask(second, "Restart the workers?")
	s.next("interaction.requested")

	waitLabel(t, ctx, first, `^Ship release 1\.2\? · 1 waiting \(\d+\)$`)
	waitLabel(t, ctx, second, `^Rotate the API keys\? · 2 waiting$`)

	// Answered here: one fewer waits.
	click(t, ctx, `.card[data-id="`+a2+`"] button[data-label="Yes"]`)
	waitLabel(t, ctx, second, `^Rotate the API keys\? · 1 waiting$`)

	// The person names the chat; the name stays after a reload.
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`window.prompt = () => "Key rotation"`))
	require.NoError(t, err)
	click(t, ctx, "#rename")
	waitLabel(t, ctx, second, `^Key rotation · 1 waiting$`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	waitLabel(t, ctx, second, `^Key rotation · 1 waiting$`)
	waitLabel(t, ctx, first, `^Ship release 1\.2\? · 1 waiting`)
	assert.NotContains(t, visibleText(t, ctx), "This browser 2")
}
