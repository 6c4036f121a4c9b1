package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/leashd/leashd/cmd/internal/claudehooks"
	"github.com/leashd/leashd/connectors/telegram"
)

// hookUsage is printed by `leashd hook -h` and after a bad flag.
const hookUsage = `Usage: leashd hook install [--chat CHAT] [--scope user|project|local] [--url URL]
       leashd hook uninstall [--scope user|project|local]
       leashd hook status [--scope user|project|local]

Lets a Claude Code session you started yourself, in your terminal, follow
you to the phone: install writes leashd's hooks into Claude Code's settings
(merged with what is there; the file as it was is kept beside it with the
suffix .leashd-backup) and uninstall takes exactly them out again. At the
desk the hooks change nothing; after "leashd away on" (or /away in the
chat) a permission dialog is asked in CHAT as buttons, and when the session
finishes its last message goes there and what you type next continues it.

Flags:
  --chat CHAT   where to ask (default: the first allowed Telegram user's
                private chat, else the web chat "desk")
  --scope S     user: ~/.claude/settings.json (every project; the default)
                project: .claude/settings.json here (shared with the repo)
                local: .claude/settings.local.json here (yours, not committed)
  --url URL     leashd's address, when the hooks cannot find it from
                LEASHD_WEB_ADDR in Claude Code's environment

The hooks Claude Code runs (not for typing): leashd hook permission-request,
leashd hook stop, leashd hook notify, leashd hook prompt (a prompt typed at
the terminal: LEASHD_AWAY_AFTER_SECONDS counts idle time from it).
`

// The hook subcommands Claude Code runs, and the events they are for.
var hookEvents = []struct{ sub, event, matcher string }{
	{"permission-request", "PermissionRequest", "*"},
	{"stop", "Stop", ""},
	{"notify", "Notification", "permission_prompt"},
	{"prompt", "UserPromptSubmit", ""},
}

// runHook is `leashd hook`.
func runHook(ctx context.Context, cfg settings, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, hookUsage)
		return errUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, hookUsage)
		return nil
	case "install", "uninstall", "status":
		return runHookSetup(cfg, args[0], args[1:], stdout, stderr)
	case "permission-request", "stop", "notify", "prompt":
		return runHookEvent(ctx, cfg, args[0], args[1:], stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "leashd hook: unknown command %q (accepted: install, uninstall, status)\n\n%s", args[0], hookUsage)
	return errUsage
}

// hookSetup is the parsed flags of install, uninstall and status.
type hookSetup struct {
	chat, scope, url string
}

func parseHookSetup(cmd string, args []string, stderr io.Writer) (hookSetup, error) {
	fs := flag.NewFlagSet("leashd hook "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var h hookSetup
	fs.StringVar(&h.scope, "scope", "user", "")
	if cmd == "install" {
		fs.StringVar(&h.chat, "chat", "", "")
		fs.StringVar(&h.url, "url", "", "")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return h, err
		}
		fmt.Fprint(stderr, hookUsage)
		return h, fmt.Errorf("leashd hook %s: %w", cmd, err)
	}
	if fs.NArg() > 0 {
		return h, fmt.Errorf("leashd hook %s: unexpected argument %q (see leashd hook -h)", cmd, fs.Arg(0))
	}
	if strings.ContainsAny(h.chat+h.url, "\n\r\x00") {
		return h, fmt.Errorf("leashd hook %s: --chat and --url are one line each", cmd)
	}
	return h, nil
}

// settingsFile is Claude Code's settings file of a scope: user is under
// CLAUDE_CONFIG_DIR (default ~/.claude), project and local in .claude of
// the current directory.
func settingsFile(scope string) (string, error) {
	switch scope {
	case "user":
		dir := os.Getenv("CLAUDE_CONFIG_DIR")
		if dir == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("finding your home directory for --scope user: %w", err)
			}
			dir = filepath.Join(home, ".claude")
		}
		return filepath.Join(dir, "settings.json"), nil
	case "project", "local":
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		name := "settings.json"
		if scope == "local" {
			name = "settings.local.json"
		}
		return filepath.Join(wd, ".claude", name), nil
	}
	return "", fmt.Errorf("--scope %q is not a scope: use user, project or local", scope)
}

