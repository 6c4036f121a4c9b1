package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/claude"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/slack"
	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/mcpserver"
	"github.com/leashd/leashd/engine/metrics"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/engine/worktree"
	"github.com/leashd/leashd/interactions"
)

// errNothingToServe is returned when every connector is off.
var errNothingToServe = errors.New("nothing to serve: LEASHD_WEB_ADDR is off and neither LEASHD_TELEGRAM_BOT_TOKEN nor LEASHD_SLACK_BOT_TOKEN is set; set one of them, or run `leashd chat` to use the terminal")

// serve runs leashd until ctx is done, then shuts down gracefully within
// LEASHD_SHUTDOWN_TIMEOUT_SECONDS: pending interactions are marked
// interrupted (their buttons keep working after the restart), agent
// processes are closed and the database is closed last.
func serve(ctx context.Context, cfg config.Config, stderr io.Writer) error {
	if !cfg.WebEnabled() && !cfg.TelegramEnabled() && !cfg.SlackEnabled() {
		return errNothingToServe
	}
	log, err := config.NewLogger(cfg, stderr)
	if err != nil {
		return err
	}
	pol, err := loadPolicy(cfg) // a bad rule stops leashd here, naming its line
	if err != nil {
		return err
	}
	ag, err := selectAgent(ctx, cfg, log)
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
	db, err := sqlite.Open(ctx, cfg.DBPath, sqlite.WithLogger(log.With("component", "store")), sqlite.WithErrorCounter(m))
	if err != nil {
		return fmt.Errorf("LEASHD_DB_PATH=%q: %w", cfg.DBPath, err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			log.Error("closing the database", "err", err)
		}
	}()

	monitorCtx, stopMonitor := context.WithCancel(ctx)
	monitorDone := make(chan struct{})
	go func() { defer close(monitorDone); db.Monitor(monitorCtx, 10*time.Second) }() // retries failed writes; notices a deleted file
	defer func() { stopMonitor(); <-monitorDone }()
	coord := interactions.New(
		interactions.WithTimeout(cfg.ApprovalTimeout()),
		interactions.WithJournal(db),
	)
	// The watcher outlives the engine so the interruptions it publishes at
	// shutdown are counted and logged too.
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	waitWatch := m.Watch(watchCtx, coord)
	defer func() { stopWatch(); waitWatch() }()

	deps := engine.Deps{Agent: ag, Coord: coord, Store: db, Metrics: m, Log: log}
	ecfg := engineConfig(cfg)
	if d := cfg.ShutdownTimeout(); d > 0 {
		// Leave a quarter for the chats' last edits and the database.
		ecfg.CloseTimeout = d * 3 / 4
	}
	if trees != nil {
		deps.Worktrees = trees
		log.Info("each chat works in its own git worktree", "repo", trees.Repo(), "worktrees", trees.Root())
	}
	if pol != nil {
		deps.Policy = pol
		watchPolicy(ctx, pol, log)
		log.Info("approval policy in force; SIGHUP reloads it", "file", pol.File(), "rules", len(pol.Policy().Rules()))
	}
	eng := engine.New(deps, ecfg)

	// Programs that leashd did not start ask through the MCP server at
	// /mcp, behind the API's token.
	mcpRoute := web.WithAPIRoute("/mcp", mcpserver.Handler(coord, eng.ServesChat,
		mcpserver.Options{WorkDir: cfg.Workdir, Log: log.With("component", "mcp"), PermissionResult: claude.PermissionResult}))
	conns, err := connectorsFor(cfg, log, m, ag, []metrics.Check{{Name: "store", Ready: db.Ready}}, mcpRoute)
	if err != nil {
		return err
	}
	for _, c := range conns {
		eng.AddConnector(c)
	}

	log.Info("leashd starting", "agent", ag.Name(), "workdir", cfg.Workdir, "mode", cfg.DefaultMode,
		"db", cfg.DBPath, "connectors", names(conns))
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	log.Info("stop requested; shutting down gracefully", "timeout", cfg.ShutdownTimeout())
	var deadline <-chan time.Time
	if d := cfg.ShutdownTimeout(); d > 0 {
		deadline = time.After(d)
	}
	select {
	case err := <-done:
		log.Info("stopped")
		return err
	case <-deadline:
		return fmt.Errorf("shutdown took longer than LEASHD_SHUTDOWN_TIMEOUT_SECONDS=%d; exiting anyway", cfg.ShutdownTimeoutSeconds)
	}
}

