package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/httpserver"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/metrics"
)

// leashd's one HTTP server, on LEASHD_WEB_ADDR: the web page and API
// (connectors/web, unless LEASHD_WEB_PAGE=off), /mcp, the routes chat apps
// serve (Telegram's webhook, Slack's events), /healthz, /readyz and
// /metrics. With LEASHD_WEB_ADDR=off there is none: no page, no probes, no
// metrics, and Validate refuses the webhook modes that would need it.

// writeTimeout, when set, replaces the HTTP server's write timeout (15 s):
// tests make "answered after the write timeout" a matter of seconds.
var writeTimeout time.Duration

// listen opens leashd's HTTP server on LEASHD_WEB_ADDR, or returns nil
// when it is off. Listening before anything runs makes a busy address
// stop leashd at once, and gives the web page its URL.
func listen(s settings, log *slog.Logger) (*httpserver.Server, error) {
	if !s.web.Serves() {
		return nil, nil
	}
	srv := httpserver.New(httpserver.Options{
		Addr:     s.web.Addr,
		MaxConns: s.web.MaxConnections,
		// Handlers that wait for a person (long-polls, /mcp) bound each
		// write instead (httpserver.Waiting).
		WriteTimeout: writeTimeout,
		Log:          log.With("connector", "web"),
	})
	if err := srv.Listen(); err != nil {
		return nil, err
	}
	if !s.web.PageOn() { // else the page says where it is
		log.Info("leashd HTTP server at "+srv.URL()+" (LEASHD_WEB_PAGE=off: health, readiness, metrics, /mcp and webhooks; no web page or API)", "connector", "web")
	}
	return srv, nil
}

// mountRoutes puts every route on the server: what the connectors serve
// (connectors.Mounter), /mcp behind the API's token, and health,
// readiness and metrics. Readiness covers the store, every connector and
// the Claude Code CLI.
func mountRoutes(srv *httpserver.Server, s settings, conns []connectors.Connector, f front, mcp http.Handler) error {
	for _, c := range conns {
		if mt, ok := c.(connectors.Mounter); ok {
			if err := srv.Mount(mt); err != nil {
				return err
			}
		}
	}
	// A tool call waits for a person, and the MCP event stream for
	// notifications: neither may be cut off by the server's write timeout.
	mcp = httpserver.Waiting(mcp, srv.WriteTimeout())
	creds := s.creds
	if creds == nil { // settings built without useCredentials (tests)
		creds = web.NewCredentials(s.web.Token, s.tokenFile, nil, 0, 0)
	}
	if err := srv.Handle("/mcp", web.RequireCredential(creds, mcp)); err != nil {
		return err
	}
	if f.runners != nil {
		if err := srv.Mount(runnerRoutes{f.runners, creds}); err != nil {
			return err
		}
	}
	checks := []metrics.Check{{Name: "store", Ready: f.db.Ready}}
	checks = append(checks, metrics.Check{Name: f.ag.Name(), Ready: f.ag.Ready})
	checks = append(checks, metrics.ConnectorChecks(conns...)...)
	return srv.Mount(metricsRoutes{f.m, checks})
}

// metricsRoutes are /healthz, /readyz (with its checks) and /metrics
// (metrics.Mount), mounted like a connector's routes.
type metricsRoutes struct {
	m      *metrics.Metrics
	checks []metrics.Check
}

func (r metricsRoutes) Mount(mux *http.ServeMux) { r.m.Mount(mux, r.checks...) }

// runUntilStopped runs the engine and the HTTP server (srv may be nil)
// until ctx is done, then waits for the engine's graceful shutdown within
// LEASHD_SHUTDOWN_TIMEOUT_SECONDS. The server stops taking connections
// when ctx is done and shuts down once the engine has stopped: the event
// streams get the interruptions shutdown publishes. A server that fails
// stops the engine, and its error is returned.
func runUntilStopped(ctx context.Context, cfg config.Config, log *slog.Logger, eng *engine.Engine, srv *httpserver.Server) error {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	if srv != nil {
		go func() {
			err := srv.Serve(runCtx)
			if err != nil {
				stop()
			}
			served <- err
		}()
	} else {
		served <- nil
	}
	done := make(chan error, 1)
	go func() { done <- eng.Run(runCtx) }()
	select {
	case err := <-done:
		return stopServer(cfg, err, stop, srv, served, nil)
	case <-ctx.Done():
	}
	log.Info("stop requested; shutting down gracefully", "timeout", cfg.ShutdownTimeout())
	var deadline <-chan time.Time
	if d := cfg.ShutdownTimeout(); d > 0 {
		deadline = time.After(d)
	}
	select {
	case err := <-done:
		err = stopServer(cfg, err, stop, srv, served, deadline)
		log.Info("stopped")
		return err
	case <-deadline:
		return shutdownTimeout(cfg)
	}
}

// stopServer shuts the server down once the engine has stopped and
// returns the engine's error, else the server's; past deadline it gives up.
func stopServer(cfg config.Config, engErr error, stop context.CancelFunc, srv *httpserver.Server, served <-chan error, deadline <-chan time.Time) error {
	stop()
	if srv != nil {
		srv.Drain()
	}
	select {
	case err := <-served:
		if engErr == nil {
			return err
		}
		return engErr
	case <-deadline:
		return shutdownTimeout(cfg)
	}
}

// shutdownTimeout is the error of a shutdown that took too long.
func shutdownTimeout(cfg config.Config) error {
	return fmt.Errorf("shutdown took longer than LEASHD_SHUTDOWN_TIMEOUT_SECONDS=%d; exiting anyway", cfg.ShutdownTimeoutSeconds)
}
