package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/httpserver"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/demo"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// env is a running leashd: the real engine, the demo agent, the real
// coordinator and the web connector on a loopback port.
type env struct {
	t      testing.TB
	url    string
	token  string
	coord  *interactions.Coordinator
	eng    *engine.Engine
	web    *web.Connector
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	store  *sqlite.Store
	srv    *httpserver.Server
	served chan error
}

type setup struct {
	coordOpts []interactions.Opt
	webOpts   []web.Option
	server    httpserver.Options      // the server's bounds (its listener is the harness's)
	routes    map[string]http.Handler // more routes on the server, as cmd/leashd mounts /healthz
	mounts    []connectors.Mounter    // more routes, as chat apps mount their webhooks
	extra     []connectors.Connector
	token     string        // the API's token (default harnessToken: the API always needs one)
	addr      string        // listen here (default: a free loopback port)
	db        string        // a SQLite file for sessions and recovery (default: none)
	crash     bool          // with db: the shutdown is not recorded, as after a crash
	delay     time.Duration // the demo agent's streaming delay
	engOpts   []enginetest.Setup
	agent     agent.Agent // default: the demo agent
}

// harnessToken is the API token of a harness that sets none.
const harnessToken = "harness-t0ken-5f3e9a1c"

func start(t testing.TB, s setup) *env {
	t.Helper()
	if s.token == "" {
		s.token = harnessToken
	}
	engOpts := []enginetest.Setup{func(_ *engine.Deps, c *engine.Config) { c.WorkDir = "/w" }, func(_ *engine.Deps, c *engine.Config) { c.CloseTimeout = 2 * time.Second }}
	engOpts = append(engOpts, s.engOpts...)
	coordOpts := s.coordOpts
	var st *sqlite.Store
	if s.db != "" {
		var err error
		st, err = sqlite.Open(context.Background(), s.db)
		require.NoError(t, err)
		var j interactions.Journal = st
		if s.crash {
			j = crashJournal{st}
		}
		coordOpts = append(coordOpts, interactions.WithJournal(j))
		engOpts = append(engOpts, func(d *engine.Deps, _ *engine.Config) { d.Store = st }, func(d *engine.Deps, _ *engine.Config) { d.Store = st })
	}
	coord := interactions.New(coordOpts...)
	var ag agent.Agent = demo.New(demo.WithDelay(s.delay))
	if s.agent != nil {
		ag = s.agent
	}
	eng := enginetest.New(ag, coord, engOpts...)
	addr := s.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	srv, w := newServer(t, ln, s)
	require.Error(t, w.Ready(), "not ready before Run")
	eng.AddConnector(w)
	for _, c := range s.extra {
		eng.AddConnector(c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{t: t, token: s.token, coord: coord, eng: eng, web: w, cancel: cancel, done: make(chan error, 1), store: st,
		srv: srv, served: make(chan error, 1)}
	go func() { e.served <- srv.Serve(ctx) }()
	go func() { e.done <- eng.Run(ctx) }()
	require.Eventually(t, func() bool { return w.Ready() == nil && srv.Ready() == nil }, 10*time.Second, time.Millisecond)
	e.url = w.URL()
	t.Cleanup(e.stop)
	return e
}

// newServer is leashd's HTTP server on ln with the web connector and the
// setup's routes mounted, as cmd/leashd builds it.
func newServer(t testing.TB, ln net.Listener, s setup) (*httpserver.Server, *web.Connector) {
	t.Helper()
	o := s.server
	o.Listener = ln
	srv := httpserver.New(o)
	require.NoError(t, srv.Listen())
	opts := []web.Option{web.WithURL(srv.URL()), web.WithAgentName("demo agent"), web.WithToken(s.token),
		web.WithConnCap(srv.ConnCap()), web.WithWriteTimeout(srv.WriteTimeout())}
	w := web.New(append(opts, s.webOpts...)...)
	require.NoError(t, srv.Mount(w))
	for pattern, h := range s.routes {
		require.NoError(t, srv.Handle(pattern, h))
	}
	for _, m := range s.mounts {
		require.NoError(t, srv.Mount(m))
	}
	return srv, w
}

// stop cancels the engine and waits for Run to return nil (once).
func (e *env) stop() {
	e.once.Do(func() {
		e.cancel()
		select {
		case err := <-e.done:
			require.NoError(e.t, err)
			e.srv.Drain()
			require.NoError(e.t, <-e.served)
		case <-time.After(20 * time.Second):
			e.t.Fatal("engine.Run did not return after cancel")
		}
		if e.store != nil {
			require.NoError(e.t, e.store.Close())
		}
	})
}

// do sends a request with the token (when set) and returns the status and
// body.
func (e *env) do(method, path, body string, hdr ...string) (int, string) {
	e.t.Helper()
	st, _, b := e.request(e.t, method, path, body, e.token, hdr...)
	return st, b
}

// request sends a request with token (none when empty) and returns the
// status, the response headers and the body.
func (e *env) request(t testing.TB, method, path, body, token string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, r)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

// pageURL opens the page with the token, as the address leashd prints at
// start-up does (the page keeps it in a cookie and drops it from the
// address).
func (e *env) pageURL() string { return e.url + "/?token=" + url.QueryEscape(e.token) }

func (e *env) post(path, body string) (int, string) { e.t.Helper(); return e.do("POST", path, body) }

// send posts a chat message and checks where it was routed.
func (e *env) send(chat, text, routed string) {
	e.t.Helper()
	b, _ := json.Marshal(map[string]string{"text": text})
	st, body := e.post("/api/chats/"+chat+"/messages", string(b))
	require.Equal(e.t, http.StatusAccepted, st, body)
	require.JSONEq(e.t, `{"routed":"`+routed+`"}`, body)
}

func (e *env) reply(id, body string) (int, string) {
	e.t.Helper()
	return e.post("/api/interactions/"+id+"/reply", body)
}

// sseEvent is one event read from /api/events.
type sseEvent struct {
	ID, Name string
	Data     map[string]any
	Raw      string
}

type sse struct {
	t      testing.TB
	resp   *http.Response
	events chan sseEvent
	lines  chan string // comment lines
	unread []sseEvent  // read from the stream, not yet taken
}

// subscribe opens /api/events with query q; it is live when it returns.
func (e *env) subscribe(q string, hdr ...string) *sse {
	e.t.Helper()
	req, err := http.NewRequest("GET", e.url+"/api/events"+q, nil)
	require.NoError(e.t, err)
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
	require.Equal(e.t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &sse{t: e.t, resp: resp, events: make(chan sseEvent, 1024), lines: make(chan string, 1024)}
	go s.read()
	e.t.Cleanup(func() { resp.Body.Close() })
	return s
}

func (s *sse) read() {
	defer close(s.events)
	br := bufio.NewReader(s.resp.Body)
	var ev sseEvent
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if ev.Name != "" {
				_ = json.Unmarshal([]byte(ev.Raw), &ev.Data)
				s.events <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
			select {
			case s.lines <- line:
			default:
			}
		case strings.HasPrefix(line, "id: "):
			ev.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			ev.Name = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.Raw = line[6:]
		}
	}
}

// next returns the oldest unread event named name; events are taken in
// the order they came, but others are left for later calls (the engine
// forwards resolutions on its own goroutine, so a resolution may come after
// the next request).
func (s *sse) next(name string) sseEvent {
	s.t.Helper()
	return s.until(name, func(sseEvent) bool { return true })
}

// until returns the oldest unread event named name for which ok holds.
func (s *sse) until(name string, ok func(sseEvent) bool) sseEvent {
	s.t.Helper()
	return s.take("a "+name+" event", func(ev sseEvent) bool { return ev.Name == name && ok(ev) })
}

// resolved returns the resolution of interaction id.
func (s *sse) resolved(id string) sseEvent {
	s.t.Helper()
	return s.until("interaction.resolved", func(ev sseEvent) bool { return str(ev.Data["interaction_id"]) == id })
}

// saying returns the oldest unread bot message (new or updated) containing
// substr.
func (s *sse) saying(substr string) sseEvent {
	s.t.Helper()
	return s.take(fmt.Sprintf("a message containing %q", substr), func(ev sseEvent) bool {
		return (ev.Name == "message" || ev.Name == "message.updated") && strings.Contains(str(ev.Data["text"]), substr)
	})
}

func (s *sse) take(what string, ok func(sseEvent) bool) sseEvent {
	s.t.Helper()
	for i, ev := range s.unread {
		if ok(ev) {
			s.unread = append(s.unread[:i:i], s.unread[i+1:]...)
			return ev
		}
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, open := <-s.events:
			if !open {
				s.t.Fatalf("event stream ended waiting for %s; unread: %v", what, s.describe())
			}
			if ok(ev) {
				return ev
			}
			s.unread = append(s.unread, ev)
		case <-timeout:
			s.t.Fatalf("no %s; unread: %v", what, s.describe())
		}
	}
}

func (s *sse) describe() []string {
	var out []string
	for _, ev := range s.unread {
		out = append(out, ev.Name+" "+ev.Raw)
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

// otherConn is a second connector ("telegram") that shows nothing, to check
// that the web page watches chats it does not own.
type otherConn struct {
	mu    sync.Mutex
	shown []string
}

func (o *otherConn) Name() string                                        { return "telegram" }
func (o *otherConn) Run(ctx context.Context, _ connectors.Handler) error { <-ctx.Done(); return nil }
func (o *otherConn) Say(context.Context, string, string) error           { return nil }
func (o *otherConn) StreamText(context.Context, string, string) error    { return nil }
func (o *otherConn) Done(context.Context, string, connectors.Summary) error {
	return nil
}
func (o *otherConn) Present(_ context.Context, it *interactions.Interaction) (string, error) {
	o.mu.Lock()
	o.shown = append(o.shown, it.ID)
	o.mu.Unlock()
	return "tg-" + it.ID, nil
}
func (o *otherConn) Update(context.Context, interactions.Event) error { return nil }

// crashJournal records everything but the shutdown's interruptions, so the
// next run finds them pending, as after a crash.
type crashJournal struct{ *sqlite.Store }

func (c crashJournal) Resolved(ctx context.Context, it interactions.Interaction, res interactions.Resolution) error {
	if res.Status == interactions.StatusInterrupted {
		return nil
	}
	return c.Store.Resolved(ctx, it, res)
}
