//go:build unix

package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/httpserver"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/interactions"
)

// dialTiny connects to addr with a receive buffer of a few KiB, set before
// the connection is made so the window stays small: a client that never
// reads then holds back almost everything the server writes.
func dialTiny(t testing.TB, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func hostOf(url string) string { return strings.TrimPrefix(url, "http://") }

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// replayMessages of 64 KiB make the kept replay nearly its whole 8 MiB,
// with room for each event's envelope (id, chat, time) so none is dropped.
const replayMessages = 120

// fillReplay makes the kept replay about 8 MiB.
func fillReplay(t testing.TB, w *web.Connector) {
	t.Helper()
	text := strings.Repeat("x", 64<<10-64)
	for i := range replayMessages {
		require.NoError(t, w.Say(context.Background(), "flood", fmt.Sprintf("%03d %s", i, text)))
	}
}

// Issue 15 item 2: GET /api/events?after=0 from clients that never read.
// Each used to build the whole kept replay (8 MiB) in memory and hold it
// until its write deadline; now the replay is written event by event from
// what the hub keeps, so what a stream costs does not grow with the replay,
// and a client that stops reading is cut off by the write deadline.
func TestReplayToClientsThatNeverReadKeepsMemoryFlat(t *testing.T) {
	e := start(t, setup{server: httpserver.Options{WriteTimeout: 2 * time.Second}})
	fillReplay(t, e.web)
	before := heapInUse()

	const clients = 20
	for range clients {
		c := dialTiny(t, hostOf(e.url))
		_, err := io.WriteString(c, "GET /api/events?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+e.token+"\r\n\r\n")
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return e.web.Streams() == clients }, 10*time.Second, 5*time.Millisecond)
	// Every stream is writing its replay into a connection nobody reads;
	// the old code held a copy of the whole replay per stream until the
	// deadline. Sample the heap while they are stuck.
	var peak uint64
	for range 10 {
		peak = max(peak, heapInUse())
		time.Sleep(50 * time.Millisecond)
	}
	grew := int64(peak) - int64(before)
	t.Logf("heap in use: %d KiB before, peak %d KiB with %d stuck replays of 8 MiB", before>>10, peak>>10, clients)
	assert.Less(t, grew, int64(clients)<<20, "a stream that is not read holds at most a fraction of a MiB, not the replay")

	// The write deadline ends them.
	require.Eventually(t, func() bool { return e.web.Streams() == 0 }, 20*time.Second, 20*time.Millisecond,
		"streams whose clients never read are cut off")
	// And a client that reads gets the whole replay, in order.
	s := e.subscribe("?chat=flood&after=0")
	for i := range replayMessages {
		ev := s.next("message")
		require.True(t, strings.HasPrefix(str(ev.Data["text"]), fmt.Sprintf("%03d ", i)), "message %d: %.80s", i, str(ev.Data["text"]))
	}
}

// Issue 15 item 2: open event streams are capped; past the cap the client
// is told so with a 503 naming the variable, and a closed stream makes
// room.
func TestEventStreamsAreCapped(t *testing.T) {
	e := start(t, setup{webOpts: []web.Option{web.WithMaxStreams(3)}})
	var open []*sse
	for range 3 {
		open = append(open, e.subscribe(""))
	}
	st, hdr, body := e.request(t, "GET", "/api/events", "", e.token)
	require.Equal(t, http.StatusServiceUnavailable, st, body)
	var eb struct{ Error string }
	require.NoError(t, json.Unmarshal([]byte(body), &eb))
	assert.Contains(t, eb.Error, "at most 3")
	assert.Contains(t, eb.Error, "LEASHD_WEB_MAX_STREAMS")
	assert.NotEmpty(t, hdr.Get("Retry-After"))

	open[0].resp.Body.Close()
	require.Eventually(t, func() bool { return e.web.Streams() == 2 }, 10*time.Second, 5*time.Millisecond)
	s := e.subscribe("?chat=cap")
	e.send("cap", "hello", "agent")
	s.saying("hello")
}

// Issue 15 item 10: on shutdown the open streams get the interruption of
// the pending interactions — resolved as interrupted with the "leashd
// restarted" notice, and shown again with it (its buttons work after the
// restart) — and a last server.stopping event, then they end.
func TestShutdownEventsReachOpenStreams(t *testing.T) {
	var logs testenv.Buffer
	e := start(t, setup{webOpts: []web.Option{web.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}})
	s := e.subscribe("?chat=sd")
	all := e.subscribe("")
	e.send("sd", "question", "agent")
	it := s.next("interaction.requested")
	all.next("interaction.requested")

	e.stop()
	for _, st := range []*sse{s, all} {
		r := st.resolved(id(it))
		assert.Equal(t, string(interactions.StatusInterrupted), str(r.Data["status"]))
		assert.Equal(t, interactions.InterruptedNotice, str(r.Data["text"]))
		again := st.until("interaction.requested", func(ev sseEvent) bool { return ev.Data["interrupted"] == true })
		assert.Equal(t, id(it), id(again))
		assert.Equal(t, interactions.InterruptedNotice, str(again.Data["notice"]))
		last := st.next("server.stopping")
		assert.Contains(t, str(last.Data["notice"]), "leashd is stopping")
		_, open := <-st.events
		assert.False(t, open, "the stream ends after the last event")
	}
	assert.NotContains(t, logs.String(), "level=WARN", "a clean shutdown")
}

// holdIdle opens a connection, makes one keep-alive request on it and
// reads the answer, leaving it idle. It returns the connection and a
// reader over it.
func holdIdle(t testing.TB, addr, path string, hdr ...string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	br := bufio.NewReader(c)
	roundTrip(t, c, br, path, hdr...)
	return c, br
}

func roundTrip(t testing.TB, c net.Conn, br *bufio.Reader, path string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+c.RemoteAddr().String()+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	require.NoError(t, req.Write(c))
	resp, err := http.ReadResponse(br, req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// closed reports whether the server closed c (a read ends with EOF or a
// reset rather than waiting).
func closedByServer(c net.Conn, br *bufio.Reader, wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := br.ReadByte()
	var ne net.Error
	if err != nil && !(errorsAs(err, &ne) && ne.Timeout()) {
		return true
	}
	return false
}

func errorsAs(err error, ne *net.Error) bool {
	v, ok := err.(net.Error)
	if ok {
		*ne = v
	}
	return ok
}

func healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
}

// Issue 15 item 3: at the connection cap a new client's health check is
// still answered: the connection idle longest (kept alive after its own
// /healthz, or opened and never used) is closed to make room, and the
// server never holds more than the cap.
func TestConnectionCapMakesRoomForANewHealthCheck(t *testing.T) {
	const limit = 8
	e := start(t, setup{server: httpserver.Options{MaxConns: limit}, routes: map[string]http.Handler{"GET /healthz": healthz()}})
	addr := hostOf(e.url)
	type held struct {
		c  net.Conn
		br *bufio.Reader
	}
	var idle []held
	for range limit / 2 {
		c, br := holdIdle(t, addr, "/healthz")
		idle = append(idle, held{c, br})
	}
	for range limit * 2 { // silent connections: accepted, no request
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
	}
	require.Eventually(t, func() bool { return e.srv.Conns() == limit }, 10*time.Second, 5*time.Millisecond)

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for range 3 {
		resp, err := client.Get(e.url + "/healthz")
		require.NoError(t, err, "a new client's health check at the cap")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, "ok\n", string(b))
		assert.LessOrEqual(t, e.srv.Conns(), limit)
	}
	assert.True(t, closedByServer(idle[0].c, idle[0].br, 5*time.Second), "the oldest idle connection made room")

	// The API works at the cap too.
	e.send("cap", "hello", "agent")
	assert.LessOrEqual(t, e.srv.Conns(), limit)
}

// When every connection is in a handler, a new one is refused with a 503
// that names the cap instead of waiting unanswered.
func TestConnectionCapRefusesWhenAllAreBusy(t *testing.T) {
	const limit = 4
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(limit)
	slow := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered.Done()
		<-release
	})
	e := start(t, setup{server: httpserver.Options{MaxConns: limit}, routes: map[string]http.Handler{"GET /slow": slow, "GET /healthz": healthz()}})
	defer close(release)
	for range limit {
		go func() {
			resp, err := http.Get(e.url + "/slow")
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	entered.Wait()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(e.url + "/healthz")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(b), "LEASHD_WEB_MAX_CONNECTIONS")
	assert.Contains(t, string(b), "at most 4")
}

