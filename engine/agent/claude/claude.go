// Package claude runs the Claude Code CLI as an agent.Agent: one
// long-lived `claude` process per session, driven over its stream-json
// control protocol on stdin/stdout (see DESIGN.md, "Claude Code CLI: the
// control protocol"). Permission requests (can_use_tool) are handed to the
// engine's TurnHandler, each on its own goroutine, while stdout keeps being
// read.
package claude

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/sandbox"
)

// DefaultProgram is the program looked up on PATH when no path is given.
const DefaultProgram = "claude"

// InstallHint says how to get the CLI.
const InstallHint = "install it with `npm install -g @anthropic-ai/claude-code` or set LEASHD_CLAUDE_PATH to its path"

// loginSteps say how Claude Code gets its credentials. Its own /login is
// interactive and runs on the machine, so it cannot be done from a chat.
const loginSteps = "Claude Code logs in on the machine that runs leashd, not from the chat. On that machine, either set ANTHROPIC_API_KEY in leashd's environment (e.g. its env file) and restart leashd, or run `claude` once as the user leashd runs as, type /login there and finish the login. Then send your message again."

// about is how Claude Code presents itself to people. NotLoggedIn follows
// a turn the CLI could not run for want of credentials (it answers "Not
// logged in · Please run /login" or "Invalid API key").
var about = agent.About{
	Label:       "Claude Code",
	Title:       "Claude Code",
	InstallHint: "Install Claude Code (npm install -g @anthropic-ai/claude-code) or set LEASHD_CLAUDE_PATH; LEASHD_AGENT=demo runs the built-in demo agent.",
	LoginHelp:   loginSteps,
	NotLoggedIn: "Claude Code is not logged in, or its API key was refused, so the agent could not answer. " + loginSteps,
}

// Defaults.
const (
	// DefaultCloseTimeout is how long Close waits at each step (after
	// closing stdin, after SIGTERM) before the next, harsher one.
	DefaultCloseTimeout = 5 * time.Second
	// DefaultStartTimeout bounds the initialize handshake.
	DefaultStartTimeout = 60 * time.Second
	// MaxLineBytes is the default longest stdout line (one message from
	// the CLI) read whole (LEASHD_MAX_AGENT_MESSAGE_BYTES). Of a longer one
	// only the first MaxLineBytes are kept: its text ends with a
	// "… truncated (N bytes)" note, a tool request in it is refused. Tool
	// results (a file read whole) make long lines, but leashd shows none.
	MaxLineBytes = 4 << 20
	// MinLineBytes is the smallest limit WithMaxMessageBytes accepts: the
	// CLI's start-up messages (tools, commands, models) must fit.
	MinLineBytes = 256 << 10
)

// Agent starts Claude Code CLI sessions. Create it with New.
type Agent struct {
	path         string
	log          *slog.Logger
	env          []string
	closeTimeout time.Duration
	startTimeout time.Duration
	args         []string
	maxLine      int // MaxLineBytes; smaller in tests
	partial      bool
	sandbox      sandbox.Sandbox
	planDir      string // where the CLI writes plan files
}

// Option configures an Agent.
type Option func(*Agent)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(a *Agent) { a.log = l } }

// WithEnv adds environment variables ("K=V"), appended to the inherited
// environment (so they win over inherited ones).
func WithEnv(env []string) Option {
	return func(a *Agent) { a.env = append(a.env, env...) }
}

// WithSandbox sets where the CLI runs (default: leashd's child process,
// unconfined, with the minimal environment).
func WithSandbox(sb sandbox.Sandbox) Option { return func(a *Agent) { a.sandbox = sb } }

// WithCloseTimeout sets how long Close waits after closing stdin and again
// after SIGTERM before escalating (default 5s each).
func WithCloseTimeout(d time.Duration) Option { return func(a *Agent) { a.closeTimeout = d } }

// WithStartTimeout bounds the start-up handshake (default 60s).
func WithStartTimeout(d time.Duration) Option { return func(a *Agent) { a.startTimeout = d } }

// WithMaxMessageBytes sets the longest message (stdout line) read whole
// (default MaxLineBytes; at least MinLineBytes). It bounds the memory a
// session's reader uses however long a line the agent prints.
func WithMaxMessageBytes(n int) Option {
	return func(a *Agent) {
		if n > 0 {
			a.maxLine = max(n, MinLineBytes)
		}
	}
}

// WithPartialText streams assistant text to TurnHandler.Text as the model
// writes it (the CLI's --include-partial-messages), in small pieces,
// instead of one piece per finished text block.
func WithPartialText(on bool) Option { return func(a *Agent) { a.partial = on } }

