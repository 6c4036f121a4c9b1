package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/config/testenv"
)

// TestMain lets a test run the real main() in a child process (to see its
// exit code): the child is this test binary with runMainEnv set.
func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		// Without runMainArgs the child keeps its own arguments: a
		// hook Claude Code runs (hook_e2e_test.go).
		if args, ok := os.LookupEnv(runMainArgs); ok {
			os.Args = append([]string{"leashd"}, strings.Fields(args)...)
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const (
	runMainEnv  = "GO_TEST_LEASHD_RUN_MAIN"
	runMainArgs = "GO_TEST_LEASHD_ARGS"
)

// cleanEnv unsets every LEASHD_ variable for the test (restored after).
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, config.Prefix+"_") {
			t.Setenv(k, "")
			require.NoError(t, os.Unsetenv(k))
		}
	}
	t.Setenv("XDG_STATE_HOME", testenv.PrivateDir(t))
	// Tests of other things run fake CLIs from temp dirs that write
	// beside them, which bubblewrap's private /tmp would hide; the
	// sandbox's own tests set LEASHD_SANDBOX themselves.
	t.Setenv("LEASHD_SANDBOX", "off")
}

// variables walks config.Config and every chat app's settings and returns
// each field's variable name (envconfig's naming: split_words splits
// CamelCase, acronyms kept whole; an app's fields are prefixed with
// LEASHD_<APP>_) with its field, so a variable missing from -h fails the
// test.
func variables(t *testing.T) map[string]reflect.StructField {
	t.Helper()
	out := map[string]reflect.StructField{}
	addVariables(out, config.Prefix, reflect.TypeFor[config.Config]())
	for _, a := range chatApps() {
		addVariables(out, config.Prefix+"_"+strings.ToUpper(a.Name()), reflect.TypeOf(a.Settings()).Elem())
	}
	addVariables(out, config.Prefix+"_API", reflect.TypeFor[config.API]())
	addVariables(out, config.Prefix+"_PUSH", reflect.TypeFor[config.Push]())
	addVariables(out, config.Prefix+"_STT", reflect.TypeFor[config.STT]())
	addVariables(out, config.Prefix+"_RUNNER", reflect.TypeFor[config.Runner]())
	addVariables(out, config.Prefix+"_LOCAL", reflect.TypeFor[config.Local]())
	require.Greater(t, len(out), 30)
	return out
}

// addVariables adds the variables of the struct type typ read under
// prefix to out.
func addVariables(out map[string]reflect.StructField, prefix string, typ reflect.Type) {
	gather := regexp.MustCompile("([^A-Z]+|[A-Z]+[^A-Z]+|[A-Z]+)")
	acronym := regexp.MustCompile("([A-Z]+)([A-Z][^A-Z]+)")
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
		out[prefix+"_"+strings.ToUpper(name)] = f
	}
}

func TestHelpListsEveryVariable(t *testing.T) {
	vars := variables(t)
	for _, arg := range []string{"-h", "--help", "-help", "help"} {
		t.Run(arg, func(t *testing.T) {
			cleanEnv(t)
			// Help must work even when the configuration is broken: that
			// is when an operator reads it.
			t.Setenv("LEASHD_AGENT", "broken")
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), []string{arg}, strings.NewReader(""), &stdout, &stderr)
			require.NoError(t, err)
			assert.Empty(t, stderr.String())
			out := stdout.String()
			assert.Contains(t, out, "Usage:")
			assert.Contains(t, out, "leashd chat")
			assert.Contains(t, out, "leashd audit")

			lines := map[string]string{}
			for l := range strings.SplitSeq(out, "\n") {
				if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "LEASHD_") {
					assert.NotContains(t, lines, f[0], "%s listed twice", f[0])
					lines[f[0]] = l
				}
			}
			for name, f := range vars {
				line, ok := lines[name]
				if !assert.True(t, ok, "%s is missing from leashd -h", name) {
					continue
				}
				if d := f.Tag.Get("default"); strings.Contains(d, " ") { // e.g. "Name <email>"
					assert.Contains(t, line, "  "+d+"  ", "%s: its default %q is not shown", name, d)
				} else if d != "" {
					assert.Contains(t, strings.Fields(line), d, "%s: its default %q is not shown", name, d)
				}
				desc := f.Tag.Get("desc")
				require.NotEmpty(t, desc, "%s has no description", name)
				assert.Contains(t, line, desc, "%s: its description is not shown whole", name)
			}
			assert.Len(t, lines, len(vars), "leashd -h lists variables leashd does not read")
		})
	}
}

