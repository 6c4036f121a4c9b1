package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/sqlite"
)

// Subscriptions are kept per chat across a reopen, at most
// MaxPushSubscriptions each (the oldest go), and a gone endpoint is
// deleted in every chat.
func TestPushSubscriptions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "leashd.db")
	s, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	sub := func(chat, ep string) sqlite.PushSubscription {
		return sqlite.PushSubscription{ChatID: chat, Endpoint: "https://fcm.googleapis.com/" + ep, P256dh: "k-" + ep, Auth: "a-" + ep}
	}
	require.NoError(t, s.SavePushSubscription(ctx, sub("web-1", "phone")))
	require.NoError(t, s.SavePushSubscription(ctx, sub("web-2", "phone")))
	require.NoError(t, s.SavePushSubscription(ctx, sub("web-1", "laptop")))
	again := sub("web-1", "phone")
	again.Auth = "new"
	require.NoError(t, s.SavePushSubscription(ctx, again))
	require.NoError(t, s.Close())

	s, err = sqlite.Open(ctx, path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	got, err := s.PushSubscriptions(ctx, "web-1")
	require.NoError(t, err)
	assert.Equal(t, []sqlite.PushSubscription{again, sub("web-1", "laptop")}, got)

	require.NoError(t, s.DeletePushSubscription(ctx, "https://fcm.googleapis.com/phone"))
	got, _ = s.PushSubscriptions(ctx, "web-1")
	assert.Equal(t, []sqlite.PushSubscription{sub("web-1", "laptop")}, got)
	got, _ = s.PushSubscriptions(ctx, "web-2")
	assert.Empty(t, got, "gone in every chat")

	for i := range sqlite.MaxPushSubscriptions + 5 {
		require.NoError(t, s.SavePushSubscription(ctx, sub("web-3", fmt.Sprint(i))))
	}
	got, _ = s.PushSubscriptions(ctx, "web-3")
	assert.Len(t, got, sqlite.MaxPushSubscriptions)
	assert.Equal(t, sub("web-3", fmt.Sprint(sqlite.MaxPushSubscriptions+4)), got[len(got)-1])
}
