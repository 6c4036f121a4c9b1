package telegram_test

// End-to-end benchmarks through the real Telegram connector, the real
// engine and coordinator, the demo agent, and tgfake as Telegram. Run with:
//
//	go test -run='^$' -bench=E2EQuestions -benchtime=5x ./connectors/telegram
//	go test -run='^$' -bench=E2EOutbound -benchtime=300x ./connectors/telegram
//
// (.ci/bench runs every benchmark with these settings.)
//
// BenchmarkE2EQuestions: N chats (1, 100, 1000) at once each send "ask me a
// question", answer the demo's two questions by tapping (SQLite; then Auth
// and Done on the multi-select) and wait for the turn to end. One op is one
// such round in every chat. It reports rounds/s over all chats and the
// p50/p99 latency from the final tap reaching Telegram (the fake) to the
// agent's permission call returning with the answers, the part of it until
// leashd's getUpdates had the tap (poll-*) and the rest, from leashd
// having the tap to the agent having the answer (leashd-*: what leashd
// itself adds; the poll is Telegram's delivery), how many updates Telegram held
// for leashd when the final tap was made (queued-*: one getUpdates answers
// at most 100, as Telegram does), plus the process RSS
// before the load (idle) and at its end, and the Go heap in use after a GC
// at its end. The connector runs with its defaults (e.g. the 1s interval
// between edits of streamed text) except outbound rate limits, which are
// off: BenchmarkE2EOutbound measures those. RSS and heap are the benchmark
// process's: they include tgfake,
// which keeps every request and message it received.
//
// BenchmarkE2EQuestionsWebhook(Store): the same in webhook mode; poll-* is
// then until the webhook post with the tap reached leashd, and queued-*
// counts the updates waiting for the webhook.
//
// BenchmarkE2EOutbound: messages sent to 50 chats through the connector's
// default pacing (Telegram's published limits) against a fake enforcing
// 1/s per chat and 30/s overall; reports the achieved rate and 429 count.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent/demo"
	"github.com/leashd/leashd/engine/metrics"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// e2eStep bounds each wait of a simulated user; it is never measured.
const e2eStep = 60 * time.Second

// e2eChat is one simulated person in a private chat.
type e2eChat struct {
	id        int64
	msgs      chan *tgbotapi.Message // what the bot sent or edited, as the API answered
	unblocked chan time.Time         // the agent's AskUserQuestion returned
	turnDone  chan struct{}          // the agent's turn returned
}

// e2eRig is a running leashd (engine + Telegram connector + demo agent)
// against tgfake.
type e2eRig struct {
	fake   *tgfake.Server
	conn   *telegram.Connector
	chats  map[int64]*e2eChat
	byChat map[string]*e2eChat
	stop   func()

	metrics   *metrics.Metrics
	stopped   time.Duration // how long the engine took to stop
	afterStop func()        // runs after the engine stopped, before the fake closes
	watched   func()        // waits for the metrics watcher to finish

	received sync.Map // tapKey → when the connector's getUpdates returned the tap
}

func tapKey(chat int64, msg int, data string) string {
	return strconv.FormatInt(chat, 10) + "/" + strconv.Itoa(msg) + "/" + data
}

// e2eClient is the connector's HTTP client: it passes every call on and
// routes the messages Telegram answers with to the chat's simulated user,
// as a Telegram app would show them.
type e2eClient struct {
	rig *e2eRig
	c   *http.Client
}

func (c *e2eClient) Do(r *http.Request) (*http.Response, error) {
	resp, err := c.c.Do(r)
	if err != nil {
		return resp, err
	}
	method := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	if method != "sendMessage" && !strings.HasPrefix(method, "editMessage") && method != "getUpdates" {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return resp, nil
	}
	if method == "getUpdates" {
		// When each tap reached leashd: splits a round's latency into
		// Telegram → leashd (the long poll) and leashd → agent.
		// Parsed on the side (the connector does not wait for the rig),
		// only the fields needed, only when the answer holds a tap.
		now := time.Now()
		if !bytes.Contains(body, []byte(`"callback_query"`)) {
			return resp, nil
		}
		c.rig.noteTaps(body, now, true)
		return resp, nil
	}
	var env struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
	}
	var m tgbotapi.Message
	if json.Unmarshal(body, &env) == nil && env.OK && json.Unmarshal(env.Result, &m) == nil && m.Chat != nil {
		if ch := c.rig.chats[m.Chat.ID]; ch != nil {
			select {
			case ch.msgs <- &m:
			default: // a user far behind loses streamed edits, never blocks leashd
			}
		}
	}
	return resp, nil
}

