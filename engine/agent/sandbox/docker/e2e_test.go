package docker_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/agent/sandbox"
	"github.com/leashd/leashd/engine/agent/sandbox/bwrap"
	"github.com/leashd/leashd/engine/agent/sandbox/docker"
	"github.com/leashd/leashd/engine/agent/sandbox/docker/dockertest"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// containerCLI is the image's Claude Code CLI driven by the claude driver
// through a docker sandbox, against a fake model API on this host's
// loopback (the container shares the host's network for that).
func containerCLI(t testing.TB, api *fakeapi.Server, home string) (*claude.Agent, docker.Options) {
	t.Helper()
	o := docker.Options{Image: dockertest.Image(t), Home: home, Network: true, NetworkMode: "host", Instance: dockertest.Instance()}
	sb, err := docker.New(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	return claude.New("claude", claude.WithSandbox(sb), claude.WithEnv(api.Env(home)), claude.WithCloseTimeout(3*time.Second)), o
}

type allowAll struct{ texts []string }

func (h *allowAll) Text(s string)                   { h.texts = append(h.texts, s) }
func (h *allowAll) ToolUse(string, json.RawMessage) {}
func (h *allowAll) Permission(_ context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	return agent.PermissionResponse{Allow: true, UpdatedInput: req.Input}
}

func TestClaudeAnswersFromInsideTheContainer(t *testing.T) {
	cli := dockertest.Client(t)
	api := fakeapi.New(t)
	home, dir := t.TempDir(), t.TempDir()
	a, o := containerCLI(t, api, home)
	api.Reply(fakeapi.Tool("Bash", map[string]string{"command": "echo written in the container > made.txt", "description": "write"}),
		fakeapi.Text("Hello from inside the container"))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	s, err := a.Open(ctx, agent.SessionOptions{ChatID: "t1", WorkDir: dir, Mode: agent.ModeDefault})
	require.NoError(t, err)
	t.Logf("claude started in a container and initialized in %s", time.Since(start).Round(time.Millisecond))
	h := &allowAll{}
	res, err := s.Turn(ctx, agent.Text("say hello"), h)
	require.NoError(t, err)
	assert.Equal(t, "Hello from inside the container", res.Text)
	assert.NotEmpty(t, res.SessionID)
	b, err := os.ReadFile(filepath.Join(dir, "made.txt"))
	require.NoError(t, err, "the Bash tool ran in the container and wrote the mounted working directory")
	assert.Equal(t, "written in the container\n", string(b))
	assert.DirExists(t, filepath.Join(home, ".claude"), "the CLI's state lives in the mounted home")

	list := func() int {
		l, err := cli.ContainerList(context.Background(), client.ContainerListOptions{
			All: true, Filters: client.Filters{}.Add("label", docker.LabelInstance+"="+o.Instance),
		})
		require.NoError(t, err)
		return len(l.Items)
	}
	assert.Equal(t, 1, list())
	require.NoError(t, s.Close(ctx))
	assert.Equal(t, 0, list(), "the session's end removed its container")
}

// BenchmarkStartToInitialize measures starting the Claude Code CLI and
// its initialize handshake (agent.Open: Start until the CLI's initialize
// answer), then closing it: unsandboxed (the host's pinned CLI,
// LEASHD_TEST_CLAUDE) and in a container (the image's CLI, the same
// release), in the same run.
func BenchmarkStartToInitialize(b *testing.B) {
	b.Run("sandbox=off", func(b *testing.B) {
		api := fakeapi.New(b)
		home := b.TempDir()
		// The image carries the newest pinned CLI only: not testenv.Claude,
		// which .ci/test also runs with the oldest.
		path := testenv.Require(b, "LEASHD_TEST_CLAUDE")
		benchOpen(b, claude.New(path, claude.WithSandbox(&sandbox.Host{}), claude.WithEnv(api.Env(home)), claude.WithCloseTimeout(3*time.Second)))
	})
	b.Run("sandbox=bwrap", func(b *testing.B) {
		api := fakeapi.New(b)
		home := b.TempDir()
		w, err := bwrap.New(bwrap.Options{Program: testenv.Bwrap(b), Home: home, Hide: []string{b.TempDir()}, Network: true})
		if err != nil {
			b.Fatal(err)
		}
		path := testenv.Require(b, "LEASHD_TEST_CLAUDE")
		benchOpen(b, claude.New(path, claude.WithSandbox(&sandbox.Host{Wrap: w}), claude.WithEnv(api.Env(home)), claude.WithCloseTimeout(3*time.Second)))
	})
	b.Run("sandbox=docker", func(b *testing.B) {
		api := fakeapi.New(b)
		a, _ := containerCLI(b, api, b.TempDir())
		benchOpen(b, a)
	})
}

func benchOpen(b *testing.B, a *claude.Agent) {
	dir := b.TempDir()
	var open, closing time.Duration
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		t0 := time.Now()
		s, err := a.Open(ctx, agent.SessionOptions{ChatID: "b", WorkDir: dir, Mode: agent.ModeDefault})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := s.Close(ctx); err != nil {
			b.Fatal(err)
		}
		open += t1.Sub(t0)
		closing += time.Since(t1)
		cancel()
	}
	b.ReportMetric(float64(open.Milliseconds())/float64(b.N), "open-ms/op")
	b.ReportMetric(float64(closing.Milliseconds())/float64(b.N), "close-ms/op")
}
