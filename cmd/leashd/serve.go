package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/httpserver"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/agent/sandbox/remote"
	"github.com/leashd/leashd/engine/mcpserver"
	"github.com/leashd/leashd/engine/metrics"
	"github.com/leashd/leashd/engine/policy"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/engine/worktree"
	"github.com/leashd/leashd/interactions"
)

// nothingToServe is the error when every chat app is off.
func nothingToServe(s settings) error {
	off := "LEASHD_WEB_ADDR is off"
	if s.web.Serves() {
		off = "LEASHD_WEB_PAGE is off"
	}
	return errors.New("nothing to serve: " + off + " and neither LEASHD_TELEGRAM_BOT_TOKEN nor LEASHD_SLACK_BOT_TOKEN is set; set one of them, or run `leashd chat` to use the terminal")
}

// serve runs leashd until ctx is done, then shuts down gracefully within
// LEASHD_SHUTDOWN_TIMEOUT_SECONDS: pending interactions are marked
// interrupted (their buttons keep working after the restart), agent
// processes are closed and the database is closed last.
func serve(ctx context.Context, s settings, stderr io.Writer) error {
	cfg := s.Config
	if len(s.enabled()) == 0 {
		return nothingToServe(s)
	}
	pol, err := loadPolicy(cfg) // a bad rule stops leashd here, naming its line
	if err != nil {
		return err
	}
	if err := cfg.PrepareState(); err != nil { // the database's directory is leashd's alone
		return err
	}
	if err := s.useGeneratedToken(); err != nil { // before the logger, which redacts it
		return err
	}
	if err := s.useCredentials(); err != nil {
		return err
	}
	log, err := s.logger(stderr)
	if err != nil {
		return err
	}
	hub := runnersFor(s, log)
	if hub != nil {
		// A spare is opened before its chat is known, so it could not be
		// placed on the chat's runner.
		cfg.Prewarm = 0
	}
	ag, err := selectAgent(ctx, cfg, log, placeOn(hub, s))
	if err != nil {
		return err
	}
	var trees *worktree.Manager
	if cfg.WorktreesOn() {
		if trees, err = worktreesFor(ctx, cfg); err != nil {
			return err
		}
	}
	release, err := lockInstance(cfg.DBPath)
	if err != nil {
		return err
	}
	defer release()
	// Interactions are logged once, by the metrics watcher; the coordinator
	// gets no logger of its own. The store logs and counts its own failed
	// writes, with what each lost, and /readyz reports them.
	m := metrics.New(metrics.WithLogger(log))
	registerRunnerMetrics(m.Registry(), hub)
	db, closeDB, err := openStore(ctx, cfg, log, m)
	if err != nil {
		return err
	}
	defer closeDB()
	coord := interactions.New(
		interactions.WithTimeout(cfg.ApprovalTimeout()),
		interactions.WithJournal(db),
		s.pendingCaps(),
	)
	// The watcher outlives the engine so the interruptions it publishes at
	// shutdown are counted and logged too.
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	waitWatch := m.Watch(watchCtx, coord)
	defer func() { stopWatch(); waitWatch() }()
	deps := engineDeps(ctx, cfg, log, ag, coord, db, m, trees, pol)
	files, err := s.wireFiles(log, &deps) // files.go
	if err != nil {
		return err
	}
	defer files.close()
	eng := engine.New(deps, adoptWithin(engineServeConfig(cfg), hub, s))
	files.use(eng)
	useRunners(hub, eng, s, files, log)
	return serveWith(ctx, s, log, stderr, eng, front{ag: ag, coord: coord, m: m, db: db, runners: hub})
}

// openStore opens the database and starts its monitor, which retries
// failed writes and notices a deleted file; closeDB stops the monitor and
// closes the database.
func openStore(ctx context.Context, cfg config.Config, log *slog.Logger, m *metrics.Metrics) (db *sqlite.Store, closeDB func(), err error) {
	db, err = sqlite.Open(ctx, cfg.DBPath, sqlite.WithLogger(log.With("component", "store")), sqlite.WithErrorCounter(m))
	if err != nil {
		return nil, nil, fmt.Errorf("LEASHD_DB_PATH=%q: %w", cfg.DBPath, err)
	}
	monitorCtx, stopMonitor := context.WithCancel(ctx)
	monitorDone := make(chan struct{})
	go func() { defer close(monitorDone); db.Monitor(monitorCtx, 10*time.Second) }()
	return db, func() {
		stopMonitor()
		<-monitorDone
		if err := db.Close(); err != nil {
			log.Error("closing the database", "err", err)
		}
	}, nil
}

