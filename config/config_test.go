package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/config/testenv"
)

// cleanEnv unsets every LEASHD_ variable (restored after the test) and
// points XDG_STATE_HOME at a temporary directory, so the test sees the
// defaults whatever the machine has set.
func cleanEnv(t *testing.T) string {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, config.Prefix+"_") {
			t.Setenv(k, "") // registers the restore
			require.NoError(t, os.Unsetenv(k))
		}
	}
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	return state
}

// envNames maps each Config field to its variable, derived from the struct
// tags with envconfig's word splitting (an independent copy of it, so a
// field whose name would come out wrong is caught).
func envNames(t *testing.T) map[string]reflect.StructField {
	t.Helper()
	gather := regexp.MustCompile("([^A-Z]+|[A-Z]+[^A-Z]+|[A-Z]+)")
	acronym := regexp.MustCompile("([A-Z]+)([A-Z][^A-Z]+)")
	out := map[string]reflect.StructField{}
	typ := reflect.TypeFor[config.Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name := f.Name
		if alt := f.Tag.Get("envconfig"); alt != "" {
			name = alt
		} else if f.Tag.Get("split_words") == "true" {
			var words []string
			for _, w := range gather.FindAllString(f.Name, -1) {
				if m := acronym.FindStringSubmatch(w); m != nil {
					words = append(words, m[1], m[2])
				} else {
					words = append(words, w)
				}
			}
			name = strings.Join(words, "_")
		}
		out[config.Prefix+"_"+strings.ToUpper(name)] = f
	}
	return out
}

func TestEveryFieldIsNamedAndDescribed(t *testing.T) {
	names := envNames(t)
	require.NotEmpty(t, names)
	for name, f := range names {
		assert.NotEmpty(t, f.Tag.Get("desc"), "%s has no desc tag: `leashd -h` would not explain it", name)
		words := regexp.MustCompile("[A-Z][a-z]+|[A-Z]+").FindAllString(f.Name, -1)
		if len(words) > 1 && f.Tag.Get("envconfig") == "" {
			assert.Equal(t, "true", f.Tag.Get("split_words"),
				"%s (field %s) needs split_words:\"true\" or its variable is not the documented one", name, f.Name)
		}
	}
	// The names the issue and the README promise.
	for _, want := range []string{
		"LEASHD_APPROVAL_TIMEOUT_SECONDS", "LEASHD_AGENT", "LEASHD_CLAUDE_PATH", "LEASHD_CLAUDE_MODEL",
		"LEASHD_WORKDIR", "LEASHD_DEFAULT_MODE", "LEASHD_DB_PATH", "LEASHD_LOG_LEVEL", "LEASHD_LOG_FORMAT",
		"LEASHD_RESUME_AFTER_LIMIT", "LEASHD_WORKTREES", "LEASHD_GIT_AUTHOR",
	} {
		assert.Contains(t, names, want)
	}
}

func TestDefaults(t *testing.T) {
	state := cleanEnv(t)
	wd, err := os.Getwd()
	require.NoError(t, err)
	want := config.Config{
		ApprovalTimeoutSeconds: 300,
		Agent:                  "auto",
		ClaudePath:             "claude",
		Workdir:                wd,
		DefaultMode:            "default",
		MaxConcurrentAgents:    4,
		Prewarm:                1,
		AgentIdleSeconds:       600,
		AgentTimeoutSeconds:    3600,
		ResumeAfterLimit:       "off",
		DBPath:                 filepath.Join(state, "leashd", "leashd.db"),
		LogLevel:               "info",
		LogFormat:              "text",
		ShutdownTimeoutSeconds: 20,
		MaxAgentMessageBytes:   4 << 20,
		MaxTurnOutputBytes:     64 << 10,
		MaxUploadBytes:         20 << 20,
		Worktrees:              "off",
		GitAuthor:              "leashd <leashd@localhost>",
		ApprovalQuorum:         1,
		Sandbox:                "auto",
		SandboxNetwork:         "on",
		SandboxImage:           "leashd-agent",
		MCPMaxSessions:         1000,
		MCPSessionIdleSeconds:  600,
	}
	assert.Equal(t, want, config.Defaults())
	loaded, err := config.Load()
	require.NoError(t, err)
	assert.Equal(t, want, loaded)
	require.NoError(t, loaded.Validate(), "the defaults are a valid configuration")

	assert.Equal(t, 5*time.Minute, loaded.ApprovalTimeout())
	assert.Equal(t, 10*time.Minute, loaded.AgentIdle())
	assert.Equal(t, time.Hour, loaded.AgentTimeout())
	assert.Equal(t, 20*time.Second, loaded.ShutdownTimeout())
	assert.False(t, loaded.WorktreesOn())
	assert.Equal(t, filepath.Join(state, "leashd"), loaded.StateDir())
}

