package main

import (
	"bufio"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/discord"
	"github.com/leashd/leashd/connectors/slack"
	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/engine/worktree"
)

// appSettings maps each chat app's name to its settings (the struct, not
// the pointer), for comparing.
func appSettings(s settings) map[string]any {
	out := map[string]any{}
	for _, a := range s.apps {
		out[a.Name()] = reflect.ValueOf(a.Settings()).Elem().Interface()
	}
	return out
}

// values maps every variable to its value in s.
func values(s settings) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	add := func(prefix string, v reflect.Value) {
		names := map[string]reflect.StructField{}
		addVariables(names, prefix, v.Type())
		for name, f := range names {
			out[name] = v.FieldByIndex(f.Index)
		}
	}
	add(config.Prefix, reflect.ValueOf(s.Config))
	for _, a := range s.apps {
		add(config.Prefix+"_"+strings.ToUpper(a.Name()), reflect.ValueOf(a.Settings()).Elem())
	}
	add(config.Prefix+"_API", reflect.ValueOf(*s.api))
	add(config.Prefix+"_PUSH", reflect.ValueOf(*s.push))
	add(config.Prefix+"_STT", reflect.ValueOf(*s.stt))
	add(config.Prefix+"_RUNNER", reflect.ValueOf(*s.runner))
	add(config.Prefix+"_LOCAL", reflect.ValueOf(*s.local))
	return out
}

// The names the README and the deploy files promise, each read by the app
// that owns it.
func TestChatAppVariablesKeepTheirNames(t *testing.T) {
	vars := variables(t)
	for _, want := range []string{
		"LEASHD_WEB_ADDR", "LEASHD_WEB_PAGE", "LEASHD_WEB_TOKEN", "LEASHD_WEB_MAX_STREAMS", "LEASHD_WEB_MAX_WAITS", "LEASHD_WEB_MAX_CONNECTIONS",
		"LEASHD_TELEGRAM_BOT_TOKEN", "LEASHD_TELEGRAM_API_URL", "LEASHD_TELEGRAM_ALLOWED_USERS",
		"LEASHD_TELEGRAM_WEBHOOK_URL", "LEASHD_TELEGRAM_WEBHOOK_SECRET", "LEASHD_TELEGRAM_APPROVERS",
		"LEASHD_SLACK_BOT_TOKEN", "LEASHD_SLACK_APP_TOKEN", "LEASHD_SLACK_SIGNING_SECRET",
		"LEASHD_SLACK_API_URL", "LEASHD_SLACK_ALLOWED_USERS", "LEASHD_SLACK_APPROVERS",
	} {
		assert.Contains(t, vars, want)
	}
	for name, f := range vars {
		assert.NotEmpty(t, f.Tag.Get("desc"), "%s has no desc tag: `leashd -h` would not explain it", name)
		words := regexp.MustCompile("[A-Z][a-z]+|[A-Z]+").FindAllString(f.Name, -1)
		if len(words) > 1 {
			assert.Equal(t, "true", f.Tag.Get("split_words"), "%s (field %s) needs split_words", name, f.Name)
		}
		assert.Empty(t, f.Tag.Get("envconfig"), "%s: an explicit name would also read the unprefixed variable", name)
	}
}

func TestSettingsDefaults(t *testing.T) {
	cleanEnv(t)
	require.NoError(t, os.Unsetenv("LEASHD_SANDBOX")) // cleanEnv turns it off
	s, err := loadSettings()
	require.NoError(t, err)
	d := defaultSettings()
	assert.Equal(t, d.Config, s.Config)
	assert.Equal(t, appSettings(d), appSettings(s))
	assert.Equal(t, map[string]any{
		"telegram": telegram.Config{ApiURL: "https://api.telegram.org"},
		"slack":    slack.Config{},
		"discord":  discord.Config{},
		"web":      web.Config{Addr: "127.0.0.1:8080", Page: "on", MaxStreams: 100, MaxWaits: 256},
	}, appSettings(s))
	require.NoError(t, s.Validate(), "the defaults are a valid configuration")
	assert.True(t, s.web.Serves())
	assert.Empty(t, s.secrets())
	require.Len(t, s.enabled(), 1)
	assert.Equal(t, "web", s.enabled()[0].Name())
	assert.Equal(t, worktree.Identity{Name: "leashd", Email: "leashd@localhost"}, gitIdentity(s.GitAuthor))
}