// e2eAgent wraps the demo agent to timestamp when a question's answer
// reaches it and when its turn ends.
type e2eAgent struct {
	agent.Agent
	rig *e2eRig
}

func (a *e2eAgent) Open(ctx context.Context, o agent.SessionOptions) (agent.Session, error) {
	s, err := a.Agent.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	return &e2eSession{Session: s, chat: a.rig.byChat[o.ChatID]}, nil
}

type e2eSession struct {
	agent.Session
	chat *e2eChat
}

func (s *e2eSession) Turn(ctx context.Context, prompt agent.Prompt, h agent.TurnHandler) (agent.Result, error) {
	res, err := s.Session.Turn(ctx, prompt, &e2eHandler{TurnHandler: h, chat: s.chat})
	if s.chat != nil {
		s.chat.turnDone <- struct{}{}
	}
	return res, err
}

type e2eHandler struct {
	agent.TurnHandler
	chat *e2eChat
}

func (h *e2eHandler) Permission(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	resp := h.TurnHandler.Permission(ctx, req)
	if req.ToolName == agent.ToolAskUserQuestion && h.chat != nil {
		h.chat.unblocked <- time.Now()
	}
	return resp
}

func newE2ERig(b testing.TB, n int, fakeOpts []tgfake.Option, connOpts ...telegram.Option) *e2eRig {
	return newE2ERigLogged(b, n, slog.New(slog.DiscardHandler), "", fakeOpts, connOpts...)
}

// newE2ERigLogged is newE2ERig with a logger and, when db is not "", the
// SQLite store (journal, sessions, recovery) in that file, as leashd runs.
func newE2ERigLogged(b testing.TB, n int, logger *slog.Logger, db string, fakeOpts []tgfake.Option, connOpts ...telegram.Option) *e2eRig {
	return newE2ERigMode(b, n, logger, db, false, fakeOpts, connOpts...)
}

// e2eHookSecret is the webhook secret of the rig in webhook mode.
const e2eHookSecret = "e2e-webhook-secret"

// newE2ERigMode is newE2ERigLogged in long polling or, with webhook, in
// webhook mode: the connector's webhook handler is served on loopback
// HTTP (as leashd serves it on LEASHD_WEB_ADDR behind a TLS proxy) and
// tgfake posts the updates to it, as Telegram does.
func newE2ERigMode(b testing.TB, n int, logger *slog.Logger, db string, webhook bool, fakeOpts []tgfake.Option, connOpts ...telegram.Option) *e2eRig {
	b.Helper()
	fake := tgfake.New(fakeOpts...)
	rig := &e2eRig{fake: fake, chats: map[int64]*e2eChat{}, byChat: map[string]*e2eChat{}}
	users := make([]int64, n)
	for i := range n {
		id := int64(1000 + i)
		users[i] = id
		ch := &e2eChat{id: id, msgs: make(chan *tgbotapi.Message, 512), unblocked: make(chan time.Time, 4), turnDone: make(chan struct{}, 4)}
		rig.chats[id] = ch
		rig.byChat["telegram:"+strconv.FormatInt(id, 10)] = ch
	}
	quiet := logger
	m := metrics.New(metrics.WithLogger(logger))
	rig.metrics = m
	opts := append([]telegram.Option{
		telegram.WithAPIURL(fake.URL()),
		telegram.WithAllowedUsers(users),
		telegram.WithLogger(quiet),
		telegram.WithHTTPClient(&e2eClient{rig: rig, c: telegram.NewHTTPClient()}),
		telegram.WithStats(m),
		telegram.WithPollTimeout(5 * time.Second),
	}, connOpts...)
	var web *httptest.Server
	if webhook {
		mux := http.NewServeMux()
		web = httptest.NewServer(rig.hookTimer(mux))
		opts = append(opts, telegram.WithWebhook(web.URL+hookPath, e2eHookSecret))
		rig.conn = telegram.New(fake.Token(), opts...)
		rig.conn.Mount(mux)
	} else {
		rig.conn = telegram.New(fake.Token(), opts...)
	}
	coordOpts := []interactions.Opt{interactions.WithTimeout(10 * time.Minute)}
	engOpts := []enginetest.Setup{func(d *engine.Deps, _ *engine.Config) { d.Log = quiet }, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = n }, func(d *engine.Deps, _ *engine.Config) { d.Metrics = m }}
	if db != "" {
		st, err := sqlite.Open(context.Background(), db)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		coordOpts = append(coordOpts, interactions.WithJournal(st))
		engOpts = append(engOpts, func(d *engine.Deps, _ *engine.Config) { d.Store = st })
	}
	coord := interactions.New(coordOpts...)
	eng := enginetest.New(&e2eAgent{Agent: demo.New(demo.WithDelay(0)), rig: rig}, coord, engOpts...)
	eng.AddConnector(rig.conn)
	ctx, cancel := context.WithCancel(context.Background())
	// The watcher outlives the engine, to see what shutdown interrupts.
	watchCtx, stopWatch := context.WithCancel(context.Background())
	rig.watched = m.Watch(watchCtx, coord)
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	if !fake.Wait(e2eStep, func() bool { return rig.conn.Ready() == nil }) {
		cancel()
		b.Fatalf("the connector did not become ready: %v", rig.conn.Ready())
	}
	rig.stop = func() {
		start := time.Now()
		cancel()
		if err := <-done; err != nil {
			b.Errorf("engine: %v", err)
		}
		rig.stopped = time.Since(start)
		stopWatch()
		rig.watched()
		if rig.afterStop != nil {
			rig.afterStop()
		}
		fake.Close()
		if web != nil {
			web.Close()
		}
	}
	return rig
}