func TestDefaultDBPath(t *testing.T) {
	cleanEnv(t)
	t.Setenv("XDG_STATE_HOME", "")
	home := t.TempDir()
	t.Setenv("HOME", home)
	assert.Equal(t, filepath.Join(home, ".local", "state", "leashd", "leashd.db"), config.DefaultDBPath())
	t.Setenv("XDG_STATE_HOME", "/var/lib/x")
	assert.Equal(t, "/var/lib/x/leashd/leashd.db", config.DefaultDBPath())
}

func TestOnlyPrefixedVariablesAreRead(t *testing.T) {
	cleanEnv(t)
	want := config.Defaults()
	for k, v := range map[string]string{
		"DB_PATH": "/tmp/elsewhere.db", "TELEGRAM_API_URL": "http://evil.example", "SLACK_API_URL": "http://evil.example",
		"AGENT": "demo", "APPROVAL_TIMEOUT_SECONDS": "1", "WEB_ADDR": "0.0.0.0:80", "WEB_TOKEN": "x",
		"TELEGRAM_BOT_TOKEN": "123:abc", "SLACK_BOT_TOKEN": "xoxb-1", "WORKDIR": "/", "LOG_LEVEL": "debug",
		"leashd_agent": "demo", "Leashd_Agent": "demo", "LEASHDAGENT": "demo", "LEASHD__AGENT": "demo",
	} {
		t.Setenv(k, v)
	}
	got, err := config.Load()
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func TestEveryVariableIsRead(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	env := map[string]string{
		"LEASHD_APPROVAL_TIMEOUT_SECONDS": "0",
		"LEASHD_AGENT":                    "demo",
		"LEASHD_CLAUDE_PATH":              "/opt/claude/bin/claude",
		"LEASHD_CLAUDE_MODEL":             "sonnet",
		"LEASHD_ACP_COMMAND":              "gemini --acp",
		"LEASHD_WORKDIR":                  dir,
		"LEASHD_DEFAULT_MODE":             "acceptEdits",
		"LEASHD_MAX_CONCURRENT_AGENTS":    "2",
		"LEASHD_AGENT_IDLE_SECONDS":       "60",
		"LEASHD_AGENT_TIMEOUT_SECONDS":    "0",
		"LEASHD_RESUME_AFTER_LIMIT":       "on",
		"LEASHD_AWAY_AFTER_SECONDS":       "900",
		"LEASHD_POLICY_FILE":              "/etc/leashd/policy.yaml",
		"LEASHD_DB_PATH":                  filepath.Join(dir, "l.db"),
		"LEASHD_LOG_LEVEL":                "debug",
		"LEASHD_LOG_FORMAT":               "json",
		"LEASHD_SHUTDOWN_TIMEOUT_SECONDS": "5",
		"LEASHD_MAX_AGENT_MESSAGE_BYTES":  "1048576",
		"LEASHD_MAX_TURN_OUTPUT_BYTES":    "0",
		"LEASHD_MAX_UPLOAD_BYTES":         "1048576",
		"LEASHD_WORKTREES":                "on",
		"LEASHD_GIT_AUTHOR":               "Leash Bot <bot@example.com>",
		"LEASHD_APPROVAL_QUORUM":          "3",
		"LEASHD_PREWARM":                  "3",
		"LEASHD_AGENT_ENV":                "GITHUB_TOKEN,NPM_*,CI=true",
		"LEASHD_SANDBOX":                  "docker",
		"LEASHD_SANDBOX_NETWORK":          "off",
		"LEASHD_SANDBOX_HOME":             "/home/agent",
		"LEASHD_SANDBOX_IMAGE":            "my-agent:1",
		"LEASHD_SANDBOX_CPUS":             "1.5",
		"LEASHD_SANDBOX_MEMORY":           "2g",
		"LEASHD_MCP_MAX_SESSIONS":         "50",
		"LEASHD_MCP_SESSION_IDLE_SECONDS": "0",
	}
	names := envNames(t)
	for name := range names {
		assert.Contains(t, env, name, "add %s to this test", name)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	c, err := config.Load()
	require.NoError(t, err)
	assert.Equal(t, config.Config{
		ApprovalTimeoutSeconds: 0, Agent: "demo", ClaudePath: "/opt/claude/bin/claude", ClaudeModel: "sonnet", ACPCommand: "gemini --acp",
		Workdir: dir, DefaultMode: "acceptEdits", MaxConcurrentAgents: 2, Prewarm: 3, AgentIdleSeconds: 60, AgentTimeoutSeconds: 0, ResumeAfterLimit: "on",
		AwayAfterSeconds: 900, PolicyFile: "/etc/leashd/policy.yaml", DBPath: filepath.Join(dir, "l.db"), LogLevel: "debug", LogFormat: "json", ShutdownTimeoutSeconds: 5,
		MaxAgentMessageBytes: 1 << 20, MaxTurnOutputBytes: 0, MaxUploadBytes: 1 << 20,
		Worktrees: "on", GitAuthor: "Leash Bot <bot@example.com>",
		ApprovalQuorum: 3,
		AgentEnv:       []string{"GITHUB_TOKEN", "NPM_*", "CI=true"}, Sandbox: "docker", SandboxNetwork: "off",
		SandboxHome: "/home/agent", SandboxImage: "my-agent:1", SandboxCpus: "1.5", SandboxMemory: "2g",
		MCPMaxSessions: 50, MCPSessionIdleSeconds: 0,
	}, c)
	require.NoError(t, c.Validate())
	assert.Zero(t, c.ApprovalTimeout(), "0 waits forever")
	assert.True(t, c.ResumeAfterLimitOn())
	assert.True(t, c.WorktreesOn())
}

// numericVars are the integer variables, with their accepted ranges.
func numericVars(t *testing.T) map[string][2]int64 {
	t.Helper()
	out := map[string][2]int64{}
	for name := range envNames(t) {
		if lo, hi, ok := config.RangeOf(name); ok {
			out[name] = [2]int64{lo, hi}
		}
	}
	require.Contains(t, out, "LEASHD_APPROVAL_TIMEOUT_SECONDS")
	require.Contains(t, out, "LEASHD_MAX_CONCURRENT_AGENTS")
	return out
}

// TestLoadRejectsUnparsableNumbers: a value that is not a whole number gets
// the message every bad value gets (variable, value, what is accepted), for
// every numeric variable — not envconfig's and strconv's internals.
func TestLoadRejectsUnparsableNumbers(t *testing.T) {
	for name, r := range numericVars(t) {
		for _, v := range []string{"abc", "5m", "1.5", "", "0x10", "1_000", " 30", "3e2", "99999999999999999999", "-99999999999999999999"} {
			t.Run(name+"="+v, func(t *testing.T) {
				cleanEnv(t)
				t.Setenv(name, v)
				_, err := config.Load()
				require.Error(t, err)
				msg := err.Error()
				assert.Len(t, strings.Split(msg, "\n"), 1, "one line: %s", msg)
				assert.True(t, strings.HasPrefix(msg, name+"="+strconv.Quote(v)+" is invalid: "), msg)
				assert.Contains(t, msg, fmt.Sprintf("accepted: a whole number %sfrom %d to %d", map[bool]string{true: "of seconds "}[strings.HasSuffix(name, "_SECONDS")], r[0], r[1]))
				for _, internal := range []string{"envconfig", "strconv", "ParseInt", "type int", "'"} {
					assert.NotContains(t, msg, internal)
				}
			})
		}
	}

	t.Run("every bad number at once", func(t *testing.T) {
		cleanEnv(t)
		t.Setenv("LEASHD_APPROVAL_TIMEOUT_SECONDS", "abc")
		t.Setenv("LEASHD_MAX_CONCURRENT_AGENTS", "many")
		t.Setenv("LEASHD_SHUTDOWN_TIMEOUT_SECONDS", "")
		_, err := config.Load()
		require.Error(t, err)
		lines := strings.Split(err.Error(), "\n")
		assert.Len(t, lines, 3, "%v", err)
		assert.Contains(t, err.Error(), `LEASHD_APPROVAL_TIMEOUT_SECONDS="abc" is invalid: not a whole number; accepted: a whole number of seconds from 0 to 604800 (7 days)`)
		assert.Contains(t, err.Error(), `LEASHD_MAX_CONCURRENT_AGENTS="many" is invalid: not a whole number; accepted: a whole number from 1 to 1000`)
		assert.Contains(t, err.Error(), `LEASHD_SHUTDOWN_TIMEOUT_SECONDS="" is invalid: empty; accepted: a whole number of seconds from 0 to 3600 (1 hour); unset it for the default, 20`)
	})

	t.Run("a duration is converted for the reader", func(t *testing.T) {
		cleanEnv(t)
		t.Setenv("LEASHD_APPROVAL_TIMEOUT_SECONDS", "5m")
		_, err := config.Load()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not a whole number of seconds (5m would be 300)")
	})
}

// TestLoadReadsNumbersInDecimal: envconfig reads Go syntax, where "010" is
// octal 8 and "08" is an error; an operator writing seconds means decimal.
func TestLoadReadsNumbersInDecimal(t *testing.T) {
	for v, want := range map[string]int{"010": 10, "08": 8, "0": 0, "+7": 7, "604800": 604800} {
		t.Run(v, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("LEASHD_APPROVAL_TIMEOUT_SECONDS", v)
			c, err := config.Load()
			require.NoError(t, err)
			assert.Equal(t, want, c.ApprovalTimeoutSeconds)
			assert.Equal(t, time.Duration(want)*time.Second, c.ApprovalTimeout())
		})
	}
}

// TestSecondsHaveAMaximum: every *_SECONDS variable accepts 0 up to its
// maximum, which comes out of the accessor exactly; one more, or a value
// whose nanoseconds overflow (18446744074 s used to become 290 ms,
// 9999999999 s a negative duration meaning "no limit"), stops leashd with
// the variable, the value and the range.
func TestSecondsHaveAMaximum(t *testing.T) {
	accessors := map[string]func(config.Config) time.Duration{
		"LEASHD_APPROVAL_TIMEOUT_SECONDS": config.Config.ApprovalTimeout,
		"LEASHD_AGENT_IDLE_SECONDS":       config.Config.AgentIdle,
		"LEASHD_AGENT_TIMEOUT_SECONDS":    config.Config.AgentTimeout,
		"LEASHD_SHUTDOWN_TIMEOUT_SECONDS": config.Config.ShutdownTimeout,
		"LEASHD_MCP_SESSION_IDLE_SECONDS": config.Config.MCPSessionIdle,
	}
	maxima := map[string]int64{}
	for name, r := range numericVars(t) {
		if strings.HasSuffix(name, "_SECONDS") {
			maxima[name] = r[1]
			assert.Zero(t, r[0], "%s: 0 is the smallest number of seconds", name)
			assert.LessOrEqual(t, r[1], int64(config.DefaultMaxSeconds), "%s: at most 7 days", name)
		}
	}
	assert.Equal(t, map[string]int64{
		"LEASHD_APPROVAL_TIMEOUT_SECONDS": 604800, "LEASHD_AGENT_IDLE_SECONDS": 86400,
		"LEASHD_AGENT_TIMEOUT_SECONDS": 604800, "LEASHD_SHUTDOWN_TIMEOUT_SECONDS": 3600,
		"LEASHD_MCP_SESSION_IDLE_SECONDS": 86400,
	}, filterKeys(maxima, accessors), "the documented maxima")
	for name, hi := range maxima {
		for _, v := range []string{strconv.FormatInt(hi, 10), strconv.FormatInt(hi+1, 10), "18446744074", "9999999999", "9223372036854775807"} {
			t.Run(name+"="+v, func(t *testing.T) {
				cleanEnv(t)
				t.Setenv(name, v)
				c, err := config.Load()
				require.NoError(t, err, "a whole number is read; Validate checks the range")
				err = c.Validate()
				n, _ := strconv.ParseInt(v, 10, 64)
				if n <= hi {
					require.NoError(t, err)
					if get, ok := accessors[name]; ok {
						assert.Equal(t, time.Duration(n)*time.Second, get(c))
					}
					return
				}
				require.Error(t, err)
				want := fmt.Sprintf("%s=%q is invalid: accepted: a whole number of seconds from 0 to %d (", name, v, hi)
				assert.True(t, strings.HasPrefix(err.Error(), want), "%v\nwant prefix %s", err, want)
				assert.Len(t, strings.Split(err.Error(), "\n"), 1, "%v", err)
				if get, ok := accessors[name]; ok {
					assert.GreaterOrEqual(t, get(c), time.Duration(hi)*time.Second, "never wraps around to a short or negative duration")
				}
			})
		}
	}
}

func filterKeys[V any](m map[string]int64, keep map[string]V) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if _, ok := keep[k]; ok {
			out[k] = v
		}
	}
	return out
}