// A keep-alive connection whose last request had no token is closed after
// the short idle timeout; one that used the token stays for the long one.
func TestIdleConnectionsWithoutTheTokenAreClosedSoon(t *testing.T) {
	e := start(t, setup{token: "s3cret-token-for-idle",
		server: httpserver.Options{IdleTimeout: time.Minute, ShortIdle: 300 * time.Millisecond}, routes: map[string]http.Handler{"GET /healthz": healthz()}})
	addr := hostOf(e.url)
	authed, abr := holdIdle(t, addr, "/api/info", "Authorization", "Bearer s3cret-token-for-idle")
	anon, nbr := holdIdle(t, addr, "/healthz")
	assert.True(t, closedByServer(anon, nbr, 10*time.Second), "the connection without the token is closed")
	resp := roundTrip(t, authed, abr, "/api/info", "Authorization", "Bearer s3cret-token-for-idle")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the connection with the token is still open")
}

// A request header is bounded at 64 KiB (Go's default is 1 MiB, held in
// memory per connection while it arrives): a larger one gets 431.
func TestLargeRequestHeadersAreRefused(t *testing.T) {
	e := start(t, setup{routes: map[string]http.Handler{"GET /healthz": healthz()}})
	c, err := net.Dial("tcp", hostOf(e.url))
	require.NoError(t, err)
	defer c.Close()
	br := bufio.NewReader(c)
	resp := roundTrip(t, c, br, "/healthz", "X-Padding", strings.Repeat("p", 200<<10))
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	st, _, body := e.request(t, "GET", "/healthz", "", "", "X-Padding", strings.Repeat("p", 32<<10))
	assert.Equal(t, http.StatusOK, st, body)
}