// hookTimer wraps the webhook handler: it notes when each tap reached
// leashd, as e2eClient does for getUpdates.
func (r *e2eRig) hookTimer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		now := time.Now()
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err == nil && bytes.Contains(body, []byte(`"callback_query"`)) {
			r.noteTaps(body, now, false)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, req)
	})
}

// noteTaps records when the taps in body (a getUpdates answer, or one
// update posted to the webhook) reached leashd; parsed on the side.
func (r *e2eRig) noteTaps(body []byte, at time.Time, polled bool) {
	go func() {
		type query struct {
			Query *struct {
				Data    string `json:"data"`
				Message *struct {
					ID   int `json:"message_id"`
					Chat struct {
						ID int64 `json:"id"`
					} `json:"chat"`
				} `json:"message"`
			} `json:"callback_query"`
		}
		var env struct {
			Result []query `json:"result"`
		}
		if polled {
			if json.Unmarshal(body, &env) != nil {
				return
			}
		} else {
			var one query
			if json.Unmarshal(body, &one) != nil {
				return
			}
			env.Result = append(env.Result, one)
		}
		for _, u := range env.Result {
			if q := u.Query; q != nil && q.Message != nil {
				r.received.Store(tapKey(q.Message.Chat.ID, q.Message.ID, q.Data), at)
			}
		}
	}()
}

// next returns the next message from the bot that satisfies ok.
func (c *e2eChat) next(what string, ok func(tgbotapi.Message) bool) (tgbotapi.Message, error) {
	t := time.NewTimer(e2eStep)
	defer t.Stop()
	for {
		select {
		case m := <-c.msgs:
			if ok(*m) {
				return *m, nil
			}
		case <-t.C:
			return tgbotapi.Message{}, fmt.Errorf("chat %d: no %s within %s", c.id, what, e2eStep)
		}
	}
}

func button(m tgbotapi.Message, contains string) (text, data string, ok bool) {
	if m.ReplyMarkup == nil {
		return "", "", false
	}
	for _, row := range m.ReplyMarkup.InlineKeyboard {
		for _, btn := range row {
			if strings.Contains(btn.Text, contains) && btn.CallbackData != nil {
				return btn.Text, *btn.CallbackData, true
			}
		}
	}
	return "", "", false
}

func hasButton(contains string) func(tgbotapi.Message) bool {
	return func(m tgbotapi.Message) bool { _, _, ok := button(m, contains); return ok }
}

