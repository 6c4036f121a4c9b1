// Command leashd runs the leashd service: chat connectors in front of a
// coding agent. `leashd -h` lists every LEASHD_* variable.
//
//	leashd            serve (web page and API, Telegram, Slack as configured)
//	leashd chat       talk to the agent in this terminal
//	leashd audit      print the audit log
//	leashd policy     check an approval policy file, test a request against it
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/leashd/leashd/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, errUsage) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "leashd:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func usage(w io.Writer) {
	fmt.Fprint(w, `leashd puts a coding agent (Claude Code) behind Telegram, Slack, a web page
and the terminal, and turns its questions, plan reviews and tool approvals
into buttons.

Usage:
  leashd                 serve (configured by the LEASHD_* variables below)
  leashd chat [--chat ID] [--log FILE]
                         talk to the agent in this terminal
  leashd audit [--chat C] [--since D] [--kind K] [--status S] [--limit N] [--json] [--db FILE]
                         print the audit log (also while leashd runs)
  leashd policy check FILE | test FILE --tool T [--command C] [--path P] [--chat ID]
                         validate an approval policy file; show which rule decides a request
  leashd -h              this help

Environment:
`)
	_ = config.Usage(w)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "--help", "-help", "help":
			usage(stdout)
			return nil
		case "policy": // checks a file; needs no configuration
			return runPolicy(args[1:], stdout, stderr)
		}
	}
	cfg, err := config.Load()
	if err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	if len(args) == 0 {
		return serve(ctx, cfg, stderr)
	}
	switch args[0] {
	case "chat":
		return runChat(ctx, cfg, args[1:], stdin, stdout, stderr)
	case "audit":
		return runAudit(ctx, cfg, args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "leashd: unknown command %q (accepted: chat, audit, policy, -h)\n", args[0])
		return errUsage
	}
}
