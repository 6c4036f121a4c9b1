package interactions_test

import (
	"testing"
	"time"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTimeout(t *testing.T) {
	for _, mk := range []func(string) interactions.Interaction{
		func(c string) interactions.Interaction { return question(c, "Q?", "a", "b") },
		planReview, toolApproval,
	} {
		it0 := mk("c")
		t.Run(string(it0.Kind), func(t *testing.T) {
			c, p := newCoord(t, interactions.WithTimeout(5*time.Millisecond))
			ch, stop := c.Subscribe()
			defer stop()
			r := await(t, request(t.Context(), c, it0))
			require.NoError(t, r.err)
			assert.Equal(t, interactions.StatusExpired, r.res.Status)
			assert.False(t, r.res.Approved())
			assert.Contains(t, r.res.Text, "No answer came within 5ms")
			assert.Empty(t, r.res.By)
			assert.Empty(t, c.Pending("c"))
			assert.Zero(t, c.PendingCount())

			evs := eventsFor(t, ch, 2)
			assert.Equal(t, interactions.EventResolved, evs[1].Type)
			assert.Equal(t, interactions.StatusExpired, evs[1].Resolution.Status)
			assert.Equal(t, refOf(r.it), evs[1].Ref, "the connector gets its message back to mark it expired")
			assert.Equal(t, r.res, evs[1].Resolution)

			shown := p.Next(t)
			_, err := c.Reply(shown.ID, interactions.Reply{Answers: []string{shown.Options[0].Label}})
			require.ErrorIs(t, err, interactions.ErrNotPending)
			assert.Contains(t, err.Error(), "expired")
			assert.True(t, interactions.IsStale(err))
		})
	}
}