// TestSecondsMaximaAreDocumented: the README's row of every *_SECONDS
// variable states its maximum.
func TestSecondsMaximaAreDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	rows := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if m := regexp.MustCompile("^\\| *`(LEASHD_[A-Z_]+)` *\\|").FindStringSubmatch(line); m != nil {
			rows[m[1]] = line
		}
	}
	for name, r := range numericVars(t) {
		if strings.HasSuffix(name, "_SECONDS") {
			assert.Contains(t, rows[name], fmt.Sprintf("at most `%d`", r[1]), "README.md: the row of %s must say its maximum", name)
		}
	}
}

func valid(t *testing.T) config.Config {
	t.Helper()
	cleanEnv(t)
	c := config.Defaults()
	require.NoError(t, c.Validate())
	return c
}

// rejectCases each make one value of a valid configuration bad; want are
// substrings of the one error line: variable, value, what is accepted.
var rejectCases = []struct {
	name   string
	mutate func(*config.Config)
	want   []string
}{
	{"negative timeout", func(c *config.Config) { c.ApprovalTimeoutSeconds = -1 },
		[]string{`LEASHD_APPROVAL_TIMEOUT_SECONDS="-1"`, "from 0 to 604800 (7 days)"}},
	{"timeout past 7 days", func(c *config.Config) { c.ApprovalTimeoutSeconds = 604801 },
		[]string{`LEASHD_APPROVAL_TIMEOUT_SECONDS="604801"`, "from 0 to 604800 (7 days)"}},
	{"timeout whose nanoseconds wrap around", func(c *config.Config) { c.ApprovalTimeoutSeconds = 18446744074 },
		[]string{`LEASHD_APPROVAL_TIMEOUT_SECONDS="18446744074"`, "from 0 to 604800 (7 days)"}},
	{"negative idle", func(c *config.Config) { c.AgentIdleSeconds = -5 },
		[]string{`LEASHD_AGENT_IDLE_SECONDS="-5"`, "from 0 to 86400 (1 day)"}},
	{"idle past a day", func(c *config.Config) { c.AgentIdleSeconds = 86401 },
		[]string{`LEASHD_AGENT_IDLE_SECONDS="86401"`, "from 0 to 86400 (1 day)"}},
	{"negative turn limit", func(c *config.Config) { c.AgentTimeoutSeconds = -1 },
		[]string{`LEASHD_AGENT_TIMEOUT_SECONDS="-1"`, "from 0 to 604800 (7 days)"}},
	{"turn limit that wraps to no limit", func(c *config.Config) { c.AgentTimeoutSeconds = 9999999999 },
		[]string{`LEASHD_AGENT_TIMEOUT_SECONDS="9999999999"`, "from 0 to 604800 (7 days)"}},
	{"negative shutdown", func(c *config.Config) { c.ShutdownTimeoutSeconds = -20 },
		[]string{`LEASHD_SHUTDOWN_TIMEOUT_SECONDS="-20"`, "from 0 to 3600 (1 hour)"}},
	{"shutdown past an hour", func(c *config.Config) { c.ShutdownTimeoutSeconds = 3601 },
		[]string{`LEASHD_SHUTDOWN_TIMEOUT_SECONDS="3601"`, "from 0 to 3600 (1 hour)"}},
	{"no agents", func(c *config.Config) { c.MaxConcurrentAgents = 0 },
		[]string{`LEASHD_MAX_CONCURRENT_AGENTS="0"`, "from 1 to 1000"}},
	{"too many agents", func(c *config.Config) { c.MaxConcurrentAgents = 1001 },
		[]string{`LEASHD_MAX_CONCURRENT_AGENTS="1001"`, "from 1 to 1000"}},
	{"negative prewarm", func(c *config.Config) { c.Prewarm = -1 },
		[]string{`LEASHD_PREWARM="-1"`, "from 0 to 16"}},
	{"too many spares", func(c *config.Config) { c.Prewarm = 17 },
		[]string{`LEASHD_PREWARM="17"`, "from 0 to 16"}},
	{"unknown agent", func(c *config.Config) { c.Agent = "gpt" },
		[]string{`LEASHD_AGENT="gpt"`, "auto, claude, acp, demo"}},
	{"acp without a command", func(c *config.Config) { c.Agent = "acp"; c.ACPCommand = " " },
		[]string{"LEASHD_AGENT=acp needs LEASHD_ACP_COMMAND", "gemini --acp"}},
	{"acp command with shell syntax", func(c *config.Config) { c.Agent = "acp"; c.ACPCommand = "gemini --acp | tee log" },
		[]string{`LEASHD_ACP_COMMAND="gemini --acp | tee log"`, "needs a shell, and none is run"}},
	{"acp command unterminated", func(c *config.Config) { c.Agent = "acp"; c.ACPCommand = "'gemini --acp" },
		[]string{`LEASHD_ACP_COMMAND=`, "unterminated single quote"}},
	{"agent is case-sensitive", func(c *config.Config) { c.Agent = "Claude" },
		[]string{`LEASHD_AGENT="Claude"`, "auto, claude, acp, demo"}},
	{"unknown mode", func(c *config.Config) { c.DefaultMode = "yolo" },
		[]string{`LEASHD_DEFAULT_MODE="yolo"`, "default, plan, acceptEdits"}},
	{"bypassPermissions is not offered", func(c *config.Config) { c.DefaultMode = "bypassPermissions" },
		[]string{`LEASHD_DEFAULT_MODE="bypassPermissions"`, "default, plan, acceptEdits"}},
	{"log level", func(c *config.Config) { c.LogLevel = "loud" },
		[]string{`LEASHD_LOG_LEVEL="loud"`, "debug, info, warn, error"}},
	{"resume after limit", func(c *config.Config) { c.ResumeAfterLimit = "yes" },
		[]string{`LEASHD_RESUME_AFTER_LIMIT="yes"`, "on, off"}},
	{"worktrees neither on nor off", func(c *config.Config) { c.Worktrees = "yes" },
		[]string{`LEASHD_WORKTREES="yes"`, "accepted: on, off"}},
	{"log format", func(c *config.Config) { c.LogFormat = "xml" },
		[]string{`LEASHD_LOG_FORMAT="xml"`, "text, json"}},
	{"unknown sandbox", func(c *config.Config) { c.Sandbox = "gvisor" },
		[]string{`LEASHD_SANDBOX="gvisor"`, "auto, bwrap, docker, off"}},
	{"sandbox network", func(c *config.Config) { c.SandboxNetwork = "none" },
		[]string{`LEASHD_SANDBOX_NETWORK="none"`, "on, off"}},
	{"relative sandbox home", func(c *config.Config) { c.SandboxHome = "home/agent" },
		[]string{`LEASHD_SANDBOX_HOME="home/agent"`, "absolute path"}},
	{"sandbox cpus", func(c *config.Config) { c.SandboxCpus = "two" },
		[]string{`LEASHD_SANDBOX_CPUS="two"`, "e.g. 1 or 1.5"}},
	{"sandbox memory too small", func(c *config.Config) { c.SandboxMemory = "1m" },
		[]string{`LEASHD_SANDBOX_MEMORY="1m"`, "at least 6m"}},
	{"docker without an image", func(c *config.Config) { c.Sandbox = "docker"; c.SandboxImage = "" },
		[]string{`LEASHD_SANDBOX_IMAGE=""`, "deploy/agent.Dockerfile"}},
	{"leashd's own variable for agents", func(c *config.Config) { c.AgentEnv = []string{"GITHUB_TOKEN", "LEASHD_WEB_TOKEN"} },
		[]string{`LEASHD_AGENT_ENV="LEASHD_WEB_TOKEN"`, "never passed to agents"}},
	{"agent env without a name", func(c *config.Config) { c.AgentEnv = []string{"=x"} },
		[]string{`LEASHD_AGENT_ENV="=x"`, "NAME, PREFIX_* or NAME=value"}},
	{"agent env with a space", func(c *config.Config) { c.AgentEnv = []string{"MY VAR"} },
		[]string{`LEASHD_AGENT_ENV="MY VAR"`, "letters, digits and _"}},
	{"agent message limit too small", func(c *config.Config) { c.MaxAgentMessageBytes = 1000 },
		[]string{`LEASHD_MAX_AGENT_MESSAGE_BYTES="1000"`, "from 262144 to 1073741824"}},
	{"agent message limit of 0", func(c *config.Config) { c.MaxAgentMessageBytes = 0 },
		[]string{`LEASHD_MAX_AGENT_MESSAGE_BYTES="0"`, "from 262144"}},
	{"turn output limit too small", func(c *config.Config) { c.MaxTurnOutputBytes = 10 },
		[]string{`LEASHD_MAX_TURN_OUTPUT_BYTES="10"`, "from 1024", "or 0 for no limit"}},
	{"negative turn output limit", func(c *config.Config) { c.MaxTurnOutputBytes = -1 },
		[]string{`LEASHD_MAX_TURN_OUTPUT_BYTES="-1"`, "from 0 to 1073741824"}},
	{"empty claude path", func(c *config.Config) { c.ClaudePath = "" },
		[]string{`LEASHD_CLAUDE_PATH=""`, "path or name"}},
	{"missing workdir", func(c *config.Config) { c.Workdir = "/does/not/exist" },
		[]string{`LEASHD_WORKDIR="/does/not/exist"`, "existing directory"}},
}

