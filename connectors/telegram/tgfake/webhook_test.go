package tgfake_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

// hookSite is a bot's webhook endpoint for these tests: it records every
// post (update ID and chat, in arrival order), how many were in flight at
// once overall and per chat, and the TCP connections the fake opened; a
// test decides each answer with answer (nil: 200 at once).
type hookSite struct {
	srv    *httptest.Server
	answer func(r *http.Request, u tgbotapi.Update) int

	mu          sync.Mutex
	got         []int           // update IDs, in arrival order
	byChat      map[int64][]int // update IDs per chat, in arrival order
	inFlight    int
	maxInFlight int
	chatFlight  map[int64]int
	overlap     []string               // a chat with two posts in flight at once
	left        map[*http.Request]bool // posts the fake is known to give up on
	conns       int
	arrived     chan int // update IDs as they arrive
}

func newHookSite(t *testing.T) *hookSite {
	h := &hookSite{byChat: map[int64][]int{}, chatFlight: map[int64]int{}, arrived: make(chan int, 1000)}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(h.serve))
	h.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			h.mu.Lock()
			h.conns++
			h.mu.Unlock()
		}
	}
	h.srv.Start()
	t.Cleanup(h.srv.Close)
	return h
}

func chatOf(u tgbotapi.Update) int64 {
	if u.Message != nil {
		return u.Message.Chat.ID
	}
	if u.CallbackQuery != nil && u.CallbackQuery.Message != nil {
		return u.CallbackQuery.Message.Chat.ID
	}
	return 0
}

func (h *hookSite) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var u tgbotapi.Update
	if err := json.Unmarshal(body, &u); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	chat := chatOf(u)
	h.mu.Lock()
	h.got = append(h.got, u.UpdateID)
	h.byChat[chat] = append(h.byChat[chat], u.UpdateID)
	h.inFlight++
	h.maxInFlight = max(h.maxInFlight, h.inFlight)
	h.chatFlight[chat]++
	if h.chatFlight[chat] > 1 {
		h.overlap = append(h.overlap, "chat "+strconv.FormatInt(chat, 10)+": update "+strconv.Itoa(u.UpdateID)+" arrived while another was in flight")
	}
	h.mu.Unlock()
	h.arrived <- u.UpdateID
	code := http.StatusOK
	if h.answer != nil {
		code = h.answer(r, u)
	}
	h.mu.Lock()
	if !h.left[r] {
		h.inFlight--
		h.chatFlight[chat]--
	}
	delete(h.left, r)
	h.mu.Unlock()
	w.WriteHeader(code)
}

// abandoned stops counting r as in flight: the test makes the site hang on
// it until the fake times out and sends it again. When the site's server
// notices the fake hung up is up to the machine's load, and the retry may
// come first; Telegram's server does not wait for that either.
func (h *hookSite) abandoned(r *http.Request, u tgbotapi.Update) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.left == nil {
		h.left = map[*http.Request]bool{}
	}
	h.left[r] = true
	h.inFlight--
	h.chatFlight[chatOf(u)]--
}

