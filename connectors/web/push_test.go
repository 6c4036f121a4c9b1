package web_test

import (
	"encoding/json"
	"fmt"
	"image"
	_ "image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/connectors/web"
)

// Only the known push services' hosts (and the extra ones) are taken as
// endpoints: a subscription cannot make leashd send requests anywhere
// else. Bad keys are refused with what is accepted.
func TestPushSubscriptionsOnlyForKnownPushServices(t *testing.T) {
	e, svc, _ := pushEnv(t)
	good := svc.Subscribe("phone").JSON()
	keys := good["keys"]
	post := func(endpoint string, k any) (int, string) {
		b, _ := json.Marshal(map[string]any{"chat_id": "web-x", "subscription": map[string]any{"endpoint": endpoint, "keys": k}})
		return e.post("/api/push/subscriptions", string(b))
	}
	for _, endpoint := range []string{
		"https://169.254.169.254/latest/meta-data", "http://fcm.googleapis.com/fcm/send/x", "https://fcm.googleapis.com.evil.example/x",
		"https://evilpush.apple.com.example/x", "https://localhost/x", "ftp://fcm.googleapis.com/x", "https://user@fcm.googleapis.com/x",
	} {
		st, body := post(endpoint, keys)
		assert.Equal(t, http.StatusBadRequest, st, endpoint)
		assert.Contains(t, body, "endpoint", endpoint)
	}
	for _, endpoint := range []string{"https://fcm.googleapis.com/fcm/send/abc", "https://updates.push.services.mozilla.com/wpush/v2/x",
		"https://web.push.apple.com/Q", "https://db5p.notify.windows.com/w/?token=x", good["endpoint"].(string)} {
		st, body := post(endpoint, keys)
		assert.Equal(t, http.StatusCreated, st, "%s: %s", endpoint, body)
	}
	st, body := post("https://fcm.googleapis.com/x", map[string]string{"p256dh": "AAAA", "auth": "AAAA"})
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, body, "keys.p256dh: must be an uncompressed P-256 public key")
	assert.Len(t, web.PushSubscriptionsOf(e.web, "web-x"), 5)

	st, body = e.post("/api/push/subscriptions", strings.Repeat("[", 10))
	assert.Equal(t, http.StatusBadRequest, st, body)
	st, body = e.post("/api/presence", `{"client":"","chat_id":"web-x","visible":true}`)
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, body, "client: 1 to 100 characters")
}

// The installable app's files are served with their content types, to
// anyone (they hold no secret); the page's security policy still allows
// scripts only from the page's own files.
func TestPWAFiles(t *testing.T) {
	e, _, _ := pushEnv(t)
	for path, ctype := range map[string]string{"/sw.js": "text/javascript; charset=utf-8", "/push.js": "text/javascript; charset=utf-8",
		"/manifest.webmanifest": "application/manifest+json", "/icon-192.png": "image/png", "/icon-512.png": "image/png"} {
		st, hdr, body := e.request(t, "GET", path, "", "")
		assert.Equal(t, http.StatusOK, st, path)
		assert.Equal(t, ctype, hdr.Get("Content-Type"), path)
		assert.NotEmpty(t, body, path)
	}
	_, _, body := e.request(t, "GET", "/manifest.webmanifest", "", "")
	var m struct {
		StartURL string `json:"start_url"`
		Display  string `json:"display"`
		Icons    []struct{ Src, Sizes, Type string }
	}
	assert.NoError(t, json.Unmarshal([]byte(body), &m))
	assert.Equal(t, "/", m.StartURL)
	assert.Equal(t, "standalone", m.Display)
	assert.Len(t, m.Icons, 2)
	for _, ic := range m.Icons {
		_, _, png := e.request(t, "GET", ic.Src, "", "")
		cfg, _, err := image.DecodeConfig(strings.NewReader(png))
		if assert.NoError(t, err, ic.Src) {
			assert.Equal(t, ic.Sizes, fmt.Sprintf("%dx%d", cfg.Width, cfg.Height), "the icon is the size the manifest says")
		}
	}
	_, hdr, _ := e.request(t, "GET", "/", "", "")
	assert.Contains(t, hdr.Get("Content-Security-Policy"), "script-src 'self';")
}
