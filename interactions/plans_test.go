package interactions_test

import (
	"fmt"
	"testing"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanReview(t *testing.T) {
	tests := []struct {
		name     string
		reply    interactions.Reply
		status   interactions.Status
		decision string
		text     string
	}{
		{"clean_edit", interactions.Reply{Answers: []string{"clean_edit"}}, interactions.StatusAnswered, interactions.DecisionCleanEdit, ""},
		{"edit", interactions.Reply{Answers: []string{"edit"}}, interactions.StatusAnswered, interactions.DecisionEdit, ""},
		{"default", interactions.Reply{Answers: []string{"default"}}, interactions.StatusAnswered, interactions.DecisionDefault, ""},
		{"adjust with feedback at once", interactions.Reply{Answers: []string{"adjust"}, Text: "use SQLite"}, interactions.StatusRejected, interactions.DecisionAdjust, "use SQLite"},
		{"typed text is adjust feedback", interactions.Reply{Text: "split step 2"}, interactions.StatusRejected, interactions.DecisionAdjust, "split step 2"},
		{"reject", interactions.Reply{Reject: true}, interactions.StatusRejected, interactions.DecisionReject, "The user rejected this request."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newCoord(t)
			done := request(t.Context(), c, planReview("c"))
			it := p.Next(t)
			tt.reply.By = "u7"
			out, err := c.Reply(it.ID, tt.reply)
			require.NoError(t, err)
			assert.Equal(t, interactions.Resolved, out)
			r := await(t, done)
			assert.Equal(t, tt.status, r.res.Status)
			assert.Equal(t, tt.decision, r.res.Decision)
			assert.Equal(t, tt.text, r.res.Text)
			assert.Equal(t, "u7", r.res.By)
			assert.Empty(t, c.Pending("c"))
		})
	}

	t.Run("typed text in the chat", func(t *testing.T) {
		c, p := newCoord(t)
		done := request(t.Context(), c, planReview("c"))
		it := p.Next(t)
		got, out, err := c.ReplyText("c", interactions.Reply{By: "u7", Text: "add a rollback step"})
		require.NoError(t, err)
		assert.Equal(t, interactions.Resolved, out)
		assert.Equal(t, it.ID, got.ID)
		r := await(t, done)
		assert.Equal(t, interactions.StatusRejected, r.res.Status)
		assert.Equal(t, interactions.DecisionAdjust, r.res.Decision)
		assert.Equal(t, "add a rollback step", r.res.Text)
	})

	t.Run("two decisions refused", func(t *testing.T) {
		c, p := newCoord(t)
		done := request(t.Context(), c, planReview("c"))
		it := p.Next(t)
		_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"edit", "default"}})
		require.ErrorIs(t, err, interactions.ErrInvalidReply)
		_, err = c.Reply(it.ID, interactions.Reply{Answers: []string{"approve"}})
		require.ErrorIs(t, err, interactions.ErrInvalidReply)
		assert.Contains(t, err.Error(), `"clean_edit", "edit", "default", "adjust"`)
		notYet(t, done)
		_, err = c.Reply(it.ID, interactions.Reply{Answers: []string{"edit"}})
		require.NoError(t, err)
		assert.Equal(t, interactions.DecisionEdit, await(t, done).res.Decision)
	})
}

func TestPlanReviewAdjustInTwoSteps(t *testing.T) {
	for _, viaTap := range []bool{false, true} {
		t.Run(fmt.Sprintf("feedback by tap+text=%v", viaTap), func(t *testing.T) {
			c, p := newCoord(t)
			ch, stop := c.Subscribe()
			defer stop()
			done := request(t.Context(), c, planReview("c"))
			it := p.Next(t)
			eventsFor(t, ch, 1)

			out, err := c.Reply(it.ID, interactions.Reply{By: "u1", Answers: []string{"adjust"}})
			require.NoError(t, err)
			assert.Equal(t, interactions.AwaitingFeedback, out)

			// Still pending, and observers are told it waits for feedback.
			notYet(t, done)
			_, ok := c.Get(it.ID)
			require.True(t, ok)
			ev := eventsFor(t, ch, 1)[0]
			assert.Equal(t, interactions.EventUpdated, ev.Type)
			assert.Equal(t, it.ID, ev.Interaction.ID)
			assert.True(t, ev.AwaitingFeedback)

			// A second adjust tap changes nothing and says the same.
			out, err = c.Reply(it.ID, interactions.Reply{By: "u1", Answers: []string{"adjust"}})
			require.NoError(t, err)
			assert.Equal(t, interactions.AwaitingFeedback, out)

			if viaTap {
				out, err = c.Reply(it.ID, interactions.Reply{By: "u2", Answers: []string{"adjust"}, Text: "fewer steps"})
			} else {
				var got interactions.Interaction
				got, out, err = c.ReplyText("c", interactions.Reply{By: "u2", Text: "fewer steps"})
				assert.Equal(t, it.ID, got.ID)
			}
			require.NoError(t, err)
			assert.Equal(t, interactions.Resolved, out)
			r := await(t, done)
			assert.Equal(t, interactions.StatusRejected, r.res.Status)
			assert.Equal(t, interactions.DecisionAdjust, r.res.Decision)
			assert.Equal(t, "fewer steps", r.res.Text)
			assert.Equal(t, "u2", r.res.By)

			ev = eventsFor(t, ch, 1)[0]
			assert.Equal(t, interactions.EventResolved, ev.Type, "the repeated adjust tap published nothing more")
		})
	}
}

// After adjust was tapped, an approval still resolves the plan review.
func TestPlanReviewAdjustThenApprove(t *testing.T) {
	c, p := newCoord(t)
	done := request(t.Context(), c, planReview("c"))
	it := p.Next(t)
	out, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"adjust"}})
	require.NoError(t, err)
	require.Equal(t, interactions.AwaitingFeedback, out)
	out, err = c.Reply(it.ID, interactions.Reply{Answers: []string{"default"}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
	r := await(t, done)
	assert.Equal(t, interactions.StatusAnswered, r.res.Status)
	assert.Equal(t, interactions.DecisionDefault, r.res.Decision)
}

// Feedback text goes to the plan review waiting for it, not to an older
// question in the same chat.
func TestPlanReviewFeedbackText(t *testing.T) {
	c, p := newCoord(t)
	q := request(t.Context(), c, question("c", "Which database?", "Postgres", "SQLite"))
	p.Next(t)
	plan := request(t.Context(), c, planReview("c"))
	it := p.Next(t)
	out, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"adjust"}})
	require.NoError(t, err)
	require.Equal(t, interactions.AwaitingFeedback, out)

	got, out, err := c.ReplyText("c", interactions.Reply{Text: "drop step 3"})
	require.NoError(t, err)
	assert.Equal(t, it.ID, got.ID)
	assert.Equal(t, interactions.Resolved, out)
	assert.Equal(t, "drop step 3", await(t, plan).res.Text)
	notYet(t, q)
}