// A client that never reads its answer is cut off after the write
// timeout: its connection does not stay busy, so at the cap room is made
// again for a health check.
func TestResponsesToClientsThatNeverReadAreCutOff(t *testing.T) {
	const limit = 4
	var entered sync.WaitGroup
	entered.Add(limit)
	big := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered.Done()
		chunk := []byte(strings.Repeat("b", 64<<10))
		for range 256 { // 16 MiB: more than the socket buffers hold (the send buffer grows to 4 MiB)
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	e := start(t, setup{server: httpserver.Options{MaxConns: limit, WriteTimeout: time.Second},
		routes: map[string]http.Handler{"GET /big": big, "GET /healthz": healthz()}})
	for range limit {
		c := dialTiny(t, hostOf(e.url))
		_, err := io.WriteString(c, "GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		require.NoError(t, err)
	}
	entered.Wait() // every connection is busy writing an answer nobody reads
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(e.url + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "at the cap with every connection busy")
	require.Eventually(t, func() bool {
		resp, err := client.Get(e.url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 100*time.Millisecond, "the stuck responses were cut off and a health check answered")
}

// An event stream that is read lives longer than the write timeout: the
// timeout bounds each write, not the stream.
func TestEventStreamOutlivesTheWriteTimeout(t *testing.T) {
	e := start(t, setup{server: httpserver.Options{WriteTimeout: 200 * time.Millisecond}, webOpts: []web.Option{web.WithHeartbeat(50 * time.Millisecond)}})
	s := e.subscribe("?chat=long")
	for range 10 { // heartbeats over 5× the write timeout
		select {
		case <-s.lines:
		case <-time.After(10 * time.Second):
			t.Fatal("no heartbeat")
		}
	}
	e.send("long", "hello", "agent")
	s.saying("hello")
}
