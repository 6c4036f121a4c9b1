package docker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/acp"
	"github.com/leashd/leashd/engine/agent/sandbox/docker"
	"github.com/leashd/leashd/engine/agent/sandbox/docker/dockertest"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// TestACPAgentAnswersFromInsideTheContainer: the image's Claude ACP
// adapter, driven by the ACP driver through a docker sandbox.
func TestACPAgentAnswersFromInsideTheContainer(t *testing.T) {
	api := fakeapi.New(t)
	home, dir := t.TempDir(), t.TempDir()
	o := docker.Options{Image: dockertest.Image(t), Home: home, Network: true, NetworkMode: "host", Instance: dockertest.Instance()}
	sb, err := docker.New(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { sb.Close() })
	a := acp.New([]string{"claude-agent-acp"}, acp.WithSandbox(sb),
		acp.WithEnv(append(api.Env(home), "IS_SANDBOX=1")...), acp.WithCloseTimeout(3*time.Second))
	require.NoError(t, a.Ready(), "nothing is looked up on the host")
	api.Otherwise(func(*fakeapi.Request) fakeapi.Reply { return fakeapi.Text("Hello over ACP") })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	start := time.Now()
	s, err := a.Open(ctx, agent.SessionOptions{ChatID: "acp-1", WorkDir: dir, Mode: agent.ModeDefault})
	require.NoError(t, err)
	t.Logf("the ACP adapter started in a container and opened a session in %s", time.Since(start).Round(time.Millisecond))
	defer s.Close(ctx)
	h := &allowAll{}
	res, err := s.Turn(ctx, agent.Text("say hello"), h)
	require.NoError(t, err)
	assert.Contains(t, res.Text+strings.Join(h.texts, ""), "Hello over ACP")
}