// WithExtraArgs adds command-line arguments after leashd's own.
func WithExtraArgs(args ...string) Option {
	return func(a *Agent) { a.args = append(a.args, args...) }
}

// New returns an Agent running the CLI at path ("" means "claude" on PATH;
// see Find).
func New(path string, opts ...Option) *Agent {
	if path == "" {
		path = DefaultProgram
	}
	a := &Agent{path: path, closeTimeout: DefaultCloseTimeout, startTimeout: DefaultStartTimeout, maxLine: MaxLineBytes}
	for _, o := range opts {
		o(a)
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.sandbox == nil {
		a.sandbox = &sandbox.Host{}
	}
	if a.closeTimeout <= 0 {
		a.closeTimeout = DefaultCloseTimeout
	}
	if a.startTimeout <= 0 {
		a.startTimeout = DefaultStartTimeout
	}
	a.planDir = plansDir(append(os.Environ(), a.env...))
	return a
}

// plansDir is where the CLI writes its plan files given its environment
// (the last value of a variable wins, as in the agent's): plans/ in
// CLAUDE_CONFIG_DIR, else in ~/.claude. "" when neither is known. An
// ExitPlanMode's planFilePath is read only from inside it.
func plansDir(env []string) string {
	var home, cfg string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME":
			home = v
		case "CLAUDE_CONFIG_DIR":
			cfg = v
		}
	}
	switch {
	case cfg != "":
		return filepath.Join(cfg, "plans")
	case home != "":
		return filepath.Join(home, ".claude", "plans")
	}
	return ""
}

// Name implements agent.Agent.
func (a *Agent) Name() string { return "claude" }

// About implements agent.Agent.
func (a *Agent) About() agent.About { return about }

// Ready implements agent.Agent: the CLI is an executable (a path, or a name
// found on $PATH).
func (a *Agent) Ready() error {
	if _, err := a.sandbox.LookPath(a.path); err != nil {
		return fmt.Errorf("%s not found: %w", a.path, err)
	}
	return nil
}

// Path is the program the Agent runs.
func (a *Agent) Path() string { return a.path }

// Find resolves the CLI's path: path itself (LEASHD_CLAUDE_PATH; "" means
// "claude") through lookPath (the sandbox's: a container has its own
// PATH). Missing, the error wraps agent.ErrAgentNotFound and says how to
// install it.
func Find(lookPath func(string) (string, error), path string) (string, error) {
	if path == "" {
		path = DefaultProgram
	}
	p, err := lookPath(path)
	if err != nil {
		return "", notFound(path, err)
	}
	return p, nil
}

func notFound(path string, err error) error {
	return fmt.Errorf("%w: Claude Code CLI %q (%v); %s", agent.ErrAgentNotFound, path, err, InstallHint)
}

// argsFor returns the CLI's arguments for a session.
func (a *Agent) argsFor(o agent.SessionOptions) []string {
	mode := o.Mode
	if mode == "" {
		mode = agent.ModeDefault
	}
	args := []string{
		"--output-format", "stream-json",
		"--input-format", "stream-json",
		"--verbose",
		"--permission-prompt-tool", "stdio",
		"--permission-mode", string(mode),
	}
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	if o.ResumeID != "" {
		args = append(args, "--resume", o.ResumeID)
	}
	if a.partial {
		args = append(args, "--include-partial-messages")
	}
	return append(args, a.args...)
}

// Open implements agent.Agent: it starts a CLI process in o.WorkDir and
// completes the initialize handshake. ctx bounds the start only; the
// session lives until Close or until the process dies.
func (a *Agent) Open(ctx context.Context, o agent.SessionOptions) (agent.Session, error) {
	if o.WorkDir != "" {
		if st, err := os.Stat(o.WorkDir); err != nil {
			return nil, fmt.Errorf("working directory %s: %w", o.WorkDir, err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("working directory %s is not a directory", o.WorkDir)
		}
	}
	s, err := start(a, o)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			// Without the install hint: the engine adds its own.
			return nil, fmt.Errorf("%w: Claude Code CLI %q (%v)", agent.ErrAgentNotFound, a.path, err)
		}
		return nil, fmt.Errorf("starting %s: %w", a.path, err)
	}
	sctx, cancel := context.WithTimeout(ctx, a.startTimeout)
	defer cancel()
	if err := s.initialize(sctx); err != nil {
		s.kill()
		<-s.done
		if errors.Is(err, agent.ErrSessionEnded) {
			return nil, err
		}
		return nil, fmt.Errorf("claude did not complete its start-up handshake: %w", err)
	}
	return s, nil
}

// Prewarm implements agent.Prewarmer: a CLI process takes about 0.7 s to
// start and initialize, so the engine keeps spares (LEASHD_PREWARM).
func (a *Agent) Prewarm() bool { return true }
