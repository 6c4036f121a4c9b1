package sandbox_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// An agent gets what its tools need and what the operator lists, never
// leashd's own settings, whatever the lists say.
func TestEnvironIsMinimal(t *testing.T) {
	host := []string{
		"PATH=/usr/bin", "HOME=/home/a", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC", "TERM=xterm",
		"ANTHROPIC_API_KEY=sk-ant", "CLAUDE_CONFIG_DIR=/c", "GEMINI_API_KEY=g", "OPENAI_API_KEY=o",
		"HTTPS_PROXY=http://proxy:3128", "NODE_OPTIONS=--max-old-space-size=4096", "SSL_CERT_FILE=/ca",
		"LEASHD_TELEGRAM_BOT_TOKEN=123:tg", "LEASHD_WEB_TOKEN=web", "LEASHD_DB_PATH=/var/lib/leashd/leashd.db",
		"leashd_lower=x", "AWS_SECRET_ACCESS_KEY=aws", "GITHUB_TOKEN=gh", "NPM_TOKEN=npm", "DATABASE_URL=postgres://",
		"MY_TOOL_A=1", "MY_TOOL_B=2",
	}
	got := sandbox.Environ(host, []string{"GITHUB_TOKEN", "MY_TOOL_*", "FIXED=yes", "LEASHD_WEB_TOKEN"}, []string{"DRIVER=1", "LEASHD_X=no"})
	assert.ElementsMatch(t, []string{
		"PATH=/usr/bin", "HOME=/home/a", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC", "TERM=xterm",
		"ANTHROPIC_API_KEY=sk-ant", "CLAUDE_CONFIG_DIR=/c", "GEMINI_API_KEY=g", "OPENAI_API_KEY=o",
		"HTTPS_PROXY=http://proxy:3128", "NODE_OPTIONS=--max-old-space-size=4096", "SSL_CERT_FILE=/ca",
		"GITHUB_TOKEN=gh", "MY_TOOL_A=1", "MY_TOOL_B=2", "FIXED=yes", "DRIVER=1",
	}, got)
}

// The unconfined sandbox (LEASHD_SANDBOX=off) applies the same rule to
// the process it starts.
func TestHostStartsWithTheMinimalEnvironment(t *testing.T) {
	t.Setenv("LEASHD_SLACK_BOT_TOKEN", "xoxb-secret")
	t.Setenv("SOME_SECRET", "s3cret")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
	sb := &sandbox.Host{AgentEnv: []string{"EXTRA=1"}}
	assert.Equal(t, "off", sb.Name())
	p, err := sb.Start(sandbox.Spec{Path: "env", Dir: t.TempDir(), Env: []string{"SET=2"}})
	require.NoError(t, err)
	_ = p.Stdin().Close()
	out, err := io.ReadAll(p.Stdout())
	require.NoError(t, err)
	require.NoError(t, p.Wait())
	p.End(time.Second)
	env := string(out)
	assert.NotContains(t, env, "xoxb-secret")
	assert.NotContains(t, env, "s3cret")
	assert.NotContains(t, env, "LEASHD_")
	for _, want := range []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:9", "EXTRA=1", "SET=2", "PATH="} {
		assert.True(t, strings.Contains(env, want), "missing %s in:\n%s", want, env)
	}
}
