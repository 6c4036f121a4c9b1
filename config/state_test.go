package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
)

// stateConfig is a configuration whose database is in a new directory
// (not yet created) under a temporary one.
func stateConfig(t *testing.T) config.Config {
	t.Helper()
	c := config.Defaults()
	c.DBPath = filepath.Join(t.TempDir(), "state", "leashd.db")
	return c
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Mode().Perm()
}

// At first start the state directory is made 0700 and the token 0600
// beside the database; later starts reuse the token.
func TestWebTokenIsCreatedPrivateAndReused(t *testing.T) {
	c := stateConfig(t)
	require.NoError(t, c.PrepareState())
	assert.Equal(t, os.FileMode(0o700), mode(t, c.StateDir()))

	tok, created, err := c.WebToken()
	require.NoError(t, err)
	assert.True(t, created)
	assert.Len(t, tok, 64, "32 random bytes as hex")
	assert.Empty(t, config.WeakSecret(tok))
	assert.Equal(t, filepath.Join(filepath.Dir(c.DBPath), "web-token"), c.WebTokenFile(), "beside the database")
	assert.Equal(t, os.FileMode(0o600), mode(t, c.WebTokenFile()))

	again, created, err := c.WebToken()
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, tok, again, "the token survives a restart")
	read, err := c.ReadWebToken()
	require.NoError(t, err)
	assert.Equal(t, tok, read, "what a client reads")
	left, err := filepath.Glob(filepath.Join(c.StateDir(), ".web-token*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file is left behind")
	require.NoError(t, c.CheckState())
}

// Two leashds starting at once agree on one token.
func TestWebTokenConcurrentFirstStartsAgree(t *testing.T) {
	c := stateConfig(t)
	require.NoError(t, c.PrepareState())
	toks := make([]string, 8)
	var wg sync.WaitGroup
	for i := range toks {
		wg.Go(func() {
			tok, _, err := c.WebToken()
			assert.NoError(t, err)
			toks[i] = tok
		})
	}
	wg.Wait()
	for _, tok := range toks {
		assert.Equal(t, toks[0], tok)
	}
}

// A token file others can read is refused, naming the file and the fix;
// so is one that cannot be read or holds nothing usable.
func TestWebTokenFileRefused(t *testing.T) {
	c := stateConfig(t)
	require.NoError(t, c.PrepareState())
	path := c.WebTokenFile()
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("ab12", 16)+"\n"), 0o644))
	require.NoError(t, os.Chmod(path, 0o644))
	_, _, err := c.WebToken()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "API token file "+path+" is open to other users (mode 0644)")
	assert.Contains(t, err.Error(), "Fix: chmod 600 "+path)

	require.NoError(t, os.WriteFile(path, []byte("short\n"), 0o600))
	require.NoError(t, os.Chmod(path, 0o600))
	_, _, err = c.WebToken()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "API token file "+path+" holds no usable token")

	if os.Getuid() != 0 { // root reads anything
		require.NoError(t, os.Chmod(path, 0o000))
		_, _, err = c.WebToken()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "API token file "+path+" cannot be read")
	}
}

// A client finds no token when leashd never ran: the error says where it
// looked and what else to do.
func TestReadWebTokenMissing(t *testing.T) {
	c := stateConfig(t)
	_, err := c.ReadWebToken()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LEASHD_WEB_TOKEN is not set and "+c.WebTokenFile()+" does not exist")
	assert.Contains(t, err.Error(), "--token")
}

// A state directory or database others can read is refused with the
// chmod that fixes it; nothing is changed.
func TestStateOpenToOthersRefused(t *testing.T) {
	c := stateConfig(t)
	dir := c.StateDir()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, os.WriteFile(c.DBPath, nil, 0o644))
	require.NoError(t, os.Chmod(c.DBPath, 0o644))
	require.NoError(t, os.WriteFile(c.DBPath+"-wal", nil, 0o600))

	err := c.PrepareState()
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "the directory "+dir+" (mode 0755)")
	assert.Contains(t, msg, c.DBPath+" (mode 0644)")
	assert.NotContains(t, msg, "-wal", "a private file is not named")
	assert.Contains(t, msg, "Fix: chmod 700 "+dir+"; chmod 600 "+c.DBPath)
	assert.Equal(t, os.FileMode(0o755), mode(t, dir), "leashd changes nothing")
	assert.Equal(t, os.FileMode(0o644), mode(t, c.DBPath))

	require.NoError(t, os.Chmod(dir, 0o700))
	err = c.CheckState()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Fix: chmod 600 "+c.DBPath)
	assert.NotContains(t, err.Error(), "chmod 700")

	require.NoError(t, os.Chmod(c.DBPath, 0o600))
	require.NoError(t, c.CheckState(), "fixed as the message said")

	require.NoError(t, os.Chmod(dir, 0o770))
	require.ErrorContains(t, c.CheckState(), "(mode 0770)", "group-writable is open too")
}

// "~/" in LEASHD_DB_PATH is the home directory, as for the store.
func TestStateDirExpandsHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	c := config.Defaults()
	c.DBPath = "~/leashd/leashd.db"
	assert.Equal(t, filepath.Join(home, "leashd"), c.StateDir())
	assert.Equal(t, filepath.Join(home, "leashd", "web-token"), c.WebTokenFile())
}
