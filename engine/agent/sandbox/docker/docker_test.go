package docker_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent/sandbox"
	"github.com/leashd/leashd/engine/agent/sandbox/docker"
	"github.com/leashd/leashd/engine/agent/sandbox/docker/dockertest"
)

// newSandbox is a docker sandbox on the test daemon with the test image,
// a fresh home and instance; change sets more options.
func newSandbox(t *testing.T, change func(*docker.Options)) (*docker.Sandbox, docker.Options) {
	t.Helper()
	o := docker.Options{Image: dockertest.Image(t), Home: t.TempDir(), Instance: dockertest.Instance()}
	if change != nil {
		change(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := docker.New(ctx, o)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	return sb, o
}

// run starts a shell script in the sandbox, closes its stdin, and returns
// its stdout, stderr and exit; the container is ended after.
func run(t *testing.T, sb *docker.Sandbox, dir, script string) (string, string, error) {
	t.Helper()
	p, err := sb.Start(sandbox.Spec{Path: "sh", Args: []string{"-c", script}, Dir: dir, Name: t.Name()})
	require.NoError(t, err)
	defer p.End(2 * time.Second)
	require.NoError(t, p.Stdin().Close())
	errc := make(chan string, 1)
	go func() { b, _ := io.ReadAll(p.Stderr()); errc <- string(b) }()
	out, err := io.ReadAll(p.Stdout())
	require.NoError(t, err)
	return string(out), <-errc, p.Wait()
}

// gone reports whether the container of p no longer exists.
func gone(t *testing.T, cli *client.Client, id string) bool {
	t.Helper()
	_, err := cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
	return cerrdefs.IsNotFound(err)
}

func TestStdioRoundTripThroughCat(t *testing.T) {
	cli := dockertest.Client(t)
	sb, _ := newSandbox(t, nil)
	start := time.Now()
	p, err := sb.Start(sandbox.Spec{Path: "cat", Dir: t.TempDir(), Name: "chat:1"})
	require.NoError(t, err)
	t.Logf("container %s started in %s", p.ID(), time.Since(start).Round(time.Millisecond))
	assert.Len(t, p.ID(), 12)
	_, err = io.WriteString(p.Stdin(), "hello\n")
	require.NoError(t, err)
	line := make([]byte, 6)
	_, err = io.ReadFull(p.Stdout(), line)
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(line), "an answer arrives while stdin is still open")
	_, err = io.WriteString(p.Stdin(), "second line\n")
	require.NoError(t, err)
	require.NoError(t, p.Stdin().Close(), "closing stdin ends cat")
	rest, err := io.ReadAll(p.Stdout())
	require.NoError(t, err, "stdout ends when the container does")
	assert.Equal(t, "second line\n", string(rest))
	require.NoError(t, p.Wait())
	assert.ErrorIs(t, p.Signal(syscall.SIGTERM), os.ErrProcessDone)
	assert.False(t, gone(t, cli, p.ID()), "an exited container stays until End")
	p.End(time.Second)
	assert.True(t, gone(t, cli, p.ID()), "End removes the container")
}

func TestExitStatusAndStderr(t *testing.T) {
	sb, _ := newSandbox(t, nil)
	out, errs, err := run(t, sb, "", "echo out; echo oops >&2; exit 3")
	assert.Equal(t, "out\n", out)
	assert.Equal(t, "oops\n", errs)
	var exit *docker.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 3, exit.Code)
	assert.Equal(t, "exit status 3", err.Error())
}

func TestSignalsReachTheAgent(t *testing.T) {
	cli := dockertest.Client(t)
	sb, _ := newSandbox(t, nil)
	p, err := sb.Start(sandbox.Spec{Path: "sh", Args: []string{"-c", `trap "echo term; exit 7" TERM; echo ready; while :; do sleep 0.1; done`}})
	require.NoError(t, err)
	defer p.End(time.Second)
	ready := make([]byte, 6)
	_, err = io.ReadFull(p.Stdout(), ready)
	require.NoError(t, err)
	require.NoError(t, p.Signal(syscall.SIGTERM), "SIGTERM is passed to the agent by the container's init")
	out, _ := io.ReadAll(p.Stdout())
	assert.Equal(t, "term\n", string(out))
	var exit *docker.ExitError
	require.ErrorAs(t, p.Wait(), &exit)
	assert.Equal(t, 7, exit.Code)

	p, err = sb.Start(sandbox.Spec{Path: "sh", Args: []string{"-c", `trap "" TERM; sleep 1000`}})
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, p.Signal(syscall.SIGKILL))
	err = p.Wait()
	t.Logf("SIGKILL: the container exited after %s: %v", time.Since(start).Round(time.Millisecond), err)
	assert.Less(t, time.Since(start), 5*time.Second)
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 128+9, exit.Code)
	_, err = io.ReadAll(p.Stdout())
	assert.NoError(t, err)
	p.End(time.Second)
	assert.True(t, gone(t, cli, p.ID()))
}