// defaultHookChat is where hooks ask without --chat: the first allowed
// Telegram user's private chat when Telegram is set up, else the web
// chat "desk".
func defaultHookChat(cfg settings) string {
	for _, a := range cfg.apps {
		if tc, ok := a.Settings().(*telegram.Config); ok && tc.Enabled() && len(tc.AllowedUsers) > 0 {
			return "telegram:" + strings.TrimSpace(tc.AllowedUsers[0])
		}
	}
	return "desk"
}

// isLeashdHook recognises the hooks leashd installs: the command of a
// program named leashd… running one of the hook subcommands.
func isLeashdHook(command string) bool {
	f := strings.Fields(command)
	if len(f) < 3 {
		return false
	}
	prog := strings.Trim(f[0], `'"`)
	if !strings.HasPrefix(filepath.Base(prog), "leashd") || f[1] != "hook" {
		return false
	}
	for _, e := range hookEvents {
		if f[2] == e.sub {
			return true
		}
	}
	return false
}

// leashdHooks are the hooks install writes: this program, by its absolute
// path, for each event; they wait as long as leashd waits for an answer
// (LEASHD_APPROVAL_TIMEOUT_SECONDS) and a minute more.
func leashdHooks(cfg settings, h hookSetup) ([]claudehooks.Hook, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding leashd's own path for the hooks: %w", err)
	}
	if abs, err := filepath.EvalSymlinks(exe); err == nil {
		exe = abs
	}
	wait := cfg.ApprovalTimeoutSeconds + 60
	if cfg.ApprovalTimeoutSeconds == 0 {
		wait = 7 * 24 * 3600
	}
	var out []claudehooks.Hook
	for _, e := range hookEvents {
		cmd := shellWord(exe) + " hook " + e.sub + " --chat " + shellWord(h.chat)
		if h.url != "" {
			cmd += " --url " + shellWord(h.url)
		}
		t := wait
		if e.sub == "notify" || e.sub == "prompt" {
			t = 10
		}
		out = append(out, claudehooks.Hook{Event: e.event, Matcher: e.matcher, Command: cmd, Timeout: t})
	}
	return out, nil
}

// shellWord quotes s for sh when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-:+=@,", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runHookSetup is install, uninstall and status.
func runHookSetup(cfg settings, cmd string, args []string, stdout, stderr io.Writer) error {
	h, err := parseHookSetup(cmd, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, hookUsage)
		return nil
	}
	if err != nil {
		return err
	}
	path, err := settingsFile(h.scope)
	if err != nil {
		return err
	}
	switch cmd {
	case "install":
		if h.chat == "" {
			h.chat = defaultHookChat(cfg)
		}
		hooks, err := leashdHooks(cfg, h)
		if err != nil {
			return err
		}
		changed, err := claudehooks.Install(path, hooks, isLeashdHook)
		if err != nil {
			return err
		}
		state := "installed"
		if !changed {
			state = "already installed"
		}
		fmt.Fprintf(stdout, "leashd's hooks are %s in %s: they ask in %s while you are away (leashd away on, or /away in that chat). Claude Code sessions started from now on use them.\n", state, path, h.chat)
		return nil
	case "uninstall":
		n, err := claudehooks.Uninstall(path, isLeashdHook)
		if err != nil {
			return err
		}
		if n == 0 {
			fmt.Fprintf(stdout, "No leashd hooks in %s.\n", path)
			return nil
		}
		fmt.Fprintf(stdout, "Removed leashd's %d hooks from %s.\n", n, path)
		return nil
	}
	found, err := claudehooks.Find(path, isLeashdHook)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		fmt.Fprintf(stdout, "No leashd hooks in %s (leashd hook install --scope %s adds them).\n", path, h.scope)
		return nil
	}
	fmt.Fprintf(stdout, "leashd's hooks in %s:\n", path)
	for _, f := range found {
		fmt.Fprintf(stdout, "  %s  %s  (timeout %ds)\n", f.Event, f.Command, f.Timeout)
	}
	return nil
}

// hookEventCommand reports whether sub is one of the hooks Claude Code
// runs.
func hookEventCommand(sub string) bool {
	for _, e := range hookEvents {
		if e.sub == sub {
			return true
		}
	}
	return false
}
