// Package httpserver is leashd's one HTTP server, as cmd/leashd builds it:
// a mux on which cmd mounts the web page and API, /mcp, the chat apps'
// webhooks, health, readiness and metrics, served with bounds that keep a
// flood of clients from taking the process down (see connlimit.go): a cap
// on connections below the open-file limit, short idle timeouts for
// clients without the API's token, 64 KiB headers, and deadlines on
// headers, bodies and every write.
package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Options are the server's address and bounds. Zero durations take the
// defaults in brackets.
type Options struct {
	Addr     string       // where to listen [127.0.0.1:8080]
	Listener net.Listener // serve on this instead of listening on Addr
	// MaxConns caps the connections held; 0 derives the cap from the fd
	// limit, keeping a share of it for the store, outgoing connections and
	// agent processes. A cap above what the fd limit allows is lowered to
	// it (and New logs so).
	MaxConns int
	// WriteTimeout bounds writing a response [15s]: a client that stops
	// reading is cut off after it. Event streams set their own deadline
	// before each write, and so do handlers that wait for a person
	// (Waiting: long-polls, /mcp).
	WriteTimeout time.Duration
	// IdleTimeout keeps an idle keep-alive connection open after a request
	// that carried the token [2m]; ShortIdle after one that did not [5s].
	IdleTimeout time.Duration
	ShortIdle   time.Duration
	// DrainGrace is how long, after Serve's context ends, the server keeps
	// answering open requests (event streams) when Drain is not called [30s].
	DrainGrace time.Duration
	Log        *slog.Logger
}

// Server is the HTTP server. Create it with New, mount handlers with
// Handle, then Listen and Serve.
type Server struct {
	o             Options
	cap           int // the connection cap
	headerTimeout time.Duration
	bodyTimeout   time.Duration
	log           *slog.Logger
	mux           *http.ServeMux

	drainReq  chan struct{}
	drainOnce sync.Once

	mu    sync.Mutex
	ln    net.Listener
	lim   *limiter
	url   string
	state error // nil while serving
}

// maxHeaderBytes bounds a request's header.
const maxHeaderBytes = 64 << 10

// New returns a server that serves nothing yet.
func New(o Options) *Server {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:8080"
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 15 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.ShortIdle <= 0 || o.ShortIdle > o.IdleTimeout {
		o.ShortIdle = min(5*time.Second, o.IdleTimeout)
	}
	if o.DrainGrace <= 0 {
		o.DrainGrace = 30 * time.Second
	}
	s := &Server{
		o: o, headerTimeout: 5 * time.Second, bodyTimeout: 30 * time.Second, log: o.Log,
		mux: http.NewServeMux(), drainReq: make(chan struct{}),
		state: errors.New("web: not listening yet"),
	}
	s.cap = s.connCap()
	return s
}

// Handle serves h at pattern (http.ServeMux syntax). It returns an error,
// instead of panicking as http.ServeMux does, when the pattern conflicts
// with one already mounted.
func (s *Server) Handle(pattern string, h http.Handler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("web: adding routes: %v", p)
		}
	}()
	s.mux.Handle(pattern, h)
	return nil
}

// Mount lets m add its routes (a connectors.Mounter: Telegram's webhook,
// Slack's events, the web page and API). Like Handle, it returns an error
// when a route conflicts with one already mounted.
func (s *Server) Mount(m interface{ Mount(*http.ServeMux) }) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("web: adding routes: %v", p)
		}
	}()
	m.Mount(s.mux)
	return nil
}

// WriteTimeout is the bound on writing a response.
func (s *Server) WriteTimeout() time.Duration { return s.o.WriteTimeout }

// ConnCap is the most connections the server holds at once.
func (s *Server) ConnCap() int { return s.cap }

// Listen opens the listener (or takes Options.Listener); URL is known
// from then on.
func (s *Server) Listen() error {
	ln := s.o.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.o.Addr); err != nil {
			return fmt.Errorf("web: listening on %s: %w", s.o.Addr, err)
		}
	}
	s.mu.Lock()
	s.ln, s.url = ln, baseURL(ln.Addr())
	s.mu.Unlock()
	return nil
}

