package docker

import (
	"context"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent/sandbox"
	"github.com/leashd/leashd/engine/agent/sandbox/docker/dockertest"
)

// TestADeadLeashdsAgentStops: when leashd dies, the kernel closes its
// attach connection; the daemon then closes the agent's stdin (StdinOnce)
// and an agent reading it (the CLI, an ACP agent) exits, so nothing keeps
// running until the next start reaps the container.
func TestADeadLeashdsAgentStops(t *testing.T) {
	cli := dockertest.Client(t)
	sb, err := New(context.Background(), Options{Image: dockertest.Image(t), Instance: dockertest.Instance()})
	require.NoError(t, err)
	defer sb.Close()
	sp, err := sb.Start(sandbox.Spec{Path: "cat", Name: "orphan"})
	require.NoError(t, err)
	p := sp.(*proc)
	defer p.End(time.Second)
	p.conn.Close() // what leashd's death does to the connection
	require.Eventually(t, func() bool {
		c, err := cli.ContainerInspect(context.Background(), p.id, client.ContainerInspectOptions{})
		return err == nil && c.Container.State != nil && !c.Container.State.Running
	}, 20*time.Second, 50*time.Millisecond, "the agent kept running after leashd's connection closed")
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return")
	}
	assert.NoError(t, p.exitErr, "cat saw the end of its input")
}
