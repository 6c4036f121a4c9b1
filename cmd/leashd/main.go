// Command leashd runs the leashd service: chat connectors in front of a
// coding agent. `leashd -h` lists every LEASHD_* variable.
//
//	leashd            serve (web page and API, Telegram, Slack as configured)
//	leashd chat       talk to the agent in this terminal
//	leashd audit      print the audit log
//	leashd ask        ask a person through a running leashd
//	leashd mcp        MCP server on stdio, asking through a running leashd
//	leashd hook       Claude Code hooks: your own terminal's session asks on the phone
//	leashd away       say whether you are away from the desk
//	leashd worktrees  list (or prune) the chats' git worktrees
//	leashd policy     check an approval policy file, test a request against it
//	leashd runner     run agents for a leashd server on this machine
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
	var code exitCode
	if errors.As(err, &code) {
		os.Exit(int(code))
	}
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
  leashd ask --chat CHAT [--option LABEL]... [--multi] [--approval] [--timeout D] "question"
                         ask a person through a running leashd; prints the answer
  leashd mcp [--chat CHAT]
                         MCP server on stdio (ask_user, request_approval,
                         permission_prompt) asking through a running leashd
  leashd hook install [--chat CHAT] [--scope user|project|local] | uninstall | status
                         let your own terminal's Claude Code ask on the phone while you are away
  leashd away on|off|status [--chat CHAT]
                         say whether you are away from the desk (/away and /back in the chat)
  leashd worktrees [prune] [--db FILE]
                         list the chats' git worktrees; prune those whose chat is gone
  leashd runner --server URL --token TOKEN [--name N] [--max-agents N] [--labels a,b] [--workdir DIR]
                         run agents for a leashd server on this machine (dials out)
  leashd policy check FILE | test FILE --tool T [--command C] [--path P] [--chat ID]
                         validate an approval policy file; show which rule decides a request
  leashd -h              this help

Environment:
`)
	_ = config.Usage(w, sections()...)
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
	cfg, err := loadSettings()
	if len(args) > 0 && args[0] == "ask" {
		// A client of a running leashd: only the web address and token
		// matter, and the server's settings need not be valid here.
		if err != nil {
			fmt.Fprintf(stderr, "leashd ask: invalid configuration:\n%v\n", err)
			return askError
		}
		return runAsk(ctx, cfg, args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "hook" || args[0] == "away") {
		// Clients of a running leashd too; a hook Claude Code runs
		// decides nothing rather than fail.
		if err != nil && args[0] == "hook" && len(args) > 1 && hookEventCommand(args[1]) {
			fmt.Fprintf(stderr, "leashd hook: invalid configuration, the terminal decides:\n%v\n", err)
			return nil
		}
		if err != nil {
			return fmt.Errorf("invalid configuration:\n%w", err)
		}
		if args[0] == "away" {
			return runAway(ctx, cfg, args[1:], stdout, stderr)
		}
		return runHook(ctx, cfg, args[1:], stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "mcp" {
		if err != nil {
			return fmt.Errorf("invalid configuration:\n%w", err)
		}
		return runMCP(ctx, cfg, args[1:], stdout, stderr)
	}
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
		return runAudit(ctx, cfg.Config, args[1:], stdout, stderr)
	case "worktrees":
		return runWorktrees(ctx, cfg.Config, args[1:], stdout, stderr)
	case "runner":
		return runRunner(ctx, cfg, args[1:], stderr)
	default:
		fmt.Fprintf(stderr, "leashd: unknown command %q (accepted: chat, audit, ask, mcp, hook, away, worktrees, runner, policy, -h)\n", args[0])
		return errUsage
	}
}
