package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/engine/policy"
)

// policyUsage is printed by `leashd policy -h` and after a bad command line.
const policyUsage = `Usage:
  leashd policy check FILE
      validates an approval policy file and lists its rules
  leashd policy test FILE --tool T [--command C] [--path P] [--chat ID] [--workdir DIR]
      shows which rule decides a tool request, and how

The file is what LEASHD_POLICY_FILE names: ordered rules that allow, deny,
ask or require a quorum for tool requests before anyone is asked (README.md,
Policies). Neither command needs the other LEASHD_* settings.

Flags of test:
  --tool T       the tool name, e.g. Bash, Write, mcp__github__create_issue (required)
  --command C    the Bash command, e.g. 'git push origin main'
  --path P       a file path in the input (repeat for several)
  --chat ID      the chat, e.g. telegram:42
  --workdir DIR  the working directory relative path globs are matched in
                 (default: LEASHD_WORKDIR, else the current directory)
`

// policyTestArgs are `leashd policy test`'s parsed command line.
type policyTestArgs struct {
	file string
	req  policy.Request
}

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// parsePolicyTestArgs reads `leashd policy test`'s arguments: FILE before
// or after the flags.
func parsePolicyTestArgs(args []string, workDir string) (policyTestArgs, error) {
	var a policyTestArgs
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		a.file, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("leashd policy test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var paths repeated
	fs.StringVar(&a.req.Tool, "tool", "", "")
	fs.StringVar(&a.req.Command, "command", "", "")
	fs.Var(&paths, "path", "")
	fs.StringVar(&a.req.Chat, "chat", "", "")
	fs.StringVar(&a.req.WorkDir, "workdir", workDir, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return a, err
		}
		return a, fmt.Errorf("leashd policy test: %w", err)
	}
	rest := fs.Args()
	if a.file == "" && len(rest) > 0 {
		a.file, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return a, fmt.Errorf("leashd policy test: unexpected argument %q (it takes FILE and flags; quote a command with spaces: --command 'git push')", rest[0])
	}
	if strings.TrimSpace(a.file) == "" {
		return a, errors.New("leashd policy test: no policy file given: leashd policy test FILE --tool T")
	}
	if strings.TrimSpace(a.req.Tool) == "" {
		return a, errors.New("leashd policy test: --tool is missing or empty: give the tool name, e.g. --tool Bash")
	}
	for _, p := range paths {
		if p == "" {
			return a, errors.New("leashd policy test: --path is empty: give a file path, e.g. --path src/main.go")
		}
	}
	a.req.Paths = paths
	return a, nil
}

// runPolicy is `leashd policy check|test`.
func runPolicy(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, "leashd policy: say check or test\n\n"+policyUsage)
		return errUsage
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, policyUsage)
		return nil
	case "check":
		if len(args) != 2 || strings.HasPrefix(args[1], "-") {
			if len(args) == 2 && (args[1] == "-h" || args[1] == "--help") {
				fmt.Fprint(stdout, policyUsage)
				return nil
			}
			fmt.Fprint(stderr, "leashd policy check: give exactly one policy file\n\n"+policyUsage)
			return errUsage
		}
		p, err := policy.Load(args[1])
		if err != nil {
			return err
		}
		rules := p.Rules()
		fmt.Fprintf(stdout, "%s: valid, %d rule%s (the first matching rule decides; no match: ask)\n", args[1], len(rules), plural(len(rules)))
		for i := range rules {
			fmt.Fprintf(stdout, "  %s: %s → %s\n", rules[i].Ref(), describeMatch(&rules[i]), describeDecision(rules[i].Decision, rules[i].Quorum, rules[i].Reason))
		}
		return nil
	case "test":
		wd := os.Getenv(config.Prefix + "_WORKDIR")
		if wd == "" {
			wd, _ = os.Getwd()
		}
		a, err := parsePolicyTestArgs(args[1:], wd)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, policyUsage)
			return nil
		}
		if err != nil {
			fmt.Fprintf(stderr, "%v\n\n%s", err, policyUsage)
			return errUsage
		}
		p, err := policy.Load(a.file)
		if err != nil {
			return err
		}
		res := p.Evaluate(a.req)
		if res.Rule == nil {
			fmt.Fprintln(stdout, "no rule matches: ask (the request is put to people as usual)")
		} else {
			fmt.Fprintf(stdout, "%s decides: %s\n", res.Rule.Ref(), describeDecision(res.Decision, res.Quorum, res.Reason))
		}
		if res.Rule != nil && res.Rule.Command != "" && res.Decision == policy.Allow {
			fmt.Fprintln(stdout, "  (allow rules match only a single command without shell operators)")
		}
		describeCommand(stdout, a.req.Command)
		return nil
	default:
		fmt.Fprintf(stderr, "leashd policy: unknown command %q (accepted: check, test)\n\n%s", args[0], policyUsage)
		return errUsage
	}
}