// everyVariable sets every variable leashd reads to a value other than
// its default.
func everyVariable(dir string) map[string]string {
	return map[string]string{
		"LEASHD_APPROVAL_TIMEOUT_SECONDS": "0", "LEASHD_AGENT": "demo", "LEASHD_CLAUDE_PATH": "/opt/claude/bin/claude",
		"LEASHD_CLAUDE_MODEL": "sonnet", "LEASHD_ACP_COMMAND": "gemini --acp", "LEASHD_WORKDIR": dir,
		"LEASHD_DEFAULT_MODE": "acceptEdits", "LEASHD_MAX_CONCURRENT_AGENTS": "2", "LEASHD_AGENT_IDLE_SECONDS": "60",
		"LEASHD_AGENT_TIMEOUT_SECONDS": "0", "LEASHD_RESUME_AFTER_LIMIT": "on", "LEASHD_AWAY_AFTER_SECONDS": "900", "LEASHD_POLICY_FILE": "/etc/leashd/policy.yaml",
		"LEASHD_DB_PATH": filepath.Join(dir, "l.db"), "LEASHD_LOG_LEVEL": "debug", "LEASHD_LOG_FORMAT": "json",
		"LEASHD_SHUTDOWN_TIMEOUT_SECONDS": "5", "LEASHD_MAX_AGENT_MESSAGE_BYTES": "1048576", "LEASHD_MAX_TURN_OUTPUT_BYTES": "0",
		"LEASHD_WORKTREES": "on", "LEASHD_GIT_AUTHOR": "Leash Bot <bot@example.com>", "LEASHD_APPROVAL_QUORUM": "3", "LEASHD_PREWARM": "3",
		"LEASHD_AGENT_ENV": "GITHUB_TOKEN", "LEASHD_SANDBOX": "docker", "LEASHD_SANDBOX_NETWORK": "off", "LEASHD_SANDBOX_HOME": "/home/agent",
		"LEASHD_SANDBOX_IMAGE": "my-agent", "LEASHD_SANDBOX_CPUS": "2", "LEASHD_SANDBOX_MEMORY": "1g",
		"LEASHD_MCP_MAX_SESSIONS": "50", "LEASHD_MCP_SESSION_IDLE_SECONDS": "0",
		"LEASHD_MAX_UPLOAD_BYTES": "1048576", "LEASHD_STT_URL": "http://127.0.0.1:8000/v1", "LEASHD_STT_MODEL": "whisper-large-v3",
		"LEASHD_STT_API_KEY": "stt-k3y-0a1b2c",

		"LEASHD_WEB_ADDR": "0.0.0.0:9000", "LEASHD_WEB_TOKEN": "w3b-t0ken-9f8e7d6c5b4a", "LEASHD_WEB_PAGE": "off",
		"LEASHD_WEB_MAX_STREAMS": "7",
		"LEASHD_WEB_MAX_WAITS":   "9", "LEASHD_WEB_MAX_CONNECTIONS": "300",
		"LEASHD_TELEGRAM_BOT_TOKEN": "123:abc", "LEASHD_TELEGRAM_API_URL": "http://127.0.0.1:8081",
		"LEASHD_TELEGRAM_ALLOWED_USERS": "42", "LEASHD_TELEGRAM_WEBHOOK_URL": "https://bot.example.com/telegram",
		"LEASHD_TELEGRAM_WEBHOOK_SECRET": "s3cr3t_-0123456789", "LEASHD_TELEGRAM_APPROVERS": "43, 44",
		"LEASHD_SLACK_BOT_TOKEN": "xoxb-1", "LEASHD_SLACK_APP_TOKEN": "xapp-1", "LEASHD_SLACK_SIGNING_SECRET": "signing",
		"LEASHD_SLACK_API_URL": "http://127.0.0.1:8082/api/", "LEASHD_SLACK_ALLOWED_USERS": "U1", "LEASHD_SLACK_APPROVERS": "U2",
		"LEASHD_DISCORD_BOT_TOKEN": "d1sc0rd", "LEASHD_DISCORD_ALLOWED_USERS": "11", "LEASHD_DISCORD_ALLOWED_ROLES": "22",
		"LEASHD_DISCORD_APPROVERS": "33", "LEASHD_DISCORD_API_URL": "http://127.0.0.1:8083/",

		"LEASHD_API_TOKENS": "ci:c1-t0ken-0a1b2c3d4e5f:ask=web:ci-*", "LEASHD_API_RATE": "0.5", "LEASHD_API_BURST": "3",
		"LEASHD_API_MAX_PENDING_PER_CHAT": "5", "LEASHD_API_MAX_PENDING": "50",
		"LEASHD_PUSH_EXTRA_HOSTS": "push.example.org", "LEASHD_PUSH_SUBSCRIBER": "mailto:ops@example.org",

		"LEASHD_RUNNER_TOKENS": "runner-t0ken-1a2b3c4d5e6f", "LEASHD_RUNNER_GRACE_SECONDS": "45",
		"LEASHD_RUNNER_SERVER": "https://leashd.example.com", "LEASHD_RUNNER_TOKEN": "runner-t0ken-1a2b3c4d5e6f",
		"LEASHD_RUNNER_NAME": "box1", "LEASHD_RUNNER_MAX_AGENTS": "8", "LEASHD_RUNNER_LABELS": "gpu,linux",
		"LEASHD_RUNNER_WORKDIR": "/srv/work", "LEASHD_LOCAL_AGENTS": "0",
	}
}

