package interactions

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a settled interaction leaves behind is bounded: its chat's queue
// goes once empty (chats that asked once do not pile up), and only the
// last maxTombstones are remembered for late taps.
func TestSettledInteractionsLeaveNothingUnbounded(t *testing.T) {
	c := New(WithPresenter(PresenterFunc(func(context.Context, *Interaction) (string, error) { return "m", nil })))
	t.Cleanup(func() { c.Interrupt("test over") })
	kept, out, err := c.Start(t.Context(), Interaction{ChatID: "kept", Kind: KindQuestion, Question: "Q?"}, 0)
	require.NoError(t, err)

	var first string
	for i := range maxTombstones + 100 {
		it, done, err := c.Start(t.Context(), Interaction{ChatID: "chat-" + strconv.Itoa(i), Kind: KindQuestion, Question: "Q?"}, 0)
		require.NoError(t, err)
		if i == 0 {
			first = it.ID
		}
		_, err = c.Reply(it.ID, Reply{Text: "a"})
		require.NoError(t, err)
		<-done
	}

	c.mu.Lock()
	assert.Len(t, c.byChat, 1, "only the chat with something pending has a queue")
	assert.Len(t, c.gone.byID, maxTombstones)
	c.mu.Unlock()
	_, err = c.Reply(first, Reply{Text: "late"})
	assert.ErrorIs(t, err, ErrNotFound, "the oldest are forgotten")
	got, _, err := c.ReplyText("kept", Reply{Text: "still here"})
	require.NoError(t, err)
	assert.Equal(t, kept.ID, got.ID)
	assert.Equal(t, "still here", (<-out).Answer)
}
