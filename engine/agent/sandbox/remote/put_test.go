package remote

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPutFileLandsInTheRunnersInbox: a file a person sent for a chat
// whose agent is on a runner is written in that runner's working
// directory, in the inbox only, never over a file and never through a
// symlink out of it; a chat on no runner is told so (the server saves
// the file itself).
func TestPutFileLandsInTheRunnersInbox(t *testing.T) {
	r := newRig(t, 0)
	dir, outside := t.TempDir(), t.TempDir()
	r.start(t, &Runner{Name: "r1", MaxAgents: 1, Dir: dir})
	ctx := t.Context()
	notes := []byte("meeting notes\n")

	require.ErrorIs(t, r.hub.PutFile(ctx, "telegram:1", ".leashd/inbox/m1/notes.txt", notes), ErrNotOnRunner)
	require.NoError(t, r.hub.Pin("telegram:1", "r1"))
	require.ErrorIs(t, r.hub.PutFile(ctx, "telegram:1", ".leashd/inbox/m1/notes.txt", notes), ErrNotOnRunner,
		"pinned, but its agent has not started there (it may still run on the server)")
	agent, err := r.hub.Start(shSpec("telegram:1", "sleep 60"))
	require.NoError(t, err)
	t.Cleanup(func() { agent.End(time.Second) })
	require.NoError(t, r.hub.PutFile(ctx, "telegram:1", ".leashd/inbox/m1/notes.txt", notes))
	got, err := os.ReadFile(filepath.Join(dir, ".leashd/inbox/m1/notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, notes, got)
	st, err := os.Stat(filepath.Join(dir, ".leashd/inbox/m1/notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	ignore, err := os.ReadFile(filepath.Join(dir, ".leashd/.gitignore"))
	require.NoError(t, err)
	assert.Equal(t, "*\n", string(ignore), "nothing people send is committed")

	err = r.hub.PutFile(ctx, "telegram:1", ".leashd/inbox/m1/notes.txt", []byte("other"))
	require.ErrorContains(t, err, "exists already")
	got, _ = os.ReadFile(filepath.Join(dir, ".leashd/inbox/m1/notes.txt"))
	assert.Equal(t, notes, got, "never written over")

	require.NoError(t, os.Symlink(outside, filepath.Join(dir, ".leashd/inbox/m2")))
	require.Error(t, r.hub.PutFile(ctx, "telegram:1", ".leashd/inbox/m2/x.txt", notes))
	assert.NoFileExists(t, filepath.Join(outside, "x.txt"), "not through a symlink out of the working directory")

	empty := []byte{}
	require.NoError(t, r.hub.PutFile(ctx, "telegram:1", ".leashd/inbox/m3/empty.txt", empty))
	assert.FileExists(t, filepath.Join(dir, ".leashd/inbox/m3/empty.txt"))
}

// TestPutOutsideTheInboxIsRefused: the hub and the runner each accept
// only a clean path under .leashd/inbox/.
func TestPutOutsideTheInboxIsRefused(t *testing.T) {
	r := newRig(t, 0)
	dir := t.TempDir()
	r.start(t, &Runner{Name: "r1", MaxAgents: 1, Dir: dir})
	agent, err := r.hub.Start(shSpec("telegram:1", "sleep 60"))
	require.NoError(t, err)
	t.Cleanup(func() { agent.End(time.Second) })
	for _, p := range []string{"../x", ".leashd/inbox/../../x", "/etc/x", "src/main.go", ".leashd/inbox/", ".leashd/inbox/a/./b", ".leashd/inbox/a\\b"} {
		err := r.hub.PutFile(t.Context(), "telegram:1", p, []byte("x"))
		require.ErrorContains(t, err, "only a clean path under .leashd/inbox/", p)
		// The runner refuses it too, should a server ask.
		r.hub.mu.Lock()
		c := r.hub.runners["r1"].conn
		r.hub.mu.Unlock()
		_, _, err = c.open(openReq{Op: opPut, Path: p, Size: 1}, 30*time.Second)
		require.ErrorContains(t, err, "only a clean path under .leashd/inbox/", p)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written")
}