// URL is the base URL once listening ("" before), e.g.
// "http://127.0.0.1:8080".
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Ready is nil while serving (for /readyz).
func (s *Server) Ready() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Conns is the number of connections the server holds (0 before Serve).
func (s *Server) Conns() int {
	s.mu.Lock()
	lim := s.lim
	s.mu.Unlock()
	if lim == nil {
		return 0
	}
	return lim.open()
}

// Drain ends the grace after Serve's context ended: the server shuts down
// now. cmd calls it once the engine has stopped and the event streams got
// their last events.
func (s *Server) Drain() { s.drainOnce.Do(func() { close(s.drainReq) }) }

// Serve serves until ctx is done (listening first if Listen was not
// called). It then stops taking connections and closes idle ones, while
// open requests (event streams) go on until Drain is called or DrainGrace
// has passed; then it shuts down, closing what is left after 5 s. It
// returns nil after a clean stop.
func (s *Server) Serve(ctx context.Context) error {
	if s.URL() == "" {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	lim := newLimiter(s.ln, s.cap, s.o.ShortIdle, s.log)
	s.lim, s.state = lim, nil
	s.mu.Unlock()
	srv := s.httpServer(lim)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lim) }()
	select {
	case err := <-errc:
		s.setState(fmt.Errorf("web: server stopped: %w", err))
		_ = srv.Close()
		return fmt.Errorf("web: serving on %s: %w", s.URL(), err)
	case <-ctx.Done():
	}
	s.setState(errors.New("web: shutting down"))
	srv.SetKeepAlivesEnabled(false) // idle connections close; open ones after their request
	_ = lim.Close()                 // no new connections
	select {
	case <-s.drainReq:
	case <-time.After(s.o.DrainGrace):
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		s.log.Warn("web: graceful shutdown timed out; closing connections", "err", err)
		_ = srv.Close()
	}
	<-errc
	return nil
}

// httpServer is the http.Server with the bounds (see connlimit.go).
func (s *Server) httpServer(lim *limiter) *http.Server {
	return &http.Server{
		Handler:           lim.wrap(s.mux, s.bodyTimeout),
		ReadHeaderTimeout: s.headerTimeout,
		// Headers are held in memory while they arrive: 64 KiB each (not
		// Go's 1 MiB), so the connection cap bounds them too.
		MaxHeaderBytes: maxHeaderBytes,
		IdleTimeout:    s.o.IdleTimeout,
		// A response must be written within WriteTimeout, or a client that
		// never reads would hold its connection (busy, so never closed to
		// make room at the cap) for ever. Event streams and handlers
		// under Waiting set their own deadline before each write.
		WriteTimeout: s.o.WriteTimeout,
		ConnState:    lim.connState,
		ConnContext:  lim.connContext,
		ErrorLog:     slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

func (s *Server) setState(err error) {
	s.mu.Lock()
	s.state = err
	s.mu.Unlock()
}

// connCap is the connection cap: the configured one, lowered to what the
// fd limit allows, or derived from the fd limit.
func (s *Server) connCap() int {
	fds := fdLimit()
	if s.o.MaxConns <= 0 {
		n := autoMaxConns(fds)
		s.log.Info(fmt.Sprintf("web: serving at most %d connections (LEASHD_WEB_MAX_CONNECTIONS unset: derived from the open-file limit, %d)", n, fds))
		return n
	}
	if room := fdRoom(fds); room > 0 && s.o.MaxConns > room {
		s.log.Warn(fmt.Sprintf("web: LEASHD_WEB_MAX_CONNECTIONS=%d is more than the open-file limit (%d) allows while keeping room for the store, agents and outgoing connections; serving at most %d", s.o.MaxConns, fds, room))
		return room
	}
	return s.o.MaxConns
}

// baseURL renders a listener address as a URL a browser on this machine
// can open (an unspecified address becomes 127.0.0.1).
func baseURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String()
	}
	host := tcp.IP.String()
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}
