package httpserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// limiter is the connection cap, a net.Listener wrapping the server's.
//
// Every connection the web server holds costs a file descriptor, and
// leashd shares its descriptors with the SQLite store, the connections to
// Telegram and Slack, and the pipes of every agent process. Without a cap,
// clients that open connections and leave them idle (no token is needed for
// /healthz) exhaust the descriptors and everything else fails with them. So
// the listener holds at most max connections, a number below the fd limit
// (see autoMaxConns: a share of the limit is kept for everything else).
//
// At the cap a new client is still answered, so that a health check keeps
// working during a flood: the connection that has waited longest without a
// request in a handler — idle between keep-alive requests, or accepted (or
// sending its headers) without having sent a whole request — is closed to
// make room. Such a connection has no response pending, so closing it
// loses nobody an answer; a client that keeps its connection idle can
// reconnect. Only when every connection is in a handler (event streams and
// long-polls are capped below max, other handlers are short and their
// bodies have a read deadline) is the new client refused, with a 503 written on the raw
// connection instead of being left waiting.
//
// Idle connections whose last request carried no valid token (health
// checks, metrics scrapes, webhooks, the page itself) are closed after
// shortIdle instead of the server's IdleTimeout: a flood of idle
// connections from clients without the token does not last.
type limiter struct {
	net.Listener
	max       int
	shortIdle time.Duration
	log       *slog.Logger

	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	warned time.Time // last "at the cap" warning; at most one a minute

	closeOnce sync.Once

	refusing atomic.Int32 // refusals being written
	evicted  atomic.Int64
	refused  atomic.Int64
}

// maxRefusing bounds the goroutines writing refusals; past it a refused
// connection is just closed.
const maxRefusing = 16

type trackedConn struct {
	net.Conn
	l *limiter

	// guarded by l.mu
	busy   int       // requests in a handler
	since  time.Time // accepted, or last left a handler
	idle   bool      // between requests (http.StateIdle)
	authed bool      // its last request carried the token
	gone   bool      // closed or evicted

	closeOnce sync.Once
	closeErr  error
}

func newLimiter(ln net.Listener, max int, shortIdle time.Duration, log *slog.Logger) *limiter {
	return &limiter{Listener: ln, max: max, shortIdle: shortIdle, log: log, conns: make(map[*trackedConn]struct{})}
}

// Accept returns the next connection, making room at the cap as described
// above. A refused connection is not returned: Accept waits for the next.
func (l *limiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		var victim *trackedConn
		if len(l.conns) >= l.max {
			l.warnLocked()
			victim = l.oldestEvictableLocked()
			if victim == nil {
				l.mu.Unlock()
				l.refuse(c)
				continue
			}
			victim.gone = true
			delete(l.conns, victim)
		}
		tc := &trackedConn{Conn: c, l: l, since: time.Now()}
		l.conns[tc] = struct{}{}
		l.mu.Unlock()
		if victim != nil {
			l.evicted.Add(1)
			_ = victim.Conn.Close() // its server goroutine sees the error and ends
		}
		return tc, nil
	}
}

// warnLocked says, at most once a minute, that the cap is reached.
func (l *limiter) warnLocked() {
	if time.Since(l.warned) < time.Minute {
		return
	}
	l.warned = time.Now()
	l.log.Warn(fmt.Sprintf("web: at the connection cap (%d, LEASHD_WEB_MAX_CONNECTIONS): closing the longest-idle connection for each new one", l.max),
		"evicted_so_far", l.evicted.Load(), "refused_so_far", l.refused.Load())
}

func (l *limiter) oldestEvictableLocked() *trackedConn {
	var old *trackedConn
	for c := range l.conns {
		if c.busy == 0 && (old == nil || c.since.Before(old.since)) {
			old = c
		}
	}
	return old
}

// refuse answers a connection the cap leaves no room for with a 503 and
// closes it.
func (l *limiter) refuse(c net.Conn) {
	l.refused.Add(1)
	if l.refusing.Add(1) > maxRefusing {
		l.refusing.Add(-1)
		_ = c.Close()
		return
	}
	go func() {
		defer l.refusing.Add(-1)
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		// Read the request's header first: an HTTP client takes an answer
		// that comes before its request for a broken connection.
		readHeader(c, 8<<10)
		body := fmt.Sprintf(`{"error":"too many connections: leashd holds at most %d (LEASHD_WEB_MAX_CONNECTIONS) and all are serving requests; try again"}`+"\n", l.max)
		_, _ = io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\nConnection: close\r\n"+
			fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))+body)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		// Read what else the client sent, so that closing does not reset
		// the connection before it reads the answer.
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// readHeader reads from c until the end of a request header (a blank
// line), at most limit bytes, or an error (the deadline).
func readHeader(c net.Conn, limit int) {
	buf := make([]byte, 0, 1024)
	tmp := make([]byte, 1024)
	for len(buf) < limit {
		n, err := c.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if bytes.Contains(buf, []byte("\r\n\r\n")) || err != nil {
			return
		}
	}
}

