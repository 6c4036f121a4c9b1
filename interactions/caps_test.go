package interactions_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// A program's request beyond a cap is refused with an error naming the
// cap and its variable; the chat's agent is never refused; answering one
// makes room again.
func TestProgramRequestsAreCappedPerChatAndInAll(t *testing.T) {
	c, p := newCoord(t, interactions.WithCaps(interactions.Caps{
		PerChat: 2, All: 3, PerChatSetting: "LEASHD_API_MAX_PENDING_PER_CHAT", AllSetting: "LEASHD_API_MAX_PENDING",
	}))
	ctx := t.Context()
	program := func(chat string) interactions.Interaction {
		it := question(chat, "Deploy?", "Yes", "No")
		it.Asker = "api:ci"
		return it
	}
	first, _, err := c.Start(ctx, program("web:a"), 0)
	require.NoError(t, err)
	_, _, err = c.Start(ctx, program("web:a"), 0)
	require.NoError(t, err)

	_, _, err = c.Start(ctx, program("web:a"), 0)
	require.ErrorIs(t, err, interactions.ErrTooMany)
	var ce *interactions.CapError
	require.True(t, errors.As(err, &ce))
	assert.False(t, ce.All)
	assert.Contains(t, err.Error(), `too many pending requests in chat "web:a": at most 2 in one chat (LEASHD_API_MAX_PENDING_PER_CHAT)`)

	// The agent's own request in the same chat is asked all the same.
	agent := request(ctx, c, question("web:a", "Which database?", "Postgres", "SQLite"))
	for range 3 { // both programs' and the agent's shown: all pending
		p.Next(t)
	}

	_, _, err = c.Start(ctx, program("web:b"), 0)
	require.ErrorIs(t, err, interactions.ErrTooMany, "3 pending in all, the agent's counted")
	assert.Contains(t, err.Error(), "at most 3 (LEASHD_API_MAX_PENDING)")
	require.True(t, errors.As(err, &ce))
	assert.True(t, ce.All)

	require.True(t, c.Cancel(first.ID, "withdrawn"))
	_, _, err = c.Start(ctx, program("web:b"), 0)
	require.NoError(t, err, "answering or withdrawing one makes room")
	c.Interrupt("test over")
	await(t, agent)
}