// Every variable is read, by the chat app that owns it, under the name
// it had when config.Config held them all.
func TestEveryVariableIsRead(t *testing.T) {
	cleanEnv(t)
	dir := testenv.PrivateDir(t)
	env := everyVariable(dir)
	vars := variables(t)
	for name := range vars {
		assert.Contains(t, env, name, "add %s to this test", name)
	}
	for name := range env {
		assert.Contains(t, vars, name, "%s is no longer read", name)
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	s, err := loadSettings()
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"web": web.Config{Addr: "0.0.0.0:9000", Page: "off", Token: "w3b-t0ken-9f8e7d6c5b4a", MaxStreams: 7, MaxWaits: 9, MaxConnections: 300},
		"telegram": telegram.Config{BotToken: "123:abc", ApiURL: "http://127.0.0.1:8081", AllowedUsers: []string{"42"},
			WebhookURL: "https://bot.example.com/telegram", WebhookSecret: "s3cr3t_-0123456789", Approvers: []string{"43", "44"}},
		"slack": slack.Config{BotToken: "xoxb-1", AppToken: "xapp-1", SigningSecret: "signing",
			ApiURL: "http://127.0.0.1:8082/api/", AllowedUsers: []string{"U1"}, Approvers: []string{"U2"}},
		"discord": discord.Config{BotToken: "d1sc0rd", AllowedUsers: []string{"11"}, AllowedRoles: []string{"22"},
			Approvers: []string{"33"}, ApiURL: "http://127.0.0.1:8083/"},
	}, appSettings(s))
	assert.Equal(t, "Leash Bot <bot@example.com>", s.GitAuthor)
	require.NoError(t, s.Validate())
	vals, defaults := values(s), values(defaultSettings())
	for name := range variables(t) {
		assert.NotEqual(t, defaults[name].Interface(), vals[name].Interface(), "%s was not read", name)
	}
	assert.Len(t, s.enabled(), 3, "Telegram, Slack and Discord; the web page is off")
	assert.True(t, s.host().HTTP, "the server still serves")
	assert.Equal(t, worktree.Identity{Name: "Leash Bot", Email: "bot@example.com"}, gitIdentity(s.GitAuthor))
	assert.ElementsMatch(t, []string{"w3b-t0ken-9f8e7d6c5b4a", "123:abc", "s3cr3t_-0123456789", "xoxb-1", "xapp-1", "signing", "d1sc0rd", "c1-t0ken-0a1b2c3d4e5f", "stt-k3y-0a1b2c", "runner-t0ken-1a2b3c4d5e6f", "runner-t0ken-1a2b3c4d5e6f"}, s.secrets())
}