// round is one question round in chat c; it returns the latency from the
// final tap to the agent having the answers, and the part of it until the
// connector received the tap (its long poll).
func (r *e2eRig) round(c *e2eChat, lastQ *int) (time.Duration, time.Duration, error) {
	d, polled, _, err := r.roundQueued(c, lastQ)
	return d, polled, err
}

// roundQueued is round that also returns how many updates Telegram held
// for leashd (not yet confirmed by a getUpdates) when the final tap was
// made: at most 100 are answered per getUpdates.
func (r *e2eRig) roundQueued(c *e2eChat, lastQ *int) (time.Duration, time.Duration, int, error) {
	r.fake.Text(c.id, c.id, "ask me a question")
	q1, err := c.next("first question", func(m tgbotapi.Message) bool {
		return m.MessageID > *lastQ && strings.Contains(m.Text, "Which database?") && hasButton("SQLite")(m)
	})
	if err != nil {
		return 0, 0, 0, err
	}
	_, data, _ := button(q1, "SQLite")
	r.fake.Tap(c.id, c.id, q1.MessageID, data)
	q2, err := c.next("second question", func(m tgbotapi.Message) bool {
		return m.MessageID > q1.MessageID && strings.Contains(m.Text, "Which features?") && hasButton("Done")(m)
	})
	if err != nil {
		return 0, 0, 0, err
	}
	*lastQ = q2.MessageID
	_, data, _ = button(q2, "Auth")
	r.fake.Tap(c.id, c.id, q2.MessageID, data)
	if _, err := c.next("Auth ticked", func(m tgbotapi.Message) bool {
		text, _, ok := button(m, "Auth")
		return m.MessageID == q2.MessageID && ok && text != "Auth" && hasButton("Done")(m)
	}); err != nil {
		return 0, 0, 0, err
	}
	_, done, _ := button(q2, "Done")
	queued := r.fake.PendingUpdates()
	tapped := time.Now()
	r.fake.Tap(c.id, c.id, q2.MessageID, done)
	var at time.Time
	select {
	case at = <-c.unblocked:
	case <-time.After(e2eStep):
		return 0, 0, 0, fmt.Errorf("chat %d: the agent did not get the answers within %s", c.id, e2eStep)
	}
	select {
	case <-c.turnDone:
	case <-time.After(e2eStep):
		return 0, 0, 0, fmt.Errorf("chat %d: the turn did not end within %s", c.id, e2eStep)
	}
	var polled time.Duration
	// The getUpdates answer is parsed on the side: wait for it (a bounded
	// wait, not measured).
	for range 1000 {
		if v, ok := r.received.LoadAndDelete(tapKey(c.id, q2.MessageID, done)); ok {
			polled = v.(time.Time).Sub(tapped)
			break
		}
		time.Sleep(time.Millisecond)
	}
	return at.Sub(tapped), polled, queued, nil
}

func rssMB(b *testing.B) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Logf("no /proc/self/status: RSS not reported (%v)", err)
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

func BenchmarkE2EQuestions(b *testing.B) {
	benchE2EQuestions(b, false, false)
}

// BenchmarkE2EQuestionsStore is BenchmarkE2EQuestions with the SQLite
// store leashd runs with: every interaction journaled (WAL, fsync).
func BenchmarkE2EQuestionsStore(b *testing.B) {
	benchE2EQuestions(b, true, false)
}

// BenchmarkE2EQuestionsWebhook is BenchmarkE2EQuestions in webhook mode:
// tgfake posts each update to the connector's webhook handler over
// loopback HTTP as Telegram does (one update of a chat in flight at a
// time, at most max_connections posts at once: leashd's setWebhook leaves
// Telegram's default, 40). poll-* is then tap → the webhook post reached
// leashd.
func BenchmarkE2EQuestionsWebhook(b *testing.B) {
	benchE2EQuestions(b, false, true)
}

// BenchmarkE2EQuestionsWebhook100 is BenchmarkE2EQuestionsWebhook with the
// webhook registered again with max_connections=100, Telegram's maximum
// (leashd has no setting for it): what asking for more connections buys.
func BenchmarkE2EQuestionsWebhook100(b *testing.B) {
	benchE2EQuestionsConns(b, false, true, 100)
}

// BenchmarkE2EQuestionsWebhookStore is BenchmarkE2EQuestionsWebhook with
// the SQLite store.
func BenchmarkE2EQuestionsWebhookStore(b *testing.B) {
	benchE2EQuestions(b, true, true)
}

