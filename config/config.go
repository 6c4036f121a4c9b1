// Package config reads leashd's configuration from LEASHD_* environment
// variables and validates it with messages an operator can act on.
package config

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/leashd/leashd/engine/worktree"
)

// Prefix is the environment prefix of every variable leashd reads.
const Prefix = "LEASHD"

// Config is leashd's whole configuration. The zero value is not valid; use
// Load (or Defaults for tests) to get one with defaults applied.
type Config struct {
	ApprovalTimeoutSeconds int    `split_words:"true" default:"300" max:"604800" desc:"Seconds a question, plan review or tool approval waits for an answer before the agent is told none came; 0 waits forever; at most 604800 (7 days)"`
	Agent                  string `default:"auto" desc:"Agent backend: auto (Claude Code when found, else demo), claude, acp or demo"`
	ACPCommand             string `split_words:"true" desc:"With LEASHD_AGENT=acp: the ACP agent's command line, e.g. gemini --acp, claude-agent-acp, codex-acp, opencode acp (split like a shell would; no shell is run)"`
	ClaudePath             string `split_words:"true" default:"claude" desc:"Path or name of the Claude Code CLI"`
	ClaudeModel            string `split_words:"true" desc:"Model passed to claude --model (empty: the CLI's default)"`
	Workdir                string `desc:"Working directory of the agent (default: the current directory)"`
	DefaultMode            string `split_words:"true" default:"default" desc:"Permission mode of a new chat: default, plan or acceptEdits"`
	MaxConcurrentAgents    int    `split_words:"true" default:"4" min:"1" max:"1000" desc:"Agent processes that may run at once (1 to 1000); further chats queue"`
	Prewarm                int    `default:"1" min:"0" max:"16" desc:"Initialized spare Claude Code processes kept for new chats, counted against LEASHD_MAX_CONCURRENT_AGENTS (0 to 16); 0 = off"`
	AgentIdleSeconds       int    `split_words:"true" default:"600" max:"86400" desc:"An idle agent process is shut down after this many seconds and resumed on the next prompt; 0 = never; at most 86400 (1 day)"`
	AgentTimeoutSeconds    int    `split_words:"true" default:"3600" max:"604800" desc:"Longest agent turn in seconds, not counting time spent waiting for a human; 0 = no limit; at most 604800 (7 days)"`
	ResumeAfterLimit       string `split_words:"true" default:"off" desc:"on: a turn stopped by the Claude account's usage limit resumes by itself once the limit resets; off: the chat is told when it resets"`
	PolicyFile             string `split_words:"true" desc:"YAML file of approval rules that allow, deny, ask or require a quorum for tool requests before anyone is asked (empty: every request is asked); reloaded on SIGHUP; check it with leashd policy check FILE"`
	DBPath                 string `split_words:"true" desc:"SQLite database file (default: $XDG_STATE_HOME/leashd/leashd.db or ~/.local/state/leashd/leashd.db)"`
	LogLevel               string `split_words:"true" default:"info" desc:"Log level: debug, info, warn or error"`
	LogFormat              string `split_words:"true" default:"text" desc:"Log format: text or json"`
	ShutdownTimeoutSeconds int    `split_words:"true" default:"20" max:"3600" desc:"Seconds a graceful shutdown may take before leashd exits anyway; 0 = no limit; at most 3600 (1 hour)"`

	WebAddr  string `split_words:"true" default:"127.0.0.1:8080" desc:"Address of the web page, HTTP API, health and metrics; off disables"`
	WebToken string `split_words:"true" desc:"Bearer token required on /api routes; required when the web address is not loopback, and then at least 16 characters, not one character repeated"`
	// The web server's bounds (issue 15: floods of streams and connections).
	WebMaxStreams     int `split_words:"true" default:"100" min:"1" max:"100000" desc:"Event streams (/api/events) served at once; more are refused with 503"`
	WebMaxConnections int `split_words:"true" default:"0" max:"1000000" desc:"Connections the web server holds at once; at the cap the longest-idle one is closed for a new client. 0 = from the open-file limit (a quarter kept for agents, the store and outgoing connections), at most 1024"`

	TelegramBotToken      string   `split_words:"true" desc:"Telegram bot token from @BotFather; enables the Telegram connector"`
	TelegramApiURL        string   `split_words:"true" default:"https://api.telegram.org" desc:"Telegram Bot API base URL; leashd appends /bot<token>/<method>"`
	TelegramAllowedUsers  []string `split_words:"true" desc:"Comma-separated numeric Telegram user IDs allowed to use the bot (empty: nobody)"`
	TelegramWebhookURL    string   `split_words:"true" desc:"Public HTTPS URL for webhook mode (empty: long polling)"`
	TelegramWebhookSecret string   `split_words:"true" desc:"Secret Telegram sends in X-Telegram-Bot-Api-Secret-Token in webhook mode (required with the webhook URL): 16-256 characters A-Z, a-z, 0-9, _ and -, not one character repeated"`

	SlackBotToken      string   `split_words:"true" desc:"Slack bot token (xoxb-…); enables the Slack connector"`
	SlackAppToken      string   `split_words:"true" desc:"Slack app-level token (xapp-…) for Socket Mode"`
	SlackSigningSecret string   `split_words:"true" desc:"Slack signing secret for HTTP mode (Events API on the web address)"`
	SlackApiURL        string   `split_words:"true" desc:"Slack Web API base URL (empty: Slack's own)"`
	SlackAllowedUsers  []string `split_words:"true" desc:"Comma-separated Slack user IDs allowed to prompt the agent and answer questions (empty: nobody)"`
	SlackApprovers     []string `split_words:"true" desc:"Comma-separated Slack user IDs allowed to decide plan reviews and tool approvals (default: the allowed users)"`

	// N-of-M approvals in group chats.
	ApprovalQuorum    int      `split_words:"true" default:"1" min:"1" max:"20" desc:"Distinct approvers who must approve a plan review or tool approval in a group chat (Slack channel, Telegram group) before it is approved (1 to 20); any approver's deny or adjust rejects at once; private chats, the web page and the terminal need one"`
	TelegramApprovers []string `split_words:"true" desc:"Comma-separated numeric Telegram user IDs allowed to decide plan reviews and tool approvals (default: the allowed users)"`

	// A git worktree per chat (engine/worktree).
	Worktrees string `default:"off" desc:"on: LEASHD_WORKDIR must be inside a git repository, and each chat's agent works in its own git worktree on branch leashd/<chat>, kept in worktrees/ next to the database; off: every chat works in LEASHD_WORKDIR"`
	GitAuthor string `split_words:"true" default:"leashd <leashd@localhost>" desc:"Author and committer of the commits and merges /merge makes: Name <email>"`

	// Bounds on what an agent can make leashd hold and post.
	MaxAgentMessageBytes int `split_words:"true" default:"4194304" min:"262144" max:"1073741824" desc:"Longest message from the agent read whole (bytes); the rest of a longer one is left out with a note, and a tool request that long is refused"`
	MaxTurnOutputBytes   int `split_words:"true" default:"65536" max:"1073741824" desc:"Agent text of one turn sent to the chats (bytes); the rest is left out with a note; 0 = no limit"`
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
	c.TelegramAllowedUsers = trimList(c.TelegramAllowedUsers)
	c.SlackAllowedUsers = trimList(c.SlackAllowedUsers)
	c.SlackApprovers = trimList(c.SlackApprovers)
	c.TelegramApprovers = trimList(c.TelegramApprovers)
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
// the variable, the bad value and what is accepted.
func (c Config) Validate() error {
	var errs []error
	bad := func(name, value, accepted string) {
		errs = append(errs, fmt.Errorf("%s_%s=%q is invalid: %s", Prefix, name, value, accepted))
	}
	// Every number within its range (min and max tags; see numbers.go).
	errs = append(errs, c.checkRanges()...)
	if c.MaxTurnOutputBytes > 0 && c.MaxTurnOutputBytes < 1024 {
		bad("MAX_TURN_OUTPUT_BYTES", strconv.Itoa(c.MaxTurnOutputBytes), "accepted: a number of bytes from 1024 to 1073741824 (1 GiB), or 0 for no limit")
	}
	switch c.Agent {
	case AgentAuto, AgentClaude, AgentDemo:
	case AgentACP:
		if strings.TrimSpace(c.ACPCommand) == "" {
			errs = append(errs, fmt.Errorf("%s_AGENT=acp needs %s_ACP_COMMAND: the ACP agent's command line, e.g. \"gemini --acp\", \"claude-agent-acp\", \"codex-acp\" or \"opencode acp\"", Prefix, Prefix))
		} else if _, err := SplitCommandLine(c.ACPCommand); err != nil {
			bad("ACP_COMMAND", c.ACPCommand, err.Error())
		}
	default:
		bad("AGENT", c.Agent, "accepted: auto, claude, acp, demo")
	}
	switch c.ResumeAfterLimit {
	case "on", "off":
	default:
		bad("RESUME_AFTER_LIMIT", c.ResumeAfterLimit, "accepted: on, off")
	}
	switch c.Worktrees {
	case "on", "off":
	default:
		bad("WORKTREES", c.Worktrees, "accepted: on, off")
	}
	if _, err := worktree.ParseIdentity(c.GitAuthor); err != nil {
		bad("GIT_AUTHOR", c.GitAuthor, err.Error())
	}
	switch c.DefaultMode {
	case "default", "plan", "acceptEdits":
	default:
		bad("DEFAULT_MODE", c.DefaultMode, "accepted: default, plan, acceptEdits")
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "warning", "error":
	default:
		bad("LOG_LEVEL", c.LogLevel, "accepted: debug, info, warn, error")
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		bad("LOG_FORMAT", c.LogFormat, "accepted: text, json")
	}
	if c.ClaudePath == "" {
		bad("CLAUDE_PATH", c.ClaudePath, "give the path or name of the claude executable")
	}
	if fi, err := os.Stat(c.Workdir); err != nil || !fi.IsDir() {
		bad("WORKDIR", c.Workdir, "must be an existing directory")
	}
	if !c.WebEnabled() {
		if c.TelegramWebhookURL != "" {
			bad("TELEGRAM_WEBHOOK_URL", c.TelegramWebhookURL, "webhook mode is served on LEASHD_WEB_ADDR, which is off; set an address or use long polling")
		}
		if c.SlackBotToken != "" && c.SlackSigningSecret != "" && c.SlackAppToken == "" {
			bad("SLACK_SIGNING_SECRET", "…", "HTTP mode is served on LEASHD_WEB_ADDR, which is off; set an address or use Socket Mode (LEASHD_SLACK_APP_TOKEN)")
		}
	} else {
		host, port, err := net.SplitHostPort(c.WebAddr)
		if err != nil {
			bad("WEB_ADDR", c.WebAddr, "use host:port (e.g. 127.0.0.1:8080) or off")
		} else if _, perr := strconv.ParseUint(port, 10, 16); perr != nil {
			bad("WEB_ADDR", c.WebAddr, "the port must be a number from 0 to 65535")
		} else if !IsLoopback(host) && c.WebToken == "" {
			bad("WEB_ADDR", c.WebAddr, "a non-loopback address serves the API to the network: set LEASHD_WEB_TOKEN too, or bind 127.0.0.1")
		} else if why := WeakSecret(c.WebToken); !IsLoopback(host) && why != "" {
			bad("WEB_TOKEN", "…", fmt.Sprintf("LEASHD_WEB_ADDR=%s serves the API to the network and this token is weak (%s): use %d or more %s", c.WebAddr, why, MinSecretLength, weakSecretAdvice))
		}
	}
	if c.TelegramBotToken != "" {
		if u, err := url.Parse(c.TelegramApiURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("TELEGRAM_API_URL", c.TelegramApiURL, "use an http(s) base URL such as https://api.telegram.org")
		}
	}
	for _, id := range c.TelegramAllowedUsers {
		if _, err := strconv.ParseInt(id, 10, 64); err != nil {
			bad("TELEGRAM_ALLOWED_USERS", id, "Telegram user IDs are numbers, comma-separated (e.g. 123456789,987654321)")
		}
	}
	for _, id := range c.TelegramApprovers {
		if _, err := strconv.ParseInt(id, 10, 64); err != nil {
			bad("TELEGRAM_APPROVERS", id, "Telegram user IDs are numbers, comma-separated (e.g. 123456789,987654321)")
		}
	}
	if c.TelegramWebhookURL != "" {
		if u, err := url.Parse(c.TelegramWebhookURL); err != nil || u.Scheme != "https" || u.Host == "" {
			bad("TELEGRAM_WEBHOOK_URL", c.TelegramWebhookURL, "use a public https:// URL")
		}
		if c.TelegramWebhookSecret == "" {
			errs = append(errs, fmt.Errorf("%s_TELEGRAM_WEBHOOK_SECRET is empty: webhook mode needs a secret (16-256 random characters A-Z, a-z, 0-9, _ and -, e.g. from `openssl rand -hex 32`)", Prefix))
		} else if why := WeakSecret(c.TelegramWebhookSecret); why != "" && validWebhookSecret(c.TelegramWebhookSecret) {
			bad("TELEGRAM_WEBHOOK_SECRET", "…", fmt.Sprintf("the webhook is public and this secret is weak (%s): use %d to 256 %s", why, MinSecretLength, weakSecretAdvice))
		}
	}
	if s := c.TelegramWebhookSecret; s != "" && !validWebhookSecret(s) {
		bad("TELEGRAM_WEBHOOK_SECRET", "…", "use 1-256 characters A-Z, a-z, 0-9, _ and -")
	}
	if c.SlackBotToken != "" && c.SlackAppToken == "" && c.SlackSigningSecret == "" {
		errs = append(errs, fmt.Errorf("%s_SLACK_BOT_TOKEN is set but neither %s_SLACK_APP_TOKEN (Socket Mode) nor %s_SLACK_SIGNING_SECRET (HTTP mode) is", Prefix, Prefix, Prefix))
	}
	if c.SlackBotToken == "" && (c.SlackAppToken != "" || c.SlackSigningSecret != "") {
		errs = append(errs, fmt.Errorf("%s_SLACK_APP_TOKEN or %s_SLACK_SIGNING_SECRET is set without %s_SLACK_BOT_TOKEN", Prefix, Prefix, Prefix))
	}
	if c.SlackApiURL != "" {
		if u, err := url.Parse(c.SlackApiURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("SLACK_API_URL", c.SlackApiURL, "use an http(s) base URL such as https://slack.com/api/")
		}
	}
	return errors.Join(errs...)
}

func validWebhookSecret(s string) bool {
	if len(s) > 256 {
		return false
	}
	for _, r := range s {
		ok := r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// IsLoopback reports whether host (a name or IP from host:port) only serves
// this machine.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ResumeAfterLimitOn reports whether LEASHD_RESUME_AFTER_LIMIT is on.
func (c Config) ResumeAfterLimitOn() bool { return c.ResumeAfterLimit == "on" }

// WorktreesOn reports whether LEASHD_WORKTREES is on.
func (c Config) WorktreesOn() bool { return c.Worktrees == "on" }

// GitIdentity is LEASHD_GIT_AUTHOR (valid after Validate).
func (c Config) GitIdentity() worktree.Identity {
	id, err := worktree.ParseIdentity(c.GitAuthor)
	if err != nil {
		return worktree.DefaultAuthor
	}
	return id
}

// StateDir is the directory of the database, where leashd also keeps the
// chats' worktrees.
func (c Config) StateDir() string { return filepath.Dir(c.DBPath) }

// WebEnabled reports whether the web address is not "off".
func (c Config) WebEnabled() bool {
	return c.WebAddr != "" && !strings.EqualFold(c.WebAddr, "off")
}

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

// TelegramEnabled reports whether the Telegram connector should run.
func (c Config) TelegramEnabled() bool { return c.TelegramBotToken != "" }

// SlackEnabled reports whether the Slack connector should run.
func (c Config) SlackEnabled() bool { return c.SlackBotToken != "" }

// SlackSocketMode reports whether Slack uses Socket Mode (app token set)
// rather than HTTP mode.
func (c Config) SlackSocketMode() bool { return c.SlackAppToken != "" }

// Approvers returns LEASHD_SLACK_APPROVERS, defaulting to the allowed users.
func (c Config) Approvers() []string {
	if len(c.SlackApprovers) > 0 {
		return c.SlackApprovers
	}
	return c.SlackAllowedUsers
}

// TelegramDeciders are the Telegram user IDs that may decide plan reviews
// and tool approvals: LEASHD_TELEGRAM_APPROVERS, or the allowed users.
func (c Config) TelegramDeciders() []string {
	if len(c.TelegramApprovers) > 0 {
		return c.TelegramApprovers
	}
	return c.TelegramAllowedUsers
}

// Secrets returns every secret value set, so logs can be checked and
// redacted against them.
func (c Config) Secrets() []string {
	var out []string
	for _, s := range []string{c.WebToken, c.TelegramBotToken, c.TelegramWebhookSecret, c.SlackBotToken, c.SlackAppToken, c.SlackSigningSecret} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Usage writes every variable with its type, default and description.
func Usage(w io.Writer) error {
	var c Config
	tw := tabwriter.NewWriter(w, 1, 4, 2, ' ', 0)
	if err := envconfig.Usagef(Prefix, &c, tw, usageFormat); err != nil {
		return fmt.Errorf("printing usage: %w", err)
	}
	return tw.Flush()
}

const usageFormat = `VARIABLE	DEFAULT	MEANING
{{range .}}{{usage_key .}}	{{usage_default .}}	{{usage_description .}}
{{end}}`