// Close closes the listener once: Run closes it to stop taking
// connections, and http.Server.Shutdown would otherwise report the second
// close as its own failure.
func (l *limiter) Close() error {
	err := error(nil)
	l.closeOnce.Do(func() { err = l.Listener.Close() })
	return err
}

// open is the number of connections held.
func (l *limiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// connState is the http.Server's ConnState hook.
func (l *limiter) connState(c net.Conn, st http.ConnState) {
	tc, ok := c.(*trackedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateIdle:
		tc.idle = true
		tc.since = time.Now()
	case http.StateActive:
		tc.idle = false
	case http.StateClosed, http.StateHijacked:
		tc.gone = true
		delete(l.conns, tc)
	}
}

// Close closes the connection and stops counting it.
func (tc *trackedConn) Close() error {
	tc.closeOnce.Do(func() {
		tc.l.mu.Lock()
		tc.gone = true
		delete(tc.l.conns, tc)
		tc.l.mu.Unlock()
		tc.closeErr = tc.Conn.Close()
	})
	return tc.closeErr
}

// SetReadDeadline shortens the server's idle deadline for a connection
// whose last request carried no token.
func (tc *trackedConn) SetReadDeadline(t time.Time) error {
	if !t.IsZero() {
		tc.l.mu.Lock()
		if tc.idle && !tc.authed {
			if short := time.Now().Add(tc.l.shortIdle); short.Before(t) {
				t = short
			}
		}
		tc.l.mu.Unlock()
	}
	return tc.Conn.SetReadDeadline(t)
}

type connKey struct{}

// connContext is the http.Server's ConnContext hook: handlers find their
// connection in the request's context.
func (l *limiter) connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, tc)
	}
	return ctx
}

// wrap marks a connection busy while a handler runs, and bounds the time
// its request body may take to arrive (bodyTimeout; 0: no bound).
func (l *limiter) wrap(h http.Handler, bodyTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tc, _ := r.Context().Value(connKey{}).(*trackedConn)
		if tc != nil {
			l.mu.Lock()
			tc.busy++
			tc.authed = false // until the token is checked again
			l.mu.Unlock()
			defer func() {
				l.mu.Lock()
				tc.busy--
				tc.since = time.Now()
				l.mu.Unlock()
			}()
		}
		if bodyTimeout > 0 && r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		}
		h.ServeHTTP(w, r)
	})
}

// MarkAuthed notes that the request carried the API's token: its
// connection keeps the server's full idle timeout. Handlers that check the
// token call it (connectors/web's API and /mcp).
func MarkAuthed(r *http.Request) {
	tc, _ := r.Context().Value(connKey{}).(*trackedConn)
	if tc == nil {
		return
	}
	tc.l.mu.Lock()
	tc.authed = true
	tc.l.mu.Unlock()
}

// deadlineBody lifts the body's read deadline once the body is read, so
// that a long handler is not cut off by it.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// Connection cap defaults: leashd keeps a quarter of its fd limit (at
// least minHeadroom) for everything but the web server, and holds at most
// defaultMaxConns web connections.
const (
	defaultMaxConns = 1024
	minHeadroom     = 64
	minMaxConns     = 8
)

// fdRoom is how many connections the fd limit leaves for the web server
// (0: the limit is unknown): the limit less a quarter of it (at least
// minHeadroom), kept for everything else; at least minMaxConns.
func fdRoom(fdLimit uint64) int {
	if fdLimit == 0 {
		return 0
	}
	head := max(fdLimit/4, minHeadroom)
	if fdLimit <= head+minMaxConns {
		return minMaxConns
	}
	return int(min(fdLimit-head, 1<<30))
}

// autoMaxConns is the cap when none is configured: what the fd limit
// leaves, at most defaultMaxConns.
func autoMaxConns(fdLimit uint64) int {
	if room := fdRoom(fdLimit); room > 0 {
		return min(room, defaultMaxConns)
	}
	return defaultMaxConns
}