// connectorsFor builds the connectors the configuration enables. The web
// connector comes last: it serves the others' HTTP endpoints (Telegram
// webhook, Slack HTTP mode) and the health, readiness and metrics routes.
func connectorsFor(cfg config.Config, log *slog.Logger, m *metrics.Metrics, ag agent.Agent, extra []metrics.Check, webOpts ...web.Option) ([]connectors.Connector, error) {
	var conns []connectors.Connector
	if cfg.TelegramEnabled() {
		ids, err := telegram.ParseUserIDs(cfg.TelegramAllowedUsers)
		if err != nil {
			return nil, fmt.Errorf("LEASHD_TELEGRAM_ALLOWED_USERS: %w", err)
		}
		opts := []telegram.Option{
			telegram.WithAPIURL(cfg.TelegramApiURL),
			telegram.WithAllowedUsers(ids),
			telegram.WithLogger(log), // it names itself
			telegram.WithStats(m),
		}
		if len(cfg.TelegramApprovers) > 0 {
			approvers, err := telegram.ParseUserIDs(cfg.TelegramApprovers)
			if err != nil {
				return nil, fmt.Errorf("LEASHD_TELEGRAM_APPROVERS: %w", err)
			}
			opts = append(opts, telegram.WithApprovers(approvers))
		}
		if cfg.TelegramWebhookURL != "" {
			opts = append(opts, telegram.WithWebhook(cfg.TelegramWebhookURL, cfg.TelegramWebhookSecret))
		}
		conns = append(conns, telegram.New(cfg.TelegramBotToken, opts...))
	}
	if cfg.SlackEnabled() {
		opts := []slack.Option{
			slack.WithAllowedUsers(cfg.SlackAllowedUsers),
			slack.WithApprovers(cfg.Approvers()),
			slack.WithLogger(log), // it names itself
			slack.WithStats(m),
		}
		if cfg.SlackApiURL != "" {
			opts = append(opts, slack.WithAPIURL(cfg.SlackApiURL))
		}
		if cfg.SlackSocketMode() {
			opts = append(opts, slack.WithAppToken(cfg.SlackAppToken))
		} else {
			opts = append(opts, slack.WithSigningSecret(cfg.SlackSigningSecret))
		}
		conns = append(conns, slack.New(cfg.SlackBotToken, opts...))
	}
	if !cfg.WebEnabled() {
		return conns, nil
	}

	// Readiness covers the store, every connector (the web one included) and the CLI.
	checks := append([]metrics.Check(nil), extra...) // the store
	checks = append(checks, metrics.Check{Name: ag.Name(), Ready: ag.Ready})
	readyz := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		metrics.Readyz(checks...).ServeHTTP(w, r)
	})
	opts := []web.Option{
		web.WithAddr(cfg.WebAddr),
		web.WithToken(cfg.WebToken),
		web.WithAgentName(ag.About().Title),
		web.WithLogger(log.With("connector", "web")),
		web.WithRoute("/healthz", metrics.Healthz()),
		web.WithRoute("/readyz", readyz),
		web.WithRoute("/metrics", m.Handler()),
		web.WithMaxStreams(cfg.WebMaxStreams),
		web.WithMaxConns(cfg.WebMaxConnections),
	}
	opts = append(opts, webOpts...)
	for _, c := range conns {
		if mt, ok := c.(connectors.Mounter); ok {
			opts = append(opts, web.WithMounter(mt))
		}
	}
	conns = append(conns, web.New(opts...))
	checks = append(checks, metrics.ConnectorChecks(conns...)...)
	return conns, nil
}

func names(cs []connectors.Connector) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name()
	}
	return out
}