// setWebhook registers the site with the fake, as a bot would.
func setWebhook(t *testing.T, f *tgfake.Server, target string, params url.Values) {
	t.Helper()
	if params == nil {
		params = url.Values{}
	}
	params.Set("url", target)
	resp, err := http.PostForm(f.URL()+"/bot"+f.Token()+"/setWebhook", params)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func webhookInfo(t *testing.T, f *tgfake.Server) tgbotapi.WebhookInfo {
	t.Helper()
	resp, err := http.Get(f.URL() + "/bot" + f.Token() + "/getWebhookInfo")
	require.NoError(t, err)
	defer resp.Body.Close()
	var env struct {
		Result tgbotapi.WebhookInfo `json:"result"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	return env.Result
}

func (h *hookSite) snapshot() (got []int, byChat map[int64][]int, maxInFlight, conns int, overlap []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	byChat = map[int64][]int{}
	for k, v := range h.byChat {
		byChat[k] = append([]int(nil), v...)
	}
	return append([]int(nil), h.got...), byChat, h.maxInFlight, h.conns, append([]string(nil), h.overlap...)
}

// TestWebhookAtMostMaxConnectionsInFlight: with max_connections=3 and a
// bot that holds every post until the test lets it go, 12 chats' updates
// reach it at most 3 at a time, over at most 3 connections, and all of
// them arrive in the end (Telegram queues the rest; it drops none).
func TestWebhookAtMostMaxConnectionsInFlight(t *testing.T) {
	f := tgfake.New()
	defer f.Close()
	h := newHookSite(t)
	release := make(chan struct{})
	h.answer = func(*http.Request, tgbotapi.Update) int { <-release; return http.StatusOK }
	setWebhook(t, f, h.srv.URL+"/hook", url.Values{"max_connections": {"3"}})
	assert.Equal(t, 3, webhookInfo(t, f).MaxConnections)

	const n = 12
	for i := range n {
		f.Text(int64(100+i), int64(100+i), "hello")
	}
	arrive := func() {
		t.Helper()
		select {
		case <-h.arrived:
		case <-time.After(10 * time.Second):
			t.Fatal("an update never reached the webhook")
		}
	}
	// Three posts fill the connections; then each release lets one more
	// in, and every arrival is counted before the next release.
	for range 3 {
		arrive()
	}
	for range n - 3 {
		release <- struct{}{}
		arrive()
	}
	for range 3 {
		release <- struct{}{}
	}
	require.True(t, f.Wait(10*time.Second, func() bool { return f.PendingUpdates() == 0 }), "updates still pending: %d", f.PendingUpdates())
	got, _, maxInFlight, conns, _ := h.snapshot()
	assert.Len(t, got, n, "every update was delivered once")
	assert.LessOrEqual(t, maxInFlight, 3, "posts in flight at once")
	assert.LessOrEqual(t, conns, 3, "connections opened to the webhook")
}

// TestWebhookDeliversAChatsUpdatesInOrder: two chats each get 30 updates
// in a burst (and the default 40 connections are free); each chat's
// updates arrive in update_id order, never two of one chat in flight.
func TestWebhookDeliversAChatsUpdatesInOrder(t *testing.T) {
	f := tgfake.New()
	defer f.Close()
	h := newHookSite(t)
	// A bot that takes a moment per update, as one that does some work.
	h.answer = func(*http.Request, tgbotapi.Update) int { time.Sleep(time.Millisecond); return http.StatusOK }
	setWebhook(t, f, h.srv.URL+"/hook", nil)
	want := map[int64][]int{}
	for i := range 30 {
		for _, chat := range []int64{7, -8} {
			want[chat] = append(want[chat], f.Text(chat, 7, "m"+strconv.Itoa(i)))
		}
	}
	require.True(t, f.Wait(10*time.Second, func() bool { return f.PendingUpdates() == 0 }), "updates still pending: %d", f.PendingUpdates())
	_, byChat, _, _, overlap := h.snapshot()
	assert.Equal(t, want, byChat, "each chat's updates, in the order they arrived")
	assert.Empty(t, overlap)
}

// TestWebhookRetriesAFailedDelivery: a 500, then a post the bot does not
// answer within the fake's timeout: neither update is dropped, each is
// sent again, and the chat's next update waits until the one before it
// was accepted. getWebhookInfo tells the last error.
func TestWebhookRetriesAFailedDelivery(t *testing.T) {
	f := tgfake.New(tgfake.WithWebhookTimeout(200 * time.Millisecond))
	defer f.Close()
	h := newHookSite(t)
	var mu sync.Mutex
	attempts := map[int]int{}
	h.answer = func(r *http.Request, u tgbotapi.Update) int {
		mu.Lock()
		attempts[u.UpdateID]++
		a := attempts[u.UpdateID]
		mu.Unlock()
		switch {
		case u.Message.Text == "first" && a == 1:
			return http.StatusInternalServerError
		case u.Message.Text == "second" && a == 1:
			h.abandoned(r, u)
			<-r.Context().Done() // hangs until the fake gives up on it
			return http.StatusOK
		}
		return http.StatusOK
	}
	setWebhook(t, f, h.srv.URL+"/hook", nil)
	first := f.Text(5, 5, "first")
	second := f.Text(5, 5, "second")
	third := f.Text(5, 5, "third")
	require.True(t, f.Wait(10*time.Second, func() bool { return f.PendingUpdates() == 0 }), "updates still pending: %d", f.PendingUpdates())
	got, _, _, _, overlap := h.snapshot()
	assert.Equal(t, []int{first, first, second, second, third}, got, "each failed delivery is sent again before the chat's next update")
	assert.Empty(t, overlap)
	var statuses []int
	for _, r := range f.Requests() {
		if r.Method == "webhook" {
			statuses = append(statuses, r.Status)
		}
	}
	assert.Equal(t, []int{500, 200, 0, 200, 200}, statuses, "the fake's record of its deliveries (0: no answer)")
	info := webhookInfo(t, f)
	assert.Equal(t, "Read timeout expired", info.LastErrorMessage)
	assert.NotZero(t, info.LastErrorDate)
	assert.Zero(t, info.PendingUpdateCount)
}

// TestWebhookDeletedHandsPendingUpdatesToGetUpdates: updates waiting for a
// webhook that is then deleted are answered by getUpdates, in order.
func TestWebhookDeletedHandsPendingUpdatesToGetUpdates(t *testing.T) {
	f := tgfake.New()
	defer f.Close()
	h := newHookSite(t)
	h.answer = func(*http.Request, tgbotapi.Update) int { return http.StatusServiceUnavailable }
	setWebhook(t, f, h.srv.URL+"/hook", nil)
	a := f.Text(9, 9, "a")
	b := f.Text(9, 9, "b")
	// The first attempt and its immediate retry fail; then it waits 2s.
	require.True(t, f.Wait(10*time.Second, func() bool { return f.Count("webhook") >= 2 }))
	assert.Equal(t, 2, webhookInfo(t, f).PendingUpdateCount)
	resp, err := http.PostForm(f.URL()+"/bot"+f.Token()+"/deleteWebhook", nil)
	require.NoError(t, err)
	resp.Body.Close()
	bt := bot(t, f)
	ups, err := bt.GetUpdates(tgbotapi.UpdateConfig{})
	require.NoError(t, err)
	var ids []int
	for _, u := range ups {
		ids = append(ids, u.UpdateID)
	}
	assert.Equal(t, []int{a, b}, ids)
}

func TestWebhookMaxConnectionsIsClamped(t *testing.T) {
	f := tgfake.New()
	defer f.Close()
	for v, want := range map[string]int{"": 40, "0": 1, "101": 100, "7": 7} {
		p := url.Values{}
		if v != "" {
			p.Set("max_connections", v)
		}
		setWebhook(t, f, "https://example.com/hook", p)
		assert.Equal(t, want, webhookInfo(t, f).MaxConnections, "max_connections=%q", v)
	}
	resp, err := http.PostForm(f.URL()+"/bot"+f.Token()+"/setWebhook", url.Values{"url": {"https://example.com/hook"}, "max_connections": {"many"}})
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "max_connections must be an integer 1-100")
}
