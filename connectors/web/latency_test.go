package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/stretchr/testify/require"
)

// slowToggles is a proxy in front of leashd that holds the responses to
// toggles until release: a slow network on which the toggle's effect
// comes over the event stream long before its own response.
type slowToggles struct {
	*httptest.Server
	once    sync.Once
	release chan struct{}
}

func newSlowToggles(t *testing.T, backend string) *slowToggles {
	u, err := url.Parse(backend)
	require.NoError(t, err)
	p := &slowToggles{release: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(r *http.Response) error {
		if strings.HasSuffix(r.Request.URL.Path, "/toggle") {
			<-p.release
		}
		return nil
	}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(func() { p.let(); p.Close() })
	return p
}

// let lets the held responses go.
func (p *slowToggles) let() { p.once.Do(func() { close(p.release) }) }

// Issue 31.3: on a slow network a tap on Done right after a toggle is
// not dropped: the tick and "Done (1 selected)" show (event stream) while
// the toggle's own request is still on its way, and Done, tapped then,
// is sent once the toggle's response is in.
func TestBrowserDoneTappedWhileAToggleIsOnItsWay(t *testing.T) {
	ctx := browser(t)
	e := start(t, setup{})
	s := e.subscribe("")
	p := newSlowToggles(t, e.url)
	require.NoError(t, chromedp.Do(ctx, chromedp.Emulate(device.IPhone12)))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(p.URL+"/?token="+url.QueryEscape(e.token)), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	mine := evalJS[string](t, ctx, `localStorage.getItem("leashd.chat")`)

	b, _ := json.Marshal(map[string]any{"chat_id": mine, "question": "Which features?", "multi_select": true,
		"options": []map[string]string{{"label": "Auth"}, {"label": "Search"}}})
	aid := e.askID(string(b))
	card, _ := waitCard(t, ctx, s)
	click(t, ctx, card+` button[data-label="Search"]`)
	s.until("interaction.updated", func(ev sseEvent) bool { return len(ev.Data["selected"].([]any)) == 1 })
	waitSel(t, ctx, card+` button.on[data-label="Search"]`)
	waitText(t, ctx, "Done (1 selected)")
	click(t, ctx, card+" button.confirm") // the toggle's response is still held
	p.let()

	r := s.resolved(aid)
	require.Equal(t, "Search", r.Data["answer"], "the tap on Done arrived")
	waitText(t, ctx, "Answered: Search · by you")
}