func TestEndRemovesARunningContainer(t *testing.T) {
	cli := dockertest.Client(t)
	sb, _ := newSandbox(t, nil)
	p, err := sb.Start(sandbox.Spec{Path: "sh", Args: []string{"-c", `trap "" TERM; sleep 1000`}})
	require.NoError(t, err)
	start := time.Now()
	p.End(500 * time.Millisecond) // SIGTERM is ignored: removed by force after grace
	t.Logf("End took %s", time.Since(start).Round(time.Millisecond))
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.True(t, gone(t, cli, p.ID()))
	assert.Error(t, p.Wait())
	_, err = io.ReadAll(p.Stdout())
	assert.NoError(t, err, "stdout ended")
}

// TestDeadLeashdsContainersAreReaped: a leashd killed without ending its
// sessions leaves containers; the next start of the same instance removes
// them, and leaves another instance's alone.
func TestDeadLeashdsContainersAreReaped(t *testing.T) {
	cli := dockertest.Client(t)
	sb, o := newSandbox(t, nil)
	other, _ := newSandbox(t, nil)
	left, err := sb.Start(sandbox.Spec{Path: "sleep", Args: []string{"1000"}, Name: "left"})
	require.NoError(t, err)
	exited, err := sb.Start(sandbox.Spec{Path: "true", Name: "exited"})
	require.NoError(t, err)
	require.NoError(t, exited.Wait())
	kept, err := other.Start(sandbox.Spec{Path: "sleep", Args: []string{"1000"}, Name: "kept"})
	require.NoError(t, err)
	defer kept.End(time.Second)

	again, err := docker.New(context.Background(), o) // the restarted leashd
	require.NoError(t, err)
	defer again.Close()
	assert.Equal(t, 2, again.Reaped())
	assert.True(t, gone(t, cli, left.ID()))
	assert.True(t, gone(t, cli, exited.ID()))
	assert.False(t, gone(t, cli, kept.ID()), "another leashd's container stays")
	assert.Error(t, left.Wait(), "the reaped container's process ended")
}

func TestTheContainerIsConfined(t *testing.T) {
	t.Setenv("LEASHD_TELEGRAM_TOKEN", "123:secret-token")
	t.Setenv("PATH", "/host/only/bin:"+os.Getenv("PATH"))
	t.Setenv("SHELL", "/host/only/zsh")
	t.Setenv("ANTHROPIC_API_KEY", "sk-passed")
	home := t.TempDir()
	state := filepath.Join(home, ".local", "state", "leashd")
	require.NoError(t, os.MkdirAll(state, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(state, "leashd.db"), []byte("secret"), 0o600))
	sb, _ := newSandbox(t, func(o *docker.Options) { o.Home = home; o.Hide = []string{state} })
	dir := t.TempDir()
	out, errs, err := run(t, sb, dir, `
		touch /probe 2>/dev/null && echo "root writable" || echo "root read-only"
		touch probe && echo "workdir writable"
		touch "$HOME/probe" && echo "home writable"
		touch /tmp/probe && echo "tmp writable"
		echo "state: [$(ls -A "$HOME/.local/state/leashd")]"
		echo "pwd=$(pwd)"
		echo "uid=$(id -u):$(id -g)"
		env | sort | sed 's/^/env /'`)
	require.NoError(t, err, errs)
	assert.Contains(t, out, "root read-only\n")
	assert.Contains(t, out, "workdir writable\n")
	assert.Contains(t, out, "home writable\n")
	assert.Contains(t, out, "tmp writable\n")
	assert.Contains(t, out, "state: []\n", "leashd's state is hidden")
	assert.Contains(t, out, "pwd="+dir+"\n")
	assert.Contains(t, out, "uid="+strconv.Itoa(os.Getuid())+":"+strconv.Itoa(os.Getgid())+"\n")
	assert.FileExists(t, filepath.Join(dir, "probe"), "written through the mount, owned by leashd's user")
	assert.FileExists(t, filepath.Join(home, "probe"))
	assert.FileExists(t, filepath.Join(state, "leashd.db"), "hiding does not touch the host's files")
	assert.NotContains(t, out, "LEASHD_")
	assert.NotContains(t, out, "/host/only/bin", "the image's PATH, not the host's")
	assert.Contains(t, out, "env PATH=/usr/local/bin:/usr/bin:/bin\n")
	assert.Contains(t, out, "env SHELL=/bin/bash\n", "the image's shell, not the host's")
	assert.NotContains(t, out, "/host/only/zsh")
	assert.Contains(t, out, "env HOME="+home+"\n")
	assert.Contains(t, out, "env ANTHROPIC_API_KEY=sk-passed\n", "the minimal environment's families pass")
}