// engineDeps are the engine's collaborators: what serve built.
func engineDeps(ctx context.Context, cfg config.Config, log *slog.Logger, ag agent.Agent, coord *interactions.Coordinator,
	db *sqlite.Store, m *metrics.Metrics, trees *worktree.Manager, pol *policy.Holder) engine.Deps {
	deps := engine.Deps{Agent: ag, Coord: coord, Store: db, Metrics: m, Log: log}
	if trees != nil {
		deps.Worktrees = trees
		log.Info("each chat works in its own git worktree", "repo", trees.Repo(), "worktrees", trees.Root())
	}
	if pol != nil {
		deps.Policy = pol
		watchPolicy(ctx, pol, log)
		log.Info("approval policy in force; SIGHUP reloads it", "file", pol.File(), "rules", len(pol.Policy().Rules()))
	}
	return deps
}

// engineServeConfig is engineConfig with the shutdown's share for closing
// agent sessions: three quarters, leaving the rest for the chats' last
// edits and the database.
func engineServeConfig(cfg config.Config) engine.Config {
	ecfg := engineConfig(cfg)
	if d := cfg.ShutdownTimeout(); d > 0 {
		ecfg.CloseTimeout = d * 3 / 4
	}
	return ecfg
}

// front is what the chat apps and the HTTP server are built around.
type front struct {
	ag    agent.Agent
	coord *interactions.Coordinator
	m     *metrics.Metrics
	db    *sqlite.Store
	// runners is the runner hub (nil: runners are off).
	runners *remote.Hub
}

// serveWith builds the HTTP server and the chat apps' connectors, mounts
// their routes, and runs the engine and the server until ctx is done.
// With a generated token it prints the page's address with the token on
// stderr (printTokenURL).
func serveWith(ctx context.Context, s settings, log *slog.Logger, stderr io.Writer, eng *engine.Engine, f front) error {
	srv, err := listen(s, log)
	if err != nil {
		return err
	}
	if err := s.usePush(f.db); err != nil {
		return err
	}
	conns, err := connectorsFor(s, log, f.m, f.ag, srv)
	if err != nil {
		return err
	}
	for _, c := range conns {
		eng.AddConnector(c)
	}
	if srv != nil {
		// Programs that leashd did not start ask through the MCP server at
		// /mcp, behind the API's token.
		mcp := mcpserver.Handler(f.coord, eng.ServesChat,
			mcpserver.Options{WorkDir: s.Workdir, Log: log.With("component", "mcp"), PermissionResult: claude.PermissionResult,
				MayAsk: mcpMayAsk, Limits: mcpLimits(s, conns)})
		if err := mountRoutes(srv, s, conns, f, mcp); err != nil {
			return err
		}
	}
	log.Info("leashd starting", "agent", f.ag.Name(), "workdir", s.Workdir, "mode", s.DefaultMode,
		"db", s.DBPath, "connectors", names(conns))
	if srv != nil {
		printTokenURL(stderr, s, srv.URL())
	}
	return runUntilStopped(ctx, s.Config, log, eng, srv)
}

// connectorsFor builds the connector of every chat app the settings turn
// on, in the order of chatApps. srv is leashd's HTTP server (nil: none).
func connectorsFor(s settings, log *slog.Logger, m *metrics.Metrics, ag agent.Agent, srv *httpserver.Server) ([]connectors.Connector, error) {
	d := connectors.Deps{Log: log, Stats: m, Commands: chatCommands(), AgentName: ag.About().Title}
	if srv != nil {
		d.HTTP = connectors.HTTP{URL: srv.URL(), ConnCap: srv.ConnCap(), WriteTimeout: srv.WriteTimeout()}
	}
	var conns []connectors.Connector
	for _, a := range s.enabled() {
		c, err := a.Connector(d)
		if err != nil {
			return nil, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// chatCommands are the engine's chat commands, as the connectors list them.
func chatCommands() []connectors.Command {
	out := make([]connectors.Command, len(engine.Commands))
	for i, c := range engine.Commands {
		out[i] = connectors.Command{Name: c.Name, Help: c.Description}
	}
	return out
}

func names(cs []connectors.Connector) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name()
	}
	return out
}
