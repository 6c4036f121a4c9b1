// Package config reads leashd's configuration from LEASHD_* environment
// variables and validates it with messages an operator can act on.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Prefix is the environment prefix of every variable leashd reads.
const Prefix = "LEASHD"

// Config is leashd's configuration shared by every chat app: the agent,
// approvals, limits, the database and the log. Each chat app reads its own
// settings (a Section: LEASHD_TELEGRAM_*, LEASHD_SLACK_*, LEASHD_WEB_*).
// The zero value is not valid; use Load (or Defaults for tests) to get one
// with defaults applied.
type Config struct {
	ApprovalTimeoutSeconds int    `split_words:"true" default:"300" max:"604800" desc:"Seconds a question, plan review or tool approval waits for an answer before the agent is told none came; 0 waits forever; at most 604800 (7 days)"`
	Agent                  string `default:"auto" desc:"Agent backend: auto (Claude Code when found, else demo), claude, acp or demo"`
	ACPCommand             string `split_words:"true" desc:"With LEASHD_AGENT=acp: the ACP agent's command line, e.g. gemini --acp, claude-agent-acp, codex-acp, opencode acp (split like a shell would; no shell is run)"`
	ClaudePath             string `split_words:"true" default:"claude" desc:"Path or name of the Claude Code CLI"`
	ClaudeModel            string `split_words:"true" desc:"Model passed to claude --model (empty: the CLI's default)"`
	Workdir                string `desc:"Working directory of the agent (default: the current directory)"`
	DefaultMode            string `split_words:"true" default:"default" desc:"Permission mode of a new chat: default, plan or acceptEdits"`
	MaxConcurrentAgents    int    `split_words:"true" default:"4" min:"1" max:"1000" desc:"Agent processes that may run at once (1 to 1000); further chats queue. An agent waiting for a person's answer keeps its slot, so unanswered questions can fill them all"`
	Prewarm                int    `default:"1" min:"0" max:"16" desc:"Initialized spare Claude Code processes kept for new chats, counted against LEASHD_MAX_CONCURRENT_AGENTS (0 to 16); 0 = off"`
	AgentIdleSeconds       int    `split_words:"true" default:"600" max:"86400" desc:"An idle agent process is shut down after this many seconds and resumed on the next prompt; 0 = never; at most 86400 (1 day)"`
	AgentTimeoutSeconds    int    `split_words:"true" default:"3600" max:"604800" desc:"Longest agent turn in seconds, not counting time spent waiting for a human; 0 = no limit; at most 604800 (7 days)"`
	ResumeAfterLimit       string `split_words:"true" default:"off" desc:"on: a turn stopped by the Claude account's usage limit resumes by itself once the limit resets; off: the chat is told when it resets"`
	AwayAfterSeconds       int    `split_words:"true" default:"0" max:"604800" desc:"With leashd's Claude Code hooks (leashd hook install): treat you as away from the desk once your terminal session has had no prompt typed for this many seconds, as if you had sent /away; 0 = only /away and leashd away on; at most 604800 (7 days)"`
	PolicyFile             string `split_words:"true" desc:"YAML file of approval rules that allow, deny, ask or require a quorum for tool requests before anyone is asked (empty: every request is asked); reloaded on SIGHUP; check it with leashd policy check FILE"`
	DBPath                 string `split_words:"true" desc:"SQLite database file (default: $XDG_STATE_HOME/leashd/leashd.db or ~/.local/state/leashd/leashd.db)"`
	LogLevel               string `split_words:"true" default:"info" desc:"Log level: debug, info, warn or error"`
	LogFormat              string `split_words:"true" default:"text" desc:"Log format: text or json"`
	ShutdownTimeoutSeconds int    `split_words:"true" default:"20" max:"3600" desc:"Seconds a graceful shutdown may take before leashd exits anyway; 0 = no limit; at most 3600 (1 hour)"`

	// N-of-M approvals in group chats.
	ApprovalQuorum int `split_words:"true" default:"1" min:"1" max:"20" desc:"Distinct approvers who must approve a plan review or tool approval in a group chat (Slack channel, Telegram group) before it is approved (1 to 20); any approver's deny or adjust rejects at once; private chats, the web page and the terminal need one"`

	// A git worktree per chat (engine/worktree).
	Worktrees string `default:"off" desc:"on: LEASHD_WORKDIR must be inside a git repository, and each chat's agent works in its own git worktree on branch leashd/<chat>, kept in worktrees/ next to the database; off: every chat works in LEASHD_WORKDIR"`
	GitAuthor string `split_words:"true" default:"leashd <leashd@localhost>" desc:"Author and committer of the commits and merges /merge makes: Name <email>"`

	// Bounds on what an agent can make leashd hold and post.
	MaxAgentMessageBytes int `split_words:"true" default:"4194304" min:"262144" max:"1073741824" desc:"Longest message from the agent read whole (bytes); the rest of a longer one is left out with a note, and a tool request that long is refused"`
	MaxTurnOutputBytes   int `split_words:"true" default:"65536" max:"1073741824" desc:"Agent text of one turn sent to the chats (bytes); the rest is left out with a note; 0 = no limit"`
	MaxUploadBytes       int `split_words:"true" default:"20971520" min:"1024" max:"1073741824" desc:"Largest file (bytes) a person may send the agent, and the agent may send to a chat with send_file (Telegram bots download at most 20 MB, whatever this says); a larger one is refused with a message naming this variable"`

	// What the agent can reach (engine/agent/sandbox; see sandbox.go).
	AgentEnv       []string `split_words:"true" desc:"Variables agents get beyond the minimal set (PATH, HOME, USER, LANG/LC_*, TERM, TZ, TMPDIR, proxies, ANTHROPIC_*, CLAUDE_*, GEMINI_*, GOOGLE_*, OPENAI_*, CODEX_*, NODE_*, SSL_CERT_*), comma-separated: NAME, PREFIX_* or NAME=value; never LEASHD_*"`
	Sandbox        string   `default:"auto" desc:"Where agents run: auto (bwrap when it works here, else off with a warning), bwrap (bubblewrap: the system read-only, only the chat's working directory, the agent's home and a private /tmp writable, leashd's state hidden), docker (a container per chat from LEASHD_SANDBOX_IMAGE) or off (leashd's own user, with the minimal environment)"`
	SandboxNetwork string   `split_words:"true" default:"on" desc:"on: sandboxed agents reach the network (they need their model's API); off: no network at all, for agents that work through a proxy on a socket; host: with docker, the host's own network, so a model gateway or proxy on the host's loopback is reached (so is leashd's API, which needs its token); with bwrap the same as on"`
	SandboxHome    string   `split_words:"true" desc:"The home directory a sandboxed agent sees and may write (its credentials, ~/.claude, ~/.gemini); default: leashd's own HOME, with leashd's state hidden inside it"`
	SandboxImage   string   `split_words:"true" default:"leashd-agent" desc:"With LEASHD_SANDBOX=docker: the image each chat's container starts from (build it from deploy/agent.Dockerfile)"`
	SandboxCpus    string   `split_words:"true" desc:"With LEASHD_SANDBOX=docker: CPUs per agent container, e.g. 1.5 (empty: no limit)"`
	SandboxMemory  string   `split_words:"true" desc:"With LEASHD_SANDBOX=docker: memory per agent container, e.g. 2g or 512m (empty: no limit)"`

	// The MCP server at /mcp (see mcp.go).
	MCPMaxSessions        int `split_words:"true" default:"1000" min:"1" max:"100000" desc:"MCP sessions open at once over HTTP (/mcp), 1 to 100000; a new client past it is refused with an error naming this variable"`
	MCPSessionIdleSeconds int `split_words:"true" default:"600" max:"86400" desc:"An MCP session with no request in progress for this many seconds is closed (a tool call waiting for a person, or an open event stream, is in progress); 0 = never; at most 86400 (1 day)"`
}