// Only LEASHD_* variables are read: not the unprefixed names envconfig
// falls back to for a field with an explicit name, nor other spellings.
func TestOnlyPrefixedVariablesAreRead(t *testing.T) {
	cleanEnv(t)
	require.NoError(t, os.Unsetenv("LEASHD_SANDBOX")) // cleanEnv turns it off
	for k, v := range map[string]string{
		"SANDBOX": "docker", "AGENT_ENV": "LEASHD_WEB_TOKEN",
		"DB_PATH": "/tmp/elsewhere.db", "TELEGRAM_API_URL": "http://evil.example", "SLACK_API_URL": "http://evil.example",
		"AGENT": "demo", "APPROVAL_TIMEOUT_SECONDS": "1", "WEB_ADDR": "0.0.0.0:80", "WEB_TOKEN": "x",
		"TELEGRAM_BOT_TOKEN": "123:abc", "SLACK_BOT_TOKEN": "xoxb-1", "WORKDIR": "/", "LOG_LEVEL": "debug",
		"ADDR": "0.0.0.0:80", "TOKEN": "x", "BOT_TOKEN": "1:a", "API_URL": "http://evil.example", "ALLOWED_USERS": "1",
		"TELEGRAM_ADDR": "x", "LEASHD_ADDR": "0.0.0.0:80", "LEASHD_BOT_TOKEN": "1:a", "LEASHD_TOKEN": "x",
		"leashd_agent": "demo", "Leashd_Agent": "demo", "LEASHDAGENT": "demo", "LEASHD__AGENT": "demo",
		"leashd_telegram_bot_token": "1:a", "LEASHD_TELEGRAMBOT_TOKEN": "1:a", "LEASHD_WEBADDR": "0.0.0.0:80",
	} {
		t.Setenv(k, v)
	}
	// What starts with LEASHD_ in any case but is not a variable stops
	// leashd (and is named); nothing else is even mentioned.
	s, err := loadSettings()
	require.Error(t, err)
	var named []string
	for line := range strings.SplitSeq(err.Error(), "\n") {
		name, _, _ := strings.Cut(line, " ")
		named = append(named, name)
	}
	assert.ElementsMatch(t, []string{"LEASHD_ADDR", "LEASHD_BOT_TOKEN", "LEASHD_TOKEN", "leashd_agent", "Leashd_Agent",
		"LEASHD__AGENT", "leashd_telegram_bot_token", "LEASHD_TELEGRAMBOT_TOKEN", "LEASHD_WEBADDR"}, named)
	d := defaultSettings()
	assert.Equal(t, d.Config, s.Config)
	assert.Equal(t, appSettings(d), appSettings(s))
}

