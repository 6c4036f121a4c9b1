package remote

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/sandbox"
)

// TestPlacement: LEASHD_LOCAL_AGENTS run here first; then chats go to the
// least busy runner whose labels match, and stay on it; a full runner
// refuses (the engine queues chats past Capacity); labels nobody has are
// refused with a reason.
func TestPlacement(t *testing.T) {
	r := newRig(t, time.Minute)
	connected := make(chan string, 2)
	r.hub.Connected = func(name string) { connected <- name }
	r.runner(t, "cpu1", 2)
	r.runner(t, "gpu1", 1, "gpu")
	require.ElementsMatch(t, []string{"cpu1", "gpu1"}, []string{<-connected, <-connected}, "the engine hears of each runner's slots")
	require.Equal(t, 3, r.hub.Capacity(), "the runners' slots")
	pl := &Placer{Local: &sandbox.Host{}, LocalMax: 1, Hub: r.hub}
	where := func(chat string) string {
		t.Helper()
		p, err := pl.Start(shSpec(chat, "sleep 600"))
		require.NoError(t, err)
		t.Cleanup(func() { p.End(time.Second) })
		if id := p.ID(); strings.Contains(id, "/") {
			return strings.Split(id, "/")[0]
		}
		return "local"
	}
	require.Equal(t, "local", where("c1"))
	require.NoError(t, r.hub.SetLabels("c2", []string{"gpu"}))
	require.Equal(t, "gpu1", where("c2"))
	require.Equal(t, "cpu1", where("c3"))
	require.Equal(t, "cpu1", where("c3"), "a chat stays on its runner")
	_, err := pl.Start(shSpec("c4", "true"))
	require.ErrorIs(t, err, ErrNoRunner, "every runner is full")
	require.ErrorIs(t, err, agent.ErrNoRoom, "the engine keeps the prompt for later")
	require.ErrorContains(t, err, "no runner has a free agent slot")
	require.NoError(t, r.hub.SetLabels("c5", []string{"tpu"}))
	_, err = pl.Start(shSpec("c5", "true"))
	require.ErrorContains(t, err, "with labels tpu")
	require.Error(t, r.hub.Pin("c6", "nobody"))
	require.Error(t, r.hub.SetLabels("c6", []string{"bad label"}))
	name, labels := r.hub.Placement("c2")
	require.Equal(t, "gpu1", name)
	require.Equal(t, []string{"gpu"}, labels)
}