// Agent backends.
const (
	AgentAuto   = "auto"
	AgentClaude = "claude"
	AgentDemo   = "demo"
	AgentACP    = "acp"
)

// Load reads the environment (only LEASHD_* variables) and applies defaults
// that depend on the machine (working directory, database path). It does not
// validate; call Validate.
func Load() (Config, error) {
	var c Config
	if err := process(Prefix, os.LookupEnv, &c); err != nil {
		return Config{}, err
	}
	if err := c.fillMachineDefaults(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Defaults returns the configuration leashd uses when no variable is set,
// without reading the environment. Useful in tests.
func Defaults() Config {
	var c Config
	// Processing an empty lookup only applies defaults; it cannot fail for
	// the tags above.
	_ = process("leashd_defaults_never_set_"+strconv.Itoa(os.Getpid()), func(string) (string, bool) { return "", false }, &c)
	_ = c.fillMachineDefaults()
	return c
}

func (c *Config) fillMachineDefaults() error {
	if c.Workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("LEASHD_WORKDIR is not set and the current directory is unknown: %w", err)
		}
		c.Workdir = wd
	}
	if c.DBPath == "" {
		c.DBPath = DefaultDBPath()
	}
	return nil
}

// DefaultDBPath is $XDG_STATE_HOME/leashd/leashd.db, else
// ~/.local/state/leashd/leashd.db, else leashd.db in the current directory.
func DefaultDBPath() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "leashd", "leashd.db")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".local", "state", "leashd", "leashd.db")
	}
	return "leashd.db"
}