func TestLists(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"123", []string{"123"}},
		{"123,456", []string{"123", "456"}},
		{" 123 , 456 ,789 ", []string{"123", "456", "789"}},
		{"123,,456,", []string{"123", "456"}},
		{" , ", nil},
		{"", nil},
	} {
		t.Run(tt.in, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("LEASHD_TELEGRAM_ALLOWED_USERS", tt.in)
			t.Setenv("LEASHD_SLACK_ALLOWED_USERS", strings.ReplaceAll(tt.in, "1", "U1"))
			t.Setenv("LEASHD_SLACK_APPROVERS", tt.in)
			s, err := loadSettings()
			require.NoError(t, err)
			apps := appSettings(s)
			assert.Equal(t, tt.want, apps["telegram"].(telegram.Config).AllowedUsers)
			assert.Equal(t, tt.want, apps["slack"].(slack.Config).Approvers)
			var want []string
			for _, s := range tt.want {
				want = append(want, strings.ReplaceAll(s, "1", "U1"))
			}
			assert.Equal(t, want, apps["slack"].(slack.Config).AllowedUsers)
			require.NoError(t, s.Validate())
		})
	}
	t.Run("approvers default to the allowed users", func(t *testing.T) {
		cleanEnv(t)
		t.Setenv("LEASHD_SLACK_ALLOWED_USERS", "U1, U2")
		t.Setenv("LEASHD_TELEGRAM_ALLOWED_USERS", "7")
		s, err := loadSettings()
		require.NoError(t, err)
		assert.Equal(t, []string{"U1", "U2"}, appSettings(s)["slack"].(slack.Config).Deciders())
		assert.Equal(t, []string{"7"}, appSettings(s)["telegram"].(telegram.Config).Deciders())
	})
}

// validSettings are the defaults, checked valid.
func validSettings(t *testing.T) settings {
	t.Helper()
	cleanEnv(t)
	s := defaultSettings()
	require.NoError(t, s.Validate())
	return s
}

func TestValidateReportsEverythingAtOnce(t *testing.T) {
	s := validSettings(t)
	s.ApprovalTimeoutSeconds = -1
	s.Agent = "gpt"
	s.DefaultMode = "yolo"
	for _, a := range s.apps {
		switch a := a.(type) {
		case *telegram.App:
			a.Config.AllowedUsers = []string{"alice", "bob"}
		case *slack.App:
			a.Config.BotToken = "xoxb-1"
		}
	}
	s.web.Addr = "0.0.0.0:8080"
	err := s.Validate()
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	assert.Len(t, lines, 7, "%v", err)
	for _, want := range []string{
		"LEASHD_APPROVAL_TIMEOUT_SECONDS", "LEASHD_AGENT=", "LEASHD_DEFAULT_MODE", `"alice"`, `"bob"`,
		"LEASHD_WEB_ADDR", "LEASHD_SLACK_BOT_TOKEN",
	} {
		assert.Contains(t, err.Error(), want)
	}
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, "LEASHD_"), "each line starts with the variable: %q", l)
	}
}

// LEASHD_GIT_AUTHOR is checked with the worktree package's rule.
func TestValidateRejectsGitAuthor(t *testing.T) {
	for author, want := range map[string][]string{
		"leashd": {`LEASHD_GIT_AUTHOR="leashd"`, "has no <email>", `use "Name <email>"`},
		"<a@b>":  {`LEASHD_GIT_AUTHOR="<a@b>"`, "has no name"},
	} {
		s := validSettings(t)
		s.GitAuthor = author
		err := s.Validate()
		require.Error(t, err)
		require.Len(t, strings.Split(err.Error(), "\n"), 1, "exactly one problem: %v", err)
		for _, w := range want {
			assert.Contains(t, err.Error(), w)
		}
		assert.Equal(t, worktree.DefaultAuthor, gitIdentity(author))
	}
}

// A webhook mode needs the HTTP server: with LEASHD_WEB_ADDR=off Validate
// says so, naming both variables.
func TestValidateRefusesWebhooksWithoutTheServer(t *testing.T) {
	for env, want := range map[string]string{
		"LEASHD_TELEGRAM_WEBHOOK_URL": `LEASHD_TELEGRAM_WEBHOOK_URL="https://bot.example.com/tg"`,
		"LEASHD_SLACK_SIGNING_SECRET": "LEASHD_SLACK_SIGNING_SECRET=",
	} {
		cleanEnv(t)
		t.Setenv("LEASHD_WEB_ADDR", "off")
		t.Setenv("LEASHD_TELEGRAM_BOT_TOKEN", "1:a")
		t.Setenv("LEASHD_TELEGRAM_WEBHOOK_SECRET", "Zq3-vL8_kT2mW9xR4nB7")
		t.Setenv("LEASHD_SLACK_BOT_TOKEN", "xoxb-1")
		t.Setenv("LEASHD_SLACK_APP_TOKEN", "xapp-1")
		t.Setenv(env, map[string]string{"LEASHD_TELEGRAM_WEBHOOK_URL": "https://bot.example.com/tg", "LEASHD_SLACK_SIGNING_SECRET": "sig"}[env])
		if env == "LEASHD_SLACK_SIGNING_SECRET" {
			t.Setenv("LEASHD_SLACK_APP_TOKEN", "")
		}
		s, err := loadSettings()
		require.NoError(t, err)
		err = s.Validate()
		require.Error(t, err, env)
		assert.Contains(t, err.Error(), want)
		assert.Contains(t, err.Error(), "LEASHD_WEB_ADDR, which is off")
	}
}

