package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
)

// leashd makes its web push keys at first start, beside the database and
// readable by it alone, keeps them across restarts, and the page gets the
// public one; a subscription given to the page is kept in the database.
func TestServeKeepsPushKeysBesideTheDatabase(t *testing.T) {
	dir := testenv.PrivateDir(t)
	url, _, stop := startServe(t, dir, "LEASHD_PUSH_EXTRA_HOSTS=push.example.org")
	var info struct {
		Enabled   bool   `json:"enabled"`
		PublicKey string `json:"public_key"`
	}
	require.Equal(t, 200, getJSON(t, url+"/api/push", &info))
	assert.True(t, info.Enabled)
	path := filepath.Join(dir, "vapid-keys.json")
	fi, err := os.Stat(path)
	require.NoError(t, err, "the keys are beside the database")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	var keys map[string]string
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &keys))
	assert.Equal(t, info.PublicKey, keys["public_key"])
	assert.NotEmpty(t, keys["private_key"])

	sub := `{"chat_id":"web-1","subscription":{"endpoint":"https://push.example.org/s/1","keys":{"p256dh":"BLc4xRzKlKORKWlbdgFaBrrPK3ydWAHo4M0gs0i1oEKgPpWC5cW8OCzVrOQRv-1npXRWk8udnW3oYhIO4475rds","auth":"5I2Bu2oKdyy9CwL8QVF0NQ"}}}`
	st, body := postJSON(t, url+"/api/push/subscriptions", sub)
	require.Equal(t, 201, st, body)
	require.NoError(t, stop())

	url, _, stop = startServe(t, dir)
	defer func() { require.NoError(t, stop()) }()
	require.Equal(t, 200, getJSON(t, url+"/api/push", &info))
	assert.Equal(t, keys["public_key"], info.PublicKey, "the same keys after a restart: subscriptions stay valid")
	st, body = postJSON(t, url+"/api/push/subscriptions", sub)
	assert.Equal(t, 400, st, "push.example.org is no longer an extra host")
	assert.Contains(t, body, "not a known push service")
}