// describeCommand says how deny, ask and quorum rules see a Bash command
// line when that is not the line itself, and when allow rules cannot match
// it because it is not understood.
func describeCommand(w io.Writer, cmd string) {
	if cmd == "" {
		return
	}
	cmds, sure := policy.Split(cmd)
	if len(cmds) != 1 || cmds[0] != strings.TrimSpace(cmd) {
		quoted := make([]string, len(cmds))
		for i, c := range cmds {
			quoted[i] = strconv.Quote(c)
		}
		fmt.Fprintf(w, "  deny, ask and quorum rules also see: %s\n", strings.Join(quoted, ", "))
	}
	if !sure {
		fmt.Fprintln(w, "  (not fully understood: an open quote, or an option a wrapper or git does not have; allow rules do not match it)")
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func describeMatch(r *policy.Rule) string {
	parts := []string{"tool " + r.Tool}
	if r.Command != "" {
		parts = append(parts, "command /"+r.Command+"/")
	}
	if r.Path != "" {
		parts = append(parts, "path "+r.Path)
	}
	if r.Chat != "" {
		parts = append(parts, "chat "+r.Chat)
	}
	return strings.Join(parts, ", ")
}

func describeDecision(d policy.Decision, quorum int, reason string) string {
	switch d {
	case policy.Deny:
		return "deny: " + reason
	case policy.Quorum:
		return fmt.Sprintf("quorum %d (put to people: %d different approvers must approve; in a chat of one person it is denied)", quorum, quorum)
	case policy.Allow:
		return "allow (runs without asking)"
	default:
		return "ask (put to people)"
	}
}

// loadPolicy reads LEASHD_POLICY_FILE at start-up; nil when it is not set.
// A file that does not validate stops leashd, naming the line.
func loadPolicy(cfg config.Config) (*policy.Holder, error) {
	if cfg.PolicyFile == "" {
		return nil, nil
	}
	p, err := policy.Load(cfg.PolicyFile)
	if err != nil {
		return nil, fmt.Errorf("LEASHD_POLICY_FILE: %w", err)
	}
	return policy.NewHolder(cfg.PolicyFile, p), nil
}

// reloadPolicyOn reloads the policy each time a signal arrives on sig,
// until ctx is done. A file that does not validate keeps the policy in
// force and logs an ERROR naming the line.
func reloadPolicyOn(ctx context.Context, sig <-chan os.Signal, h *policy.Holder, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
			p, err := h.Reload()
			if err != nil {
				log.Error("policy not reloaded; the previous policy stays in force", "file", h.File(), "err", err)
				continue
			}
			log.Info("policy reloaded", "file", h.File(), "rules", len(p.Rules()))
		}
	}
}

// watchPolicy reloads the policy on SIGHUP while ctx lasts.
func watchPolicy(ctx context.Context, h *policy.Holder, log *slog.Logger) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	go func() {
		defer signal.Stop(sig)
		reloadPolicyOn(ctx, sig, h, log)
	}()
}
