package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/terminal"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// chatUsage is printed by `leashd chat -h` and after a bad flag.
const chatUsage = `Usage: leashd chat [--chat ID] [--log FILE]

Talks to the agent in this terminal. It runs its own engine in this process
(it does not attach to a running leashd), with the agent LEASHD_AGENT selects
and the other LEASHD_* settings. The chat is "terminal:local", or
"terminal:ID" with --chat.

At a question: type the number or move with the arrow keys and press Enter,
or type your own answer; r or Ctrl+C rejects. At a tool approval: a allows,
s allows for the session, d denies with a reason, r or Ctrl+C rejects.
Ctrl+C while the agent works stops the turn. Ctrl+D on an empty line, or
/exit, quits.

Flags:
  --chat ID    the chat's name (default local)
  --log FILE   write logs to FILE at LEASHD_LOG_LEVEL (default: warnings only,
               shown above the prompt)
`

// runChat is `leashd chat`: the terminal connector in front of an engine of
// its own.
func runChat(ctx context.Context, s settings, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg := s.Config
	fs := flag.NewFlagSet("leashd chat", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	chatID := fs.String("chat", "local", "")
	logFile := fs.String("log", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, chatUsage)
			return nil
		}
		return chatUsageError(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return chatUsageError(stderr, fmt.Sprintf("unexpected argument %q (it takes only --chat and --log)", fs.Arg(0)))
	}
	if id := strings.TrimSpace(*chatID); id == "" || strings.ContainsAny(id, " \t\r\n") {
		return chatUsageError(stderr, fmt.Sprintf("--chat %q is invalid: give a name without spaces, e.g. --chat work", *chatID))
	}

	name := "local"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	term := terminal.New(stdin, stdout, terminal.WithChat(strings.TrimSpace(*chatID)), terminal.WithUser(name, name))

	log, closeLog, err := chatLogger(cfg, s.secrets(), *logFile, stderr, term)
	if err != nil {
		return err
	}
	defer closeLog()

	ag, err := selectAgent(ctx, cfg, log, nil)
	if err != nil {
		return err
	}
	pol, err := loadPolicy(cfg)
	if err != nil {
		return err
	}
	coord := interactions.New(
		interactions.WithTimeout(time.Duration(cfg.ApprovalTimeoutSeconds)*time.Second),
		interactions.WithLogger(log),
	)
	deps := engine.Deps{Agent: ag, Coord: coord, Log: log}
	ecfg := engineConfig(cfg)
	ecfg.CloseTimeout = time.Duration(max(cfg.ShutdownTimeoutSeconds, 1)) * time.Second
	if cfg.WorktreesOn() {
		trees, err := worktreesFor(ctx, cfg)
		if err != nil {
			return err
		}
		deps.Worktrees = trees
	}
	if pol != nil {
		deps.Policy = pol
	}
	eng := engine.New(deps, ecfg)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	eng.AddConnector(&quitting{term, cancel})
	return eng.Run(ctx)
}

// chatUsageError says what was wrong with the command line, then how to
// use it; main exits with status 2.
func chatUsageError(stderr io.Writer, msg string) error {
	fmt.Fprintf(stderr, "leashd chat: %s\n\n%s", msg, chatUsage)
	return errUsage
}

// quitting stops the engine when the person quits the terminal.
type quitting struct {
	*terminal.Connector
	cancel context.CancelFunc
}

func (q *quitting) Run(ctx context.Context, h connectors.Handler) error {
	defer q.cancel()
	return q.Connector.Run(ctx, h)
}

// chatLogger logs to file at LEASHD_LOG_LEVEL, or else warnings only: to
// stderr when it is not the terminal the chat runs in, otherwise above the
// prompt, never over it; secrets are redacted.
func chatLogger(cfg config.Config, secrets []string, file string, stderr io.Writer, t *terminal.Connector) (*slog.Logger, func(), error) {
	if file != "" {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("leashd chat: --log %q: %w", file, err)
		}
		log, err := config.NewLogger(cfg, f, secrets...)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		return log, func() { f.Close() }, nil
	}
	w := stderr
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		w = t.LogWriter()
	}
	cfg.LogLevel = "warn"
	log, err := config.NewLogger(cfg, w, secrets...)
	if err != nil {
		return nil, nil, err
	}
	return log, func() {}, nil
}
