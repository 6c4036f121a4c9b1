package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"
	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/connectors/web/webpushtest"
)

// pushEnv is the page with push on, sending to a fake push service on
// loopback (its host an extra host, as LEASHD_PUSH_EXTRA_HOSTS adds one).
func pushEnv(t *testing.T) (*env, *webpushtest.Service, string) {
	t.Helper()
	svc := webpushtest.New()
	t.Cleanup(svc.Close)
	priv, pub, err := webpush.GenerateVAPIDKeys()
	require.NoError(t, err)
	e := start(t, setup{webOpts: []web.Option{web.WithPush(web.Push{PublicKey: pub, PrivateKey: priv,
		ExtraHosts: []string{"127.0.0.1"}, Client: svc.Client()})}})
	return e, svc, pub
}

// subscribeThroughPage opens the page, taps Notify me with the push
// service's subscribe stood in for (it needs Google's push service, not
// reachable here: the stand-in gives the subscription sub, as the browser
// would), checks the page asked with leashd's VAPID key, and returns the
// chat the page shows.
func subscribeThroughPage(t *testing.T, ctx context.Context, e *env, sub *webpushtest.Browser, pub string) string {
	t.Helper()
	subJSON, err := json.Marshal(sub.JSON())
	require.NoError(t, err)
	u, err := url.Parse(e.url)
	require.NoError(t, err)
	// The person allows notifications when the browser asks.
	_, err = chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: u.Scheme + "://" + u.Host})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.pageURL()),
		chromedp.WaitVisible(chromedp.CSS("#dot.on")),
		chromedp.WaitVisible(chromedp.CSS("#notify")),
	))
	// The installable app: its manifest, worker and icons.
	manifest, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('link[rel=manifest]').href`))
	require.NoError(t, err)
	assert.Equal(t, e.url+"/manifest.webmanifest", manifest)
	scope, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.serviceWorker.ready.then(r => r.scope)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, e.url+"/", scope, "the service worker controls the whole page")

	// Stand in for the push service's subscribe, keeping what the page asked.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		window.subscribedWith = null;
		PushManager.prototype.getSubscription = async () => null;
		PushManager.prototype.subscribe = async function (opts) {
			window.subscribedWith = { userVisibleOnly: opts.userVisibleOnly, key: btoa(String.fromCharCode(...new Uint8Array(opts.applicationServerKey))) };
			const json = `+string(subJSON)+`;
			return { endpoint: json.endpoint, toJSON: () => json };
		};
		return true;
	})()`))
	require.NoError(t, err)
	click(t, ctx, "#notify")
	waitText(t, ctx, "Notifications on")
	asked, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`window.subscribedWith`))
	require.NoError(t, err)
	key, err := base64.RawURLEncoding.DecodeString(pub)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"userVisibleOnly": true, "key": base64.StdEncoding.EncodeToString(key)}, asked, "subscribed with leashd's VAPID key")
	chat, err := chromedp.Run(ctx, chromedp.Evaluate[string](`state.chat`))
	require.NoError(t, err)
	require.Len(t, web.PushSubscriptionsOf(e.web, chat), 1, "leashd keeps the subscription for the chat shown")

	return chat
}

// hidePage makes the page hidden, as a phone's locked screen does, and
// waits until leashd knows.
func hidePage(t *testing.T, ctx context.Context, e *env, chat string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		Object.defineProperty(document, "visibilityState", { get: () => "hidden", configurable: true });
		document.dispatchEvent(new Event("visibilitychange"));
		return true;
	})()`))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !web.PageShown(e.web, chat) }, 10*time.Second, 10*time.Millisecond)
}

// The page's "Notify me" runs up to PushManager.subscribe (which needs
// Google's push service, not reachable here: the test stands in for it
// with a subscription on the fake service, as the browser would give),
// and leashd keeps the subscription for the chat. A question asked while
// the page is visible sends no push; hidden, one encrypted push arrives
// with a VAPID JWT for the service's origin, and decrypted it names the
// chat and the question and links to it. A service answering 410 has the
// subscription deleted.
func TestBrowserPushNotifications(t *testing.T) {
	ctx := browser(t)
	e, svc, pub := pushEnv(t)
	sub := svc.Subscribe("phone")
	chat := subscribeThroughPage(t, ctx, e, sub, pub)

	// Visible: the question is on screen, no push.
	require.Eventually(t, func() bool { return web.PageShown(e.web, chat) }, 10*time.Second, 10*time.Millisecond)
	sendPrompt(t, ctx, "ask me a question")
	waitText(t, ctx, "Which database?")
	web.WaitPushes(e.web)
	assert.Empty(t, svc.Pushes(), "no push while a page of the chat is on screen")

	// Hidden: the next question is pushed.
	hidePage(t, ctx, e, chat)
	click(t, ctx, `.card button[data-label="SQLite"]`)
	waitText(t, ctx, "Which features?")
	require.Eventually(t, func() bool { return len(svc.Pushes()) == 1 }, 20*time.Second, 10*time.Millisecond, "one push")
	p := svc.Pushes()[0]
	assert.Equal(t, "/push/phone", p.Path)
	assert.Equal(t, "3600", p.Header.Get("TTL"), "a question keeps an hour")
	assert.Equal(t, "normal", p.Header.Get("Urgency"))
	claims, err := webpushtest.VAPID(p, pub, svc.URL)
	require.NoError(t, err, "the VAPID JWT")
	assert.NotEmpty(t, claims["sub"])
	plain, err := sub.Decrypt(p)
	require.NoError(t, err)
	var msg map[string]any
	require.NoError(t, json.Unmarshal(plain, &msg))
	assert.Equal(t, "leashd · “ask me a question”", msg["title"], "names the chat")
	assert.Equal(t, "Which features?", msg["body"], "names the question")
	assert.True(t, strings.HasPrefix(msg["url"].(string), "/?chat="+url.QueryEscape(chat)+"#i-"), "opens the page at it: %v", msg["url"])

	// The push service says the subscription is gone: it is deleted.
	svc.Answer(http.StatusGone)
	click(t, ctx, `.card:not(.closed) button.reject`)
	sendPrompt(t, ctx, "run bash")
	require.Eventually(t, func() bool { return len(svc.Pushes()) == 2 }, 20*time.Second, 10*time.Millisecond, "the approval's push")
	p = svc.Pushes()[1]
	assert.Equal(t, "high", p.Header.Get("Urgency"), "an approval holds the agent up")
	assert.Equal(t, "900", p.Header.Get("TTL"))
	web.WaitPushes(e.web)
	assert.Empty(t, web.PushSubscriptionsOf(e.web, chat), "410 deleted the subscription")
}
