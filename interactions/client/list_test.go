package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
	"github.com/leashd/leashd/interactions/client"
)

// Pending follows the pages of GET /api/interactions: more requests than
// one page holds all come back, oldest first; a request beyond the cap on
// pending requests is an error that errors.Is finds ErrTooMany in.
func TestPendingFollowsPagesAndTheCapIsErrTooMany(t *testing.T) {
	url, _, stop := leashd(token, interactions.WithCaps(interactions.Caps{PerChat: 1100, PerChatSetting: "LEASHD_API_MAX_PENDING_PER_CHAT"}))
	defer stop()
	c := client.New(url, token)
	var ids []string
	for i := range 1100 {
		id, err := c.Start(t.Context(), client.Request{ChatID: "c", Question: "Deploy?", Options: []interactions.Choice{{Label: "Yes"}, {Label: "No"}}})
		require.NoError(t, err, i)
		ids = append(ids, id)
	}
	_, err := c.Start(t.Context(), client.Request{ChatID: "c", Question: "One more?"})
	require.ErrorIs(t, err, interactions.ErrTooMany)
	assert.Contains(t, err.Error(), "LEASHD_API_MAX_PENDING_PER_CHAT")

	its, err := c.Pending(t.Context(), "c")
	require.NoError(t, err)
	require.Len(t, its, 1100)
	got := map[string]bool{}
	for i, it := range its {
		got[it.ID] = true
		assert.Equal(t, "c", it.ChatID)
		if i > 0 {
			assert.False(t, it.AskedAt.Before(its[i-1].AskedAt), "oldest first")
		}
	}
	for _, id := range ids {
		assert.True(t, got[id], id)
	}
}