func TestValidateRejects(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	tests := append(rejectCases, struct {
		name   string
		mutate func(*config.Config)
		want   []string
	}{"workdir is a file", func(c *config.Config) { c.Workdir = file },
		[]string{`LEASHD_WORKDIR="` + file + `"`, "existing directory"}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid(t)
			tt.mutate(&c)
			err := c.Validate()
			testenv.OneProblem(t, err, tt.want, nil)
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*config.Config)
	}{
		{"defaults", func(*config.Config) {}},
		{"no timeout", func(c *config.Config) { c.ApprovalTimeoutSeconds = 0; c.AgentTimeoutSeconds = 0 }},
		{"plan mode", func(c *config.Config) { c.DefaultMode = "plan" }},
		{"acceptEdits mode", func(c *config.Config) { c.DefaultMode = "acceptEdits" }},
		{"claude", func(c *config.Config) { c.Agent = "claude" }},
		{"demo", func(c *config.Config) { c.Agent = "demo" }},
		{"acp", func(c *config.Config) { c.Agent = "acp"; c.ACPCommand = `"/opt/my agent/claude-agent-acp" --x 'a b'` }},
		{"log level any case", func(c *config.Config) { c.LogLevel = "DEBUG" }},
		{"warning", func(c *config.Config) { c.LogLevel = "warning" }},
		{"output limits at their bounds", func(c *config.Config) { c.MaxAgentMessageBytes = 256 << 10; c.MaxTurnOutputBytes = 1024 }},
		{"no turn output limit", func(c *config.Config) { c.MaxAgentMessageBytes = 1 << 30; c.MaxTurnOutputBytes = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid(t)
			tt.mutate(&c)
			assert.NoError(t, c.Validate())
		})
	}
}

