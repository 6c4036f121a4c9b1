package telegram_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

// TestWebhookIsServedAtTheURLsPath: the route served is the registered
// URL's own path, exactly (not a fixed /telegram/webhook, and a trailing
// slash does not make it a prefix).
func TestWebhookIsServedAtTheURLsPath(t *testing.T) {
	for _, tc := range []struct {
		url, path       string
		served, refused []string
	}{
		{"https://bot.example.com/hooks/tg-7f3a", "/hooks/tg-7f3a", []string{"/hooks/tg-7f3a"}, []string{"/telegram/webhook", "/hooks/tg-7f3a/x", "/hooks"}},
		{"https://bot.example.com/tg/", "/tg/", []string{"/tg/"}, []string{"/tg/x", "/telegram/webhook"}},
		{"https://bot.example.com", "/", []string{"/"}, []string{"/x", "/telegram/webhook"}},
		{"https://bot.example.com:8443/a%20b?x=1", "/a b", []string{"/a%20b"}, []string{"/a"}},
	} {
		t.Run(tc.url, func(t *testing.T) {
			p, err := telegram.WebhookPath(tc.url)
			require.NoError(t, err)
			assert.Equal(t, tc.path, p)
			mux := http.NewServeMux()
			telegram.New(tgfake.DefaultToken, telegram.WithWebhook(tc.url, "s3cret")).Mount(mux)
			for _, path := range tc.served {
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader("{}")))
				// Mounted: the webhook's own answer (no secret sent).
				assert.Equal(t, http.StatusUnauthorized, rec.Code, "POST %s", path)
			}
			for _, path := range tc.refused {
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader("{}")))
				assert.Equal(t, http.StatusNotFound, rec.Code, "POST %s", path)
			}
		})
	}
}

func TestWebhookPathThatCannotBeServedIsRefused(t *testing.T) {
	for _, u := range []string{"https://bot.example.com/{id}", "https://bot.example.com/%zz", "bot.example.com/hook", "https://bot.example.com/a//b", "https://bot.example.com/a/../b"} {
		_, err := telegram.WebhookPath(u)
		require.Error(t, err, u)
		assert.Contains(t, err.Error(), "LEASHD_TELEGRAM_WEBHOOK_URL", u)
		mux := http.NewServeMux()
		c := telegram.New(tgfake.DefaultToken, telegram.WithWebhook(u, "s3cret"))
		c.Mount(mux) // not mounted, no panic
		err = c.Run(t.Context(), nopHandler{})
		require.Error(t, err, u)
	}
}

// FuzzWebhookPath: whatever the URL, WebhookPath either refuses it or
// gives a path that can be mounted, and a post to that path reaches the
// webhook handler.
func FuzzWebhookPath(f *testing.F) {
	for _, s := range []string{"https://bot.example.com/hooks/tg", "https://x/", "https://x", "https://x/a/{b}", "https://x/%7Bb%7D", "::", "https://x/a%2Fb", "https://x//"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if u == "" {
			return // no webhook: long polling
		}
		p, err := telegram.WebhookPath(u)
		if err != nil {
			return
		}
		require.True(t, strings.HasPrefix(p, "/"), "path %q", p)
		mux := http.NewServeMux()
		telegram.New(tgfake.DefaultToken, telegram.WithWebhook(u, "s3cret")).Mount(mux)
		req := httptest.NewRequest(http.MethodPost, "http://x/", strings.NewReader("{}"))
		req.URL.Path = p
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code == http.StatusMovedPermanently || rec.Code == http.StatusTemporaryRedirect {
			return // the mux cleans paths such as //: Telegram follows no redirects, but nothing crashed
		}
		assert.Equal(t, http.StatusUnauthorized, rec.Code, "POST %q (URL %q)", p, u)
	})
}
