package interactions_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onlyAlice is an Authorize that lets alice, and nobody else, answer.
func onlyAlice(by string) func(interactions.Interaction) error {
	return func(it interactions.Interaction) error {
		if by != "alice" {
			return fmt.Errorf("%s may not decide %s", by, it.Kind)
		}
		return nil
	}
}

// authorizeCases are the ways to answer, each tried by someone refused.
var authorizeCases = []struct {
	name string
	it   interactions.Interaction
	try  func(c *interactions.Coordinator, it interactions.Interaction, by string) error
}{
	{"tap", toolApproval("c"), func(c *interactions.Coordinator, it interactions.Interaction, by string) error {
		_, err := c.Reply(it.ID, interactions.Reply{By: by, Answers: []string{"allow"}, Authorize: onlyAlice(by)})
		return err
	}},
	{"reject", toolApproval("c"), func(c *interactions.Coordinator, it interactions.Interaction, by string) error {
		_, err := c.Reply(it.ID, interactions.Reply{By: by, Reject: true, Authorize: onlyAlice(by)})
		return err
	}},
	{"text", planReview("c"), func(c *interactions.Coordinator, it interactions.Interaction, by string) error {
		_, _, err := c.ReplyText("c", interactions.Reply{By: by, Text: "no", Authorize: onlyAlice(by)})
		return err
	}},
	{"adjust", planReview("c"), func(c *interactions.Coordinator, it interactions.Interaction, by string) error {
		_, err := c.Reply(it.ID, interactions.Reply{By: by, Answers: []string{"adjust"}, Authorize: onlyAlice(by)})
		return err
	}},
	{"toggle", multi("c", "Q?", "a", "b"), func(c *interactions.Coordinator, it interactions.Interaction, by string) error {
		_, err := c.Toggle(it.ID, "a", interactions.Reply{By: by, Authorize: onlyAlice(by)})
		return err
	}},
}

// A reply Authorize refuses changes nothing; a later authorized one works.
func TestAuthorize(t *testing.T) {
	for _, tt := range authorizeCases {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newCoord(t)
			ch, stop := c.Subscribe()
			defer stop()
			done := request(t.Context(), c, tt.it)
			it := p.Next(t)
			eventsFor(t, ch, 1)

			err := tt.try(c, it, "mallory")
			require.ErrorIs(t, err, interactions.ErrUnauthorized)
			assert.Contains(t, err.Error(), "mallory may not decide")
			assert.False(t, interactions.IsStale(err))

			// Nothing changed: still pending, no event, nothing selected.
			notYet(t, done)
			got, ok := c.Get(it.ID)
			require.True(t, ok)
			assert.Equal(t, it, got)
			assert.Empty(t, c.Selected(it.ID))
			select {
			case e := <-ch:
				t.Fatalf("a refused reply published %+v", e)
			case <-time.After(20 * time.Millisecond):
			}

			// A later authorized reply works.
			require.NoError(t, tt.try(c, it, "alice"))
			if it.MultiSelect {
				require.NoError(t, c.Confirm(it.ID, interactions.Reply{By: "alice", Authorize: onlyAlice("alice")}))
			}
			if it.Kind == interactions.KindPlanReview {
				// "adjust" by alice waits for feedback; give it.
				if _, ok := c.Get(it.ID); ok {
					_, _, err := c.ReplyText("c", interactions.Reply{By: "alice", Text: "more", Authorize: onlyAlice("alice")})
					require.NoError(t, err)
				}
			}
			r := await(t, done)
			assert.Equal(t, "alice", r.res.By)
		})
	}
}

// A refused Confirm leaves the selection as it was.
func TestAuthorizeConfirm(t *testing.T) {
	c, p := newCoord(t)
	done := request(t.Context(), c, multi("c", "Q?", "a", "b"))
	it := p.Next(t)
	_, err := c.Toggle(it.ID, "b", interactions.Reply{By: "alice"})
	require.NoError(t, err)
	err = c.Confirm(it.ID, interactions.Reply{By: "mallory", Authorize: onlyAlice("mallory")})
	require.ErrorIs(t, err, interactions.ErrUnauthorized)
	notYet(t, done)
	assert.Equal(t, []string{"b"}, c.Selected(it.ID))
	require.NoError(t, c.Confirm(it.ID, interactions.Reply{By: "alice", Authorize: onlyAlice("alice")}))
	assert.Equal(t, "b", await(t, done).res.Answer)
}

// Authorize is given the interaction it decides on.
func TestAuthorizerSeesTheInteraction(t *testing.T) {
	c, p := newCoord(t)
	done := request(t.Context(), c, toolApproval("team"))
	it := p.Next(t)
	var seen interactions.Interaction
	_, err := c.Reply(it.ID, interactions.Reply{By: "alice", Answers: []string{"allow"}, Authorize: func(x interactions.Interaction) error {
		seen = x
		return nil
	}})
	require.NoError(t, err)
	await(t, done)
	assert.Equal(t, it.ID, seen.ID)
	assert.Equal(t, interactions.KindToolApproval, seen.Kind)
	assert.Equal(t, "team", seen.ChatID)
}
