package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/web"
)

// Issue 31.14: a flood of new chat names (a script asking in a new chat
// each time) does not grow the list of chats without end: past the cap
// the chats idle longest are forgotten, and memory stays flat. Run with
// -v for the figures.
func TestChatListIsBoundedUnderAFloodOfChatNames(t *testing.T) {
	c := web.New()
	ctx := context.Background()
	before := heapInUse()
	const flood = 20_000
	for i := range flood {
		require.NoError(t, c.Say(ctx, fmt.Sprintf("flood-%06d", i), "hello"))
	}
	after := heapInUse()
	t.Logf("%d new chat names: %d chats listed (cap %d); heap in use %.1f MiB → %.1f MiB",
		flood, c.Chats(), web.DefaultMaxChats, float64(before)/(1<<20), float64(after)/(1<<20))
	assert.LessOrEqual(t, c.Chats(), web.DefaultMaxChats)
	assert.Greater(t, c.Chats(), web.DefaultMaxChats/2, "the recent ones are kept")
}

// A chat forgotten while a request waits in it is still listed, with its
// pending count, and the most recent chats are kept.
func TestForgottenChatWithARequestIsStillListed(t *testing.T) {
	e := start(t, setup{webOpts: []web.Option{web.WithMaxChats(10)}})
	s := e.subscribe("")
	e.askID(`{"chat_id":"deploys","question":"Ship?","options":[{"label":"Yes"},{"label":"No"}]}`)
	s.next("interaction.requested")
	for i := range 50 {
		require.NoError(t, e.web.Say(context.Background(), fmt.Sprintf("flood-%02d", i), "hi"))
	}
	st, body := e.do("GET", "/api/chats", "")
	require.Equal(t, http.StatusOK, st, body)
	var chats []struct {
		ID      string `json:"chat_id"`
		Pending int    `json:"pending"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &chats))
	assert.LessOrEqual(t, len(chats), 11, "at most the cap, and the chat with a request")
	ids := map[string]int{}
	for _, c := range chats {
		ids[c.ID] = c.Pending
	}
	assert.Equal(t, 1, ids["deploys"], "listed with its request though idle longest")
	assert.Contains(t, ids, "flood-49", "the most recent is kept")
	assert.NotContains(t, ids, "flood-00", "the idle ones are forgotten")
}
