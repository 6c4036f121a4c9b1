package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent/sandbox/docker"
	"github.com/leashd/leashd/engine/agent/sandbox/docker/dockertest"
)

// LEASHD_SANDBOX=docker without a daemon stops leashd, saying why.
func TestDockerSandboxWithoutADaemonStopsLeashd(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "docker.sock"))
	cfg := config.Defaults()
	cfg.Sandbox = config.SandboxDocker
	_, err := selectSandbox(context.Background(), cfg, slog.New(slog.DiscardHandler))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LEASHD_SANDBOX=docker: ")
	assert.Contains(t, err.Error(), "no Docker daemon answers at unix://")
}

// With a daemon: a missing image stops leashd with how to build it; the
// image there, the containers get what the configuration says.
func TestDockerSandboxFromTheConfiguration(t *testing.T) {
	image := dockertest.Image(t)
	buf := &testenv.Buffer{}
	log := slog.New(slog.NewTextHandler(buf, nil))
	cfg := config.Defaults()
	cfg.Sandbox, cfg.SandboxImage = config.SandboxDocker, "leashd-agent-missing:0"
	cfg.DBPath = filepath.Join(t.TempDir(), "state", "leashd.db")
	_, err := selectSandbox(context.Background(), cfg, log)
	require.Error(t, err)
	assert.Contains(t, err.Error(), docker.BuildHint)

	cfg.SandboxImage, cfg.SandboxCpus, cfg.SandboxMemory, cfg.SandboxNetwork = image, "1.5", "512m", "off"
	sb, err := selectSandbox(context.Background(), cfg, log)
	require.NoError(t, err)
	assert.Equal(t, "docker", sb.Name())
	o, err := dockerOptions(cfg)
	require.NoError(t, err)
	assert.Equal(t, 1.5, o.CPUs)
	assert.Equal(t, int64(512<<20), o.Memory)
	assert.False(t, o.Network)
	assert.Equal(t, stateHidden(cfg), o.Hide)
	assert.Equal(t, instanceOf(cfg.StateDir()), o.Instance)
	assert.NotEqual(t, instanceOf("/other/state"), o.Instance)
	assert.Contains(t, buf.String(), "agents run in Docker containers")
	assert.Contains(t, buf.String(), "network=none")
}
