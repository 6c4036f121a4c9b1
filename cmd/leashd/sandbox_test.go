package main

import (
	"log/slog"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/config/testenv"
)

// sandboxConfig is a configuration whose state lives in a temp dir.
func sandboxConfig(t *testing.T, mode string) config.Config {
	t.Helper()
	cfg := config.Defaults()
	cfg.Sandbox = mode
	cfg.DBPath = filepath.Join(t.TempDir(), "leashd.db")
	cfg.SandboxHome = t.TempDir()
	return cfg
}

// pathWithout is a PATH holding only the programs named, so bwrap is
// missing.
func pathWithout(t *testing.T, keep ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range keep {
		p, err := osexec.LookPath(name)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(dir, name)))
	}
	return dir
}

// auto uses bubblewrap when it works here and says so.
func TestSandboxAutoUsesBwrap(t *testing.T) {
	testenv.Bwrap(t)
	logs := &testenv.Buffer{}
	sb, err := selectSandbox(t.Context(), sandboxConfig(t, config.SandboxAuto), slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	assert.Equal(t, "bwrap", sb.Name())
	assert.Contains(t, logs.String(), "agents run in bubblewrap")
}

// Without bwrap, auto runs agents unconfined and warns, saying what the
// agent can reach and how to get a sandbox; bwrap refuses to start.
func TestSandboxWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", pathWithout(t, "sh"))
	logs := &testenv.Buffer{}
	sb, err := selectSandbox(t.Context(), sandboxConfig(t, config.SandboxAuto), slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	assert.Equal(t, "off", sb.Name())
	assert.Contains(t, logs.String(), "level=WARN")
	assert.Contains(t, logs.String(), "agents run unsandboxed")
	assert.Contains(t, logs.String(), "apt-get install bubblewrap")

	_, err = selectSandbox(t.Context(), sandboxConfig(t, config.SandboxBwrap), slog.New(slog.DiscardHandler))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LEASHD_SANDBOX=bwrap")
	assert.Contains(t, err.Error(), "apt-get install bubblewrap")

	cfg := sandboxConfig(t, config.SandboxBwrap)
	cfg.Agent, cfg.ACPCommand = config.AgentACP, "gemini --acp"
	_, err = selectAgent(t.Context(), cfg, slog.New(slog.DiscardHandler), nil)
	assert.ErrorContains(t, err, "LEASHD_SANDBOX=bwrap", "leashd does not start")
}

// off says what it is, and never warns.
func TestSandboxOff(t *testing.T) {
	logs := &testenv.Buffer{}
	sb, err := selectSandbox(t.Context(), sandboxConfig(t, config.SandboxOff), slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	assert.Equal(t, "off", sb.Name())
	assert.NotContains(t, logs.String(), "WARN")
}