func TestAMissingHomeIsMade(t *testing.T) {
	home := filepath.Join(t.TempDir(), "agent-home")
	sb, _ := newSandbox(t, func(o *docker.Options) { o.Home = home })
	out, errs, err := run(t, sb, "", `touch "$HOME/probe" && echo "home writable"`)
	require.NoError(t, err, errs)
	assert.Equal(t, "home writable\n", out)
	assert.FileExists(t, filepath.Join(home, "probe"))
}

func TestLimitsAndNoNetworkAreSet(t *testing.T) {
	cli := dockertest.Client(t)
	sb, o := newSandbox(t, func(o *docker.Options) { o.CPUs = 1.5; o.Memory = 256 << 20 })
	p, err := sb.Start(sandbox.Spec{Path: "sleep", Args: []string{"1000"}, Name: "telegram:42"})
	require.NoError(t, err)
	defer p.End(time.Second)
	c, err := cli.ContainerInspect(context.Background(), p.ID(), client.ContainerInspectOptions{})
	require.NoError(t, err)
	hc, cfg := c.Container.HostConfig, c.Container.Config
	assert.Equal(t, int64(1_500_000_000), hc.NanoCPUs)
	assert.Equal(t, int64(256<<20), hc.Memory)
	require.NotNil(t, hc.PidsLimit)
	assert.Equal(t, int64(4096), *hc.PidsLimit)
	assert.Equal(t, "none", string(hc.NetworkMode))
	assert.True(t, hc.ReadonlyRootfs)
	assert.Equal(t, []string{"ALL"}, hc.CapDrop)
	assert.Contains(t, hc.SecurityOpt, "no-new-privileges")
	assert.Equal(t, strconv.Itoa(os.Getuid())+":"+strconv.Itoa(os.Getgid()), cfg.User)
	assert.Equal(t, o.Instance, cfg.Labels[docker.LabelInstance])
	assert.Equal(t, "telegram:42", cfg.Labels[docker.LabelChat])
	assert.True(t, strings.HasPrefix(strings.TrimPrefix(c.Container.Name, "/"), "leashd-telegram-42-"), c.Container.Name)
	assert.False(t, cfg.Tty)
}

func TestImageMissingSaysHowToBuildIt(t *testing.T) {
	dockertest.Client(t)
	_, err := docker.New(context.Background(), docker.Options{Image: "leashd-no-such-image:0", Instance: dockertest.Instance()})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Contains(t, err.Error(), `"leashd-no-such-image:0"`)
	assert.Contains(t, err.Error(), docker.BuildHint)
}

func TestNoDaemonIsUnavailable(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "none.sock"))
	_, err := docker.New(context.Background(), docker.Options{Image: "leashd-agent"})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Contains(t, err.Error(), "no Docker daemon answers at unix://")
	assert.True(t, errors.Is(err, sandbox.ErrUnavailable))
}

func TestLookPathChecksNothingOnTheHost(t *testing.T) {
	var sb docker.Sandbox
	p, err := sb.LookPath("claude-not-on-this-host")
	require.NoError(t, err)
	assert.Equal(t, "claude-not-on-this-host", p)
	assert.Equal(t, "docker", sb.Name())
}

// BenchmarkContainerRoundTrip measures a container's own cost: Start
// (create, attach, start) until a line written to cat comes back, then
// closing stdin, Wait and End (the container removed).
func BenchmarkContainerRoundTrip(b *testing.B) {
	o := docker.Options{Image: dockertest.Image(b), Instance: dockertest.Instance()}
	sb, err := docker.New(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	var first, end time.Duration
	line := make([]byte, 3)
	for b.Loop() {
		t0 := time.Now()
		p, err := sb.Start(sandbox.Spec{Path: "cat", Name: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.WriteString(p.Stdin(), "hi\n"); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(p.Stdout(), line); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		_ = p.Stdin().Close()
		if err := p.Wait(); err != nil {
			b.Fatal(err)
		}
		p.End(time.Second)
		first += t1.Sub(t0)
		end += time.Since(t1)
	}
	b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "start-to-echo-ms/op")
	b.ReportMetric(float64(end.Milliseconds())/float64(b.N), "end-ms/op")
}

// TestNoBridgeIsUnavailable: with the network on and the daemon without a
// default bridge (the test daemon runs with --bridge=none), every agent
// would fail to start; New says so at once.
func TestNoBridgeIsUnavailable(t *testing.T) {
	cli := dockertest.Client(t)
	if _, err := cli.NetworkInspect(context.Background(), "bridge", client.NetworkInspectOptions{}); err == nil {
		t.Skip("this daemon has a default bridge")
	}
	_, err := docker.New(context.Background(), docker.Options{Image: dockertest.Image(t), Network: true, Instance: dockertest.Instance()})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Contains(t, err.Error(), `the network "bridge"`)
	assert.Contains(t, err.Error(), "LEASHD_SANDBOX_NETWORK=off")
}