func trimList(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Validate checks every value and returns all problems at once, each naming
// the variable, the bad value and what is accepted. The chat apps' settings
// are checked by their own Validate; LEASHD_GIT_AUTHOR by whoever uses it
// (cmd/leashd, with the worktree package's rule).
func (c Config) Validate() error {
	var p problems
	// Every number within its range (min and max tags; see numbers.go).
	p.errs = append(p.errs, checkRanges(Prefix, reflect.ValueOf(c))...)
	if c.MaxTurnOutputBytes > 0 && c.MaxTurnOutputBytes < 1024 {
		p.bad("MAX_TURN_OUTPUT_BYTES", strconv.Itoa(c.MaxTurnOutputBytes), "accepted: a number of bytes from 1024 to 1073741824 (1 GiB), or 0 for no limit")
	}
	c.checkAgent(&p)
	c.checkSandbox(&p)
	p.oneOf("RESUME_AFTER_LIMIT", c.ResumeAfterLimit, "on", "off")
	p.oneOf("WORKTREES", c.Worktrees, "on", "off")
	p.oneOf("DEFAULT_MODE", c.DefaultMode, "default", "plan", "acceptEdits")
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "warning", "error":
	default:
		p.bad("LOG_LEVEL", c.LogLevel, "accepted: debug, info, warn, error")
	}
	p.oneOf("LOG_FORMAT", c.LogFormat, "text", "json")
	if c.ClaudePath == "" {
		p.bad("CLAUDE_PATH", c.ClaudePath, "give the path or name of the claude executable")
	}
	if fi, err := os.Stat(c.Workdir); err != nil || !fi.IsDir() {
		p.bad("WORKDIR", c.Workdir, "must be an existing directory")
	}
	return errors.Join(p.errs...)
}

// checkAgent checks LEASHD_AGENT and, for an ACP agent, its command line.
func (c Config) checkAgent(p *problems) {
	switch c.Agent {
	case AgentAuto, AgentClaude, AgentDemo:
	case AgentACP:
		if strings.TrimSpace(c.ACPCommand) == "" {
			p.errs = append(p.errs, fmt.Errorf("%s_AGENT=acp needs %s_ACP_COMMAND: the ACP agent's command line, e.g. \"gemini --acp\", \"claude-agent-acp\", \"codex-acp\" or \"opencode acp\"", Prefix, Prefix))
		} else if _, err := SplitCommandLine(c.ACPCommand); err != nil {
			p.bad("ACP_COMMAND", c.ACPCommand, err.Error())
		}
	default:
		p.bad("AGENT", c.Agent, "accepted: auto, claude, acp, demo")
	}
}

// problems collects what Validate finds.
type problems struct{ errs []error }

// bad notes that LEASHD_<name>=value is invalid, saying what is accepted.
func (p *problems) bad(name, value, accepted string) {
	p.errs = append(p.errs, fmt.Errorf("%s_%s=%q is invalid: %s", Prefix, name, value, accepted))
}

// oneOf notes a value that is none of the accepted words.
func (p *problems) oneOf(name, value string, accepted ...string) {
	if !slices.Contains(accepted, value) {
		p.bad(name, value, "accepted: "+strings.Join(accepted, ", "))
	}
}

// ResumeAfterLimitOn reports whether LEASHD_RESUME_AFTER_LIMIT is on.
func (c Config) ResumeAfterLimitOn() bool { return c.ResumeAfterLimit == "on" }

// WorktreesOn reports whether LEASHD_WORKTREES is on.
func (c Config) WorktreesOn() bool { return c.Worktrees == "on" }

// StateDir is the directory of the database ("~/" meaning the home
// directory), where leashd also keeps the chats' worktrees and the API
// token it generates.
func (c Config) StateDir() string { return filepath.Dir(expandHome(c.DBPath)) }

// ApprovalTimeout is the interaction timeout; 0 means wait forever.
func (c Config) ApprovalTimeout() time.Duration {
	return seconds(c.ApprovalTimeoutSeconds)
}

// AgentIdle is how long an idle agent process is kept.
func (c Config) AgentIdle() time.Duration { return seconds(c.AgentIdleSeconds) }

// AgentTimeout bounds a turn (not counting human waits); 0 means no limit.
func (c Config) AgentTimeout() time.Duration {
	return seconds(c.AgentTimeoutSeconds)
}

// ShutdownTimeout bounds a graceful shutdown.
func (c Config) ShutdownTimeout() time.Duration {
	return seconds(c.ShutdownTimeoutSeconds)
}
