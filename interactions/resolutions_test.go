package interactions_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryResolutionRecordsByAndAt(t *testing.T) {
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	tests := []struct {
		name  string
		it    interactions.Interaction
		act   func(c *interactions.Coordinator, it interactions.Interaction) error
		by    string
		state interactions.Status
	}{
		{"tap", question("c", "Q?", "a", "b"), func(c *interactions.Coordinator, it interactions.Interaction) error {
			_, err := c.Reply(it.ID, interactions.Reply{By: "alice", Answers: []string{"a"}})
			return err
		}, "alice", interactions.StatusAnswered},
		{"text", question("c", "Q?", "a", "b"), func(c *interactions.Coordinator, it interactions.Interaction) error {
			_, _, err := c.ReplyText("c", interactions.Reply{By: "bob", Text: "other"})
			return err
		}, "bob", interactions.StatusAnswered},
		{"confirm", multi("c", "Q?", "a", "b"), func(c *interactions.Coordinator, it interactions.Interaction) error {
			if _, err := c.Toggle(it.ID, "b", interactions.Reply{By: "x"}); err != nil {
				return err
			}
			return c.Confirm(it.ID, interactions.Reply{By: "carol"})
		}, "carol", interactions.StatusAnswered},
		{"plan", planReview("c"), func(c *interactions.Coordinator, it interactions.Interaction) error {
			_, err := c.Reply(it.ID, interactions.Reply{By: "dave", Answers: []string{"edit"}})
			return err
		}, "dave", interactions.StatusAnswered},
		{"tool", toolApproval("c"), func(c *interactions.Coordinator, it interactions.Interaction) error {
			_, err := c.Reply(it.ID, interactions.Reply{By: "erin", Answers: []string{"deny"}})
			return err
		}, "erin", interactions.StatusRejected},
		{"reject", toolApproval("c"), func(c *interactions.Coordinator, it interactions.Interaction) error {
			_, err := c.Reply(it.ID, interactions.Reply{By: "frank", Reject: true})
			return err
		}, "frank", interactions.StatusRejected},
		{"cancel", toolApproval("c"), func(c *interactions.Coordinator, it interactions.Interaction) error {
			if len(c.CancelPending("c", "/stop")) != 1 {
				return errors.New("nothing cancelled")
			}
			return nil
		}, "", interactions.StatusCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A fixed clock with a long timeout: the timer must not be
			// derived from the fake clock (it would fire at once).
			c, p := newCoord(t, interactions.WithClock(now), interactions.WithTimeout(time.Hour))
			done := request(t.Context(), c, tt.it)
			it := p.Next(t)
			assert.Equal(t, clock, it.AskedAt)
			require.NoError(t, tt.act(c, it))
			r := await(t, done)
			assert.Equal(t, tt.state, r.res.Status)
			assert.Equal(t, tt.by, r.res.By)
			assert.Equal(t, clock, r.res.At)
		})
	}

	t.Run("real clock", func(t *testing.T) {
		c, p := newCoord(t)
		before := time.Now()
		done := request(t.Context(), c, question("c", "Q?", "a", "b"))
		it := p.Next(t)
		_, err := c.Reply(it.ID, interactions.Reply{By: "alice", Answers: []string{"b"}})
		require.NoError(t, err)
		r := await(t, done)
		assert.False(t, r.res.At.Before(before))
		assert.False(t, r.res.At.Before(it.AskedAt))
		assert.False(t, r.res.At.After(time.Now()))
	})
}