func benchE2EQuestions(b *testing.B, withStore, webhook bool) {
	benchE2EQuestionsConns(b, withStore, webhook, 0)
}

// benchE2EQuestionsConns is benchE2EQuestions; with conns > 0 the webhook
// is registered again with that max_connections, as leashd registered it
// otherwise.
func benchE2EQuestionsConns(b *testing.B, withStore, webhook bool, conns int) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("chats=%d", n), func(b *testing.B) {
			db := ""
			if withStore {
				db = filepath.Join(b.TempDir(), "leashd.db")
			}
			rig := newE2ERigMode(b, n, slog.New(slog.DiscardHandler), db, webhook, nil, telegram.WithLimits(telegram.Limits{}))
			defer rig.stop()
			if conns > 0 {
				u, secret := rig.fake.Webhook()
				resp, err := http.PostForm(rig.fake.URL()+"/bot"+rig.fake.Token()+"/setWebhook", url.Values{
					"url": {u}, "secret_token": {secret}, "max_connections": {strconv.Itoa(conns)}})
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
			idle := rssMB(b)
			var (
				mu        sync.Mutex
				latencies []time.Duration
				polls     []time.Duration
				ours      []time.Duration // leashd has the tap → the agent has the answer
				queued    []int
			)
			lastQ := make(map[int64]*int, n)
			for id := range rig.chats {
				lastQ[id] = new(int)
			}
			rounds := 0
			b.ResetTimer()
			for b.Loop() {
				var wg sync.WaitGroup
				for _, c := range rig.chats {
					wg.Go(func() {
						d, polled, q, err := rig.roundQueued(c, lastQ[c.id])
						if err != nil {
							b.Error(err)
							return
						}
						mu.Lock()
						latencies = append(latencies, d)
						polls = append(polls, polled)
						ours = append(ours, d-polled)
						queued = append(queued, q)
						mu.Unlock()
					})
				}
				wg.Wait()
				if b.Failed() {
					b.FailNow()
				}
				rounds += n
			}
			elapsed := b.Elapsed()
			loaded := rssMB(b)
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			slices.Sort(latencies)
			slices.Sort(polls)
			slices.Sort(ours)
			slices.Sort(queued)
			b.ReportMetric(float64(rounds)/elapsed.Seconds(), "rounds/s")
			b.ReportMetric(float64(percentile(polls, 0.50).Microseconds())/1000, "poll-p50-ms")
			b.ReportMetric(float64(percentile(polls, 0.99).Microseconds())/1000, "poll-p99-ms")
			b.ReportMetric(float64(percentile(ours, 0.50).Microseconds())/1000, "leashd-p50-ms")
			b.ReportMetric(float64(percentile(ours, 0.99).Microseconds())/1000, "leashd-p99-ms")
			b.ReportMetric(float64(percentile(latencies, 0.50).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(percentile(latencies, 0.99).Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(queued[len(queued)/2]), "queued-p50")
			b.ReportMetric(float64(queued[(len(queued)-1)*99/100]), "queued-p99")
			b.ReportMetric(idle, "rss-idle-MB")
			b.ReportMetric(loaded, "rss-loaded-MB")
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-loaded-MB")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func BenchmarkE2EOutbound(b *testing.B) {
	const chats = 50
	rig := newE2ERig(b, chats, []tgfake.Option{tgfake.WithLimits(tgfake.Limits{PerChat: 1, Global: 30, RetryAfter: 1})})
	defer rig.stop()
	ids := make([]int64, 0, chats)
	for id := range rig.chats {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	before429 := count429(rig.fake)
	ctx := context.Background()
	b.ResetTimer()
	// One op is one message; they are spread over the chats and sent at
	// once, as busy chats would.
	var wg sync.WaitGroup
	for i := range b.N {
		chat := "telegram:" + strconv.FormatInt(ids[i%chats], 10)
		wg.Go(func() {
			if err := rig.conn.Say(ctx, chat, "message "+strconv.Itoa(i)); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	elapsed := b.Elapsed()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(count429(rig.fake)-before429), "429s")
	b.ReportMetric(float64(len(rig.fake.Violations())), "violations")
}

func count429(f *tgfake.Server) int {
	n := 0
	for _, r := range f.Requests() {
		if r.Status == http.StatusTooManyRequests {
			n++
		}
	}
	return n
}

// scrape reads one series from the rig's /metrics ("" when absent).
func (r *e2eRig) scrape(series string) string {
	rec := httptest.NewRecorder()
	r.metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for line := range strings.SplitSeq(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// The operator's view of a Telegram chat through the real connector and
// engine: /metrics follows the question (pending, answered, interrupted,
// messages sent), every interaction is logged once asked and once resolved
// without the bot token, and stopping leashd with a question pending edits
// its message to say leashd restarted, within the shutdown bound.
func TestE2EMetricsLogsAndShutdown(t *testing.T) {
	logs := &testenv.Buffer{}
	cfg := config.Defaults()
	cfg.LogLevel, cfg.LogFormat = "debug", "json"
	logger, err := config.NewLogger(cfg, logs, telegram.Config{BotToken: tgfake.DefaultToken}.Secrets()...)
	require.NoError(t, err)
	rig := newE2ERigLogged(t, 1, logger, "", nil, telegram.WithLimits(telegram.Limits{}))
	stopped := false
	defer func() {
		if !stopped {
			rig.stop()
		}
	}()
	var c *e2eChat
	for _, ch := range rig.chats {
		c = ch
	}
	require.Equal(t, "0", rig.scrape(`leashd_interactions_pending{kind="question"}`))
	require.Equal(t, "0", rig.scrape(`leashd_outbound_messages_total{connector="telegram"}`))

	// The first question is answered; the second is pending at shutdown.
	rig.fake.Text(c.id, c.id, "ask me a question")
	q1, err := c.next("first question", hasButton("SQLite"))
	require.NoError(t, err)
	_, data, _ := button(q1, "SQLite")
	rig.fake.Tap(c.id, c.id, q1.MessageID, data)
	q2, err := c.next("second question", hasButton("Done"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return rig.scrape(`leashd_interactions_pending{kind="question"}`) == "1" &&
			rig.scrape(`leashd_interactions_resolved_total{kind="question",status="answered"}`) == "1"
	}, e2eStep, 5*time.Millisecond)
	assert.Equal(t, "1", rig.scrape("leashd_sessions_active"))
	sent, err := strconv.Atoi(rig.scrape(`leashd_outbound_messages_total{connector="telegram"}`))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, sent, 2, "both questions were sent through the counted outbox")

	var shownAtStop string
	rig.afterStop = func() {
		for _, m := range rig.fake.Messages(c.id) {
			if m.ID == q2.MessageID {
				shownAtStop = m.Text
			}
		}
	}
	rig.stop()
	stopped = true
	t.Logf("stopped in %s\nmessage when Run returned: %q", rig.stopped, shownAtStop)
	assert.Less(t, rig.stopped, cfg.ShutdownTimeout(), "stopping with a question pending stays within LEASHD_SHUTDOWN_TIMEOUT_SECONDS")
	// Run flushes the connector's background edits before it returns: a
	// process exiting right after Run has told the chat.
	assert.Contains(t, shownAtStop, "Which features?")
	assert.Contains(t, shownAtStop, telegram.InterruptedText, "the pending question's message says leashd restarted by the time Run returns")
	assert.Equal(t, "0", rig.scrape(`leashd_interactions_pending{kind="question"}`))
	assert.Equal(t, "1", rig.scrape(`leashd_interactions_resolved_total{kind="question",status="interrupted"}`))
	assert.Equal(t, "1", rig.scrape(`leashd_interaction_answer_seconds_count{kind="question"}`))

	out := logs.String()
	assert.NotContains(t, out, tgfake.DefaultToken)
	var asked, resolved int
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		switch m["msg"] {
		case "interaction asked":
			asked++
			assert.Equal(t, "telegram:"+strconv.FormatInt(c.id, 10), m["chat"])
			assert.Equal(t, "question", m["kind"])
			assert.NotEmpty(t, m["id"])
		case "interaction resolved":
			resolved++
			assert.Contains(t, m, "latency")
			assert.Contains(t, []any{"answered", "interrupted"}, m["status"])
		}
	}
	// Logged by the metrics watcher (and the coordinator, if it was given
	// a logger: this one was not).
	assert.Equal(t, 2, asked)
	assert.Equal(t, 2, resolved)
}
