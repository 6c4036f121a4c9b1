package interactions_test

import (
	"testing"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStaleTaps(t *testing.T) {
	c, p := newCoord(t)
	ctx := t.Context()
	done := request(ctx, c, question("c", "Q1?", "x", "y"))
	old := p.Next(t)
	_, err := c.Reply(old.ID, interactions.Reply{Answers: []string{"x"}})
	require.NoError(t, err)
	await(t, done)

	// A new interaction waits in the same chat: stale taps must not reach it.
	next := request(ctx, c, question("c", "Q2?", "x", "y"))
	cur := p.Next(t)

	tests := []struct {
		name    string
		id      string
		wantErr error
	}{
		{"resolved", old.ID, interactions.ErrNotPending},
		{"unknown", "zzzzzzzz", interactions.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replies := map[string]func() error{
				"tap": func() error {
					_, err := c.Reply(tt.id, interactions.Reply{Answers: []string{"y"}})
					return err
				},
				"tap with text": func() error {
					_, err := c.Reply(tt.id, interactions.Reply{Text: "typed"})
					return err
				},
				"reject": func() error {
					_, err := c.Reply(tt.id, interactions.Reply{Reject: true})
					return err
				},
				"toggle": func() error {
					_, err := c.Toggle(tt.id, "x", interactions.Reply{})
					return err
				},
				"confirm": func() error { return c.Confirm(tt.id, interactions.Reply{}) },
			}
			for name, f := range replies {
				err := f()
				require.ErrorIs(t, err, tt.wantErr, name)
				other := interactions.ErrNotFound
				if tt.wantErr == interactions.ErrNotFound {
					other = interactions.ErrNotPending
				}
				assert.NotErrorIs(t, err, other, "%s: the two stale errors are distinct", name)
				assert.True(t, interactions.IsStale(err), name)
				assert.NotErrorIs(t, err, interactions.ErrInvalidReply)
			}
		})
	}
	// The pending question was never answered by any of it.
	notYet(t, next)
	got, ok := c.Get(cur.ID)
	require.True(t, ok)
	assert.Equal(t, "Q2?", got.Question)
	assert.False(t, interactions.IsStale(interactions.ErrInvalidReply))
	assert.False(t, interactions.IsStale(nil))
}