// TestDefaultsMatchREADME reads the README's configuration table: every
// variable is documented, nothing documented is missing, and the defaults
// agree.
func TestDefaultsMatchREADME(t *testing.T) {
	cleanEnv(t)
	documented := readmeTable(t)
	vars := variables(t)
	defaults := values(defaultSettings())
	for name, field := range vars {
		doc, ok := documented[name]
		if !assert.True(t, ok, "%s is not in the README's configuration table", name) {
			continue
		}
		tag := field.Tag.Get("default")
		switch {
		case regexp.MustCompile("^`[^`]*`$").MatchString(doc):
			lit := strings.Trim(doc, "`")
			assert.Equal(t, lit, tag, "%s: the README says %s", name, doc)
			assert.Equal(t, lit, toString(defaults[name]), "%s: the defaults disagree with the README", name)
		case doc == "":
			assert.Empty(t, tag, "%s: the README shows no default", name)
		default:
			// A described default ("current directory", a path): computed
			// by Load, never a tag.
			assert.Empty(t, tag, "%s: the README describes %q but the tag is %q", name, doc, tag)
		}
	}
	for name := range documented {
		assert.Contains(t, vars, name, "the README documents %s, which leashd does not read", name)
	}
}

// readmeTable maps each variable of the README's configuration table to
// its default column.
func readmeTable(t *testing.T) map[string]string {
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err, "the README documents the configuration")
	defer f.Close()
	row := regexp.MustCompile("^\\| *`(LEASHD_[A-Z_]+)` *\\|([^|]*)\\|")
	documented := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			documented[m[1]] = strings.TrimSpace(m[2])
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, documented, "no configuration table found in README.md")
	return documented
}

func toString(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return v.String()
}

// A chat app's unreadable number is reported like Config's, with every
// other problem of the load.
func TestLoadSettingsReportsEveryUnreadableValue(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LEASHD_APPROVAL_TIMEOUT_SECONDS", "abc")
	t.Setenv("LEASHD_WEB_MAX_STREAMS", "many")
	_, err := loadSettings()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `LEASHD_APPROVAL_TIMEOUT_SECONDS="abc" is invalid: not a whole number`)
	assert.Contains(t, err.Error(), `LEASHD_WEB_MAX_STREAMS="many" is invalid: not a whole number; accepted: a whole number from 1 to 100000`)
	var joined interface{ Unwrap() []error }
	require.True(t, errors.As(err, &joined))
}

var updateEnvExample = flag.Bool("update", false, "rewrite deploy/leashd.env.example from the configuration")

// deploy/leashd.env.example lists exactly what `leashd -h` does: the shared
// settings and every chat app of chatApps, so adding a chat app needs no
// second list.
func TestEnvExampleListsEveryChatApp(t *testing.T) {
	var want strings.Builder
	require.NoError(t, config.WriteEnvExample(&want, sections()...))
	path := filepath.Join("..", "..", "deploy", "leashd.env.example")
	if *updateEnvExample {
		require.NoError(t, os.WriteFile(path, []byte(want.String()), 0o644))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want.String(), string(got), "deploy/leashd.env.example is out of date: run go test ./cmd/leashd -run TestEnvExample -update")
}