func TestUsage(t *testing.T) {
	var b strings.Builder
	require.NoError(t, config.Usage(&b))
	out := b.String()
	for name, f := range envNames(t) {
		line := lineWith(out, name)
		require.NotEmpty(t, line, "%s is missing from the usage", name)
		if d := f.Tag.Get("default"); d != "" {
			assert.Contains(t, line, d, "%s: default missing", name)
		}
		// The start of the description (the tabwriter keeps it whole).
		desc := f.Tag.Get("desc")
		assert.Contains(t, line, desc[:min(len(desc), 30)], "%s: description missing", name)
	}
}

// lineWith returns the usage line describing name exactly (not a longer
// name that starts with it).
func lineWith(out, name string) string {
	for l := range strings.SplitSeq(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return l
		}
	}
	return ""
}

// LEASHD_APPROVAL_QUORUM is 1 to 20.
func TestApprovalQuorum(t *testing.T) {
	for _, value := range []string{"0", "21", "two"} {
		cleanEnv(t)
		t.Setenv("LEASHD_APPROVAL_QUORUM", value)
		c, err := config.Load()
		if err == nil {
			err = c.Validate()
		}
		require.Error(t, err, "LEASHD_APPROVAL_QUORUM=%s", value)
		assert.Contains(t, err.Error(), "LEASHD_APPROVAL_QUORUM")
	}
	cleanEnv(t)
	c, err := config.Load()
	require.NoError(t, err)
	assert.Equal(t, 1, c.ApprovalQuorum)
}