func TestInvalidConfigurationNamesTheVariable(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"unknown agent", map[string]string{"LEASHD_AGENT": "gpt"}, nil,
			[]string{`LEASHD_AGENT="gpt"`, "auto, claude, acp, demo"}},
		{"negative timeout", map[string]string{"LEASHD_APPROVAL_TIMEOUT_SECONDS": "-1"}, nil,
			[]string{`LEASHD_APPROVAL_TIMEOUT_SECONDS="-1"`, "from 0 to 604800 (7 days)"}},
		{"not a number", map[string]string{"LEASHD_APPROVAL_TIMEOUT_SECONDS": "five"}, nil,
			[]string{"invalid configuration:\n", `LEASHD_APPROVAL_TIMEOUT_SECONDS="five" is invalid: not a whole number; accepted: a whole number of seconds from 0 to 604800 (7 days)`}},
		{"seconds that would overflow", map[string]string{"LEASHD_AGENT_TIMEOUT_SECONDS": "18446744074"}, nil,
			[]string{`LEASHD_AGENT_TIMEOUT_SECONDS="18446744074" is invalid: accepted: a whole number of seconds from 0 to 604800 (7 days)`}},
		{"public web address without token", map[string]string{"LEASHD_WEB_ADDR": "0.0.0.0:8080"}, nil,
			[]string{`LEASHD_WEB_ADDR="0.0.0.0:8080"`, "LEASHD_WEB_TOKEN"}},
		{"public web address with a weak token", map[string]string{"LEASHD_WEB_ADDR": "0.0.0.0:8080", "LEASHD_WEB_TOKEN": "a"}, nil,
			[]string{`LEASHD_WEB_TOKEN="…" is invalid`, "weak (it is 1 character long)", "16 or more"}},
		{"Telegram user ID", map[string]string{"LEASHD_TELEGRAM_ALLOWED_USERS": "12, alice"}, nil,
			[]string{`LEASHD_TELEGRAM_ALLOWED_USERS="alice"`, "numbers"}},
		{"several at once", map[string]string{"LEASHD_AGENT": "gpt", "LEASHD_DEFAULT_MODE": "yolo", "LEASHD_LOG_FORMAT": "xml"}, nil,
			[]string{"LEASHD_AGENT", "LEASHD_DEFAULT_MODE", "LEASHD_LOG_FORMAT"}},
		{"checked before a subcommand", map[string]string{"LEASHD_DEFAULT_MODE": "yolo"}, []string{"chat"},
			[]string{`LEASHD_DEFAULT_MODE="yolo"`}},
		{"misspelt variable", map[string]string{"LEASHD_WEBADDR": "127.0.0.1:9999"}, nil,
			[]string{"invalid configuration:\n", "LEASHD_WEBADDR is not a leashd variable, and leashd does not start with it set: did you mean LEASHD_WEB_ADDR? Rename it (leashd -h lists every variable)"}},
		{"misspelt workdir", map[string]string{"LEASHD_WORK_DIR": "/srv"}, nil,
			[]string{"LEASHD_WORK_DIR is not a leashd variable", "did you mean LEASHD_WORKDIR?"}},
		{"misspelt for chat", map[string]string{"LEASHD_TELEGRAM_BOTTOKEN": "x"}, []string{"chat"},
			[]string{"did you mean LEASHD_TELEGRAM_BOT_TOKEN?"}},
		{"misspelt for audit", map[string]string{"LEASHD_DBPATH": "x"}, []string{"audit"},
			[]string{"did you mean LEASHD_DB_PATH?"}},
		{"misspelt for worktrees", map[string]string{"LEASHD_WORKTREE": "on"}, []string{"worktrees"},
			[]string{"did you mean LEASHD_WORKTREES?"}},
		{"misspelt for mcp", map[string]string{"LEASHD_WEB_TOKN": "x"}, []string{"mcp"},
			[]string{"did you mean LEASHD_WEB_TOKEN?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tt.args, strings.NewReader(""), &stdout, &stderr)
			require.Error(t, err)
			assert.NotErrorIs(t, err, errUsage)
			for _, s := range tt.want {
				assert.Contains(t, err.Error(), s)
			}
			assert.NotContains(t, stdout.String(), "would serve", "leashd must not start with a bad configuration")
		})
	}
}

func TestUnknownSubcommand(t *testing.T) {
	cleanEnv(t)
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"frobnicate"}, strings.NewReader(""), &stdout, &stderr)
	require.ErrorIs(t, err, errUsage)
	assert.Contains(t, stderr.String(), `"frobnicate"`)
	assert.Contains(t, stderr.String(), "chat, audit, ask, mcp, hook, away, worktrees, runner, policy, -h")
	assert.Empty(t, stdout.String())
}

// TestExitCodes runs the real main: 0 for -h, 1 with the message for an
// invalid configuration, 2 for an unknown subcommand.
func TestExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		args   string
		env    []string
		code   int
		stdout string
		stderr string
	}{
		{"help", "-h", nil, 0, "LEASHD_APPROVAL_TIMEOUT_SECONDS", ""},
		{"invalid configuration", "", []string{"LEASHD_AGENT=gpt"}, 1, "", `leashd: invalid configuration:` + "\n" + `LEASHD_AGENT="gpt" is invalid: accepted: auto, claude, acp, demo`},
		{"unknown subcommand", "frobnicate", nil, 2, "", `unknown command "frobnicate"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t)
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainArgs+"="+tt.args)
			cmd.Env = append(cmd.Env, tt.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if err != nil {
				var exit *exec.ExitError
				require.True(t, errors.As(err, &exit), "%v", err)
				code = exit.ExitCode()
			}
			assert.Equal(t, tt.code, code, "stderr: %s", stderr.String())
			assert.Contains(t, stdout.String(), tt.stdout)
			assert.Contains(t, stderr.String(), tt.stderr)
		})
	}
}
