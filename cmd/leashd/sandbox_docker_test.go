package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
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

// leashd serve with LEASHD_SANDBOX=docker: the CLI's version is read in a
// container, a prewarmed spare starts in one, and leashd's shutdown
// removes every container it started.
func TestServeRunsAgentsInContainers(t *testing.T) {
	image := dockertest.Image(t)
	cli := dockertest.Client(t)
	dir, home := testenv.PrivateDir(t), t.TempDir()
	_, logs, stop := startServe(t, dir, "LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH=claude",
		"LEASHD_SANDBOX=docker", "LEASHD_SANDBOX_IMAGE="+image, "LEASHD_SANDBOX_NETWORK=off",
		"LEASHD_SANDBOX_HOME="+home, "LEASHD_PREWARM=1")
	mine := client.Filters{}.Add("label", docker.LabelInstance+"="+instanceOf(dir))
	count := func() (all, spares int) {
		l, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: mine})
		require.NoError(t, err)
		for _, c := range l.Items {
			if c.Labels[docker.LabelChat] != "version" && c.State == "running" {
				spares++
			}
		}
		return len(l.Items), spares
	}
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "version=2.1.") },
		60*time.Second, 50*time.Millisecond, "the version is read in a container: %s", logs)
	assert.Contains(t, logs.String(), "agents run in Docker containers")
	require.Eventually(t, func() bool { _, spares := count(); return spares == 1 }, 60*time.Second, 100*time.Millisecond,
		"the prewarmed spare runs in a container")
	require.NoError(t, stop())
	all, _ := count()
	assert.Equal(t, 0, all, "leashd's shutdown removed its containers")
}
