package interactions_test

import (
	"testing"
	"time"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPendingIndexedByIDAndChat(t *testing.T) {
	c, p := newCoord(t)
	ctx := t.Context()

	a := request(ctx, c, question("chat:1", "Which database?", "Postgres", "SQLite"))
	shownA := p.Next(t)
	b := request(ctx, c, toolApproval("chat:1"))
	shownB := p.Next(t)
	other := request(ctx, c, planReview("chat:2"))
	shownO := p.Next(t)

	// By ID: every interaction has its own ID, and Get finds it.
	ids := map[string]bool{shownA.ID: true, shownB.ID: true, shownO.ID: true}
	require.Len(t, ids, 3, "IDs must be distinct")
	for _, it := range []interactions.Interaction{shownA, shownB, shownO} {
		assert.NotEmpty(t, it.ID)
		got, ok := c.Get(it.ID)
		require.True(t, ok, it.ID)
		assert.Equal(t, it.ChatID, got.ChatID)
		assert.Equal(t, it.Kind, got.Kind)
	}
	_, ok := c.Get("nope")
	assert.False(t, ok)

	// By chat, oldest first; "" lists every chat.
	pend := c.Pending("chat:1")
	require.Len(t, pend, 2)
	assert.Equal(t, shownA.ID, pend[0].ID)
	assert.Equal(t, shownB.ID, pend[1].ID)
	assert.Len(t, c.Pending("chat:2"), 1)
	assert.Empty(t, c.Pending("chat:3"))
	assert.Len(t, c.Pending(""), 3)
	assert.Equal(t, 3, c.PendingCount())

	// Typed text goes to the chat's oldest pending interaction: the question.
	it, out, err := c.ReplyText("chat:1", interactions.Reply{By: "u1", Text: "MySQL"})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
	assert.Equal(t, shownA.ID, it.ID)
	ra := await(t, a)
	assert.Equal(t, "MySQL", ra.res.Answer)
	notYet(t, b)
	notYet(t, other)

	// The next text goes to the tool approval, now the oldest.
	it, _, err = c.ReplyText("chat:1", interactions.Reply{By: "u1", Text: "not now"})
	require.NoError(t, err)
	assert.Equal(t, shownB.ID, it.ID)
	rb := await(t, b)
	assert.Equal(t, interactions.StatusRejected, rb.res.Status)
	assert.Equal(t, "not now", rb.res.Text)

	// Nothing left in chat:1: text is not an answer there.
	_, _, err = c.ReplyText("chat:1", interactions.Reply{By: "u1", Text: "hello"})
	assert.ErrorIs(t, err, interactions.ErrNotFound)
	assert.Empty(t, c.Pending("chat:1"))
	_, ok = c.Get(shownA.ID)
	assert.False(t, ok, "a resolved interaction is removed from the ID index")

	// chat:2's plan review was untouched by chat:1's text.
	got, ok := c.Get(shownO.ID)
	require.True(t, ok)
	assert.Equal(t, interactions.KindPlanReview, got.Kind)
	assert.Equal(t, 1, c.PendingCount())
}

func TestWhatTheUserIsShown(t *testing.T) {
	c, p := newCoord(t, interactions.WithTimeout(time.Hour))
	ctx := t.Context()

	tests := []struct {
		name     string
		it       interactions.Interaction
		wantOpts []string
		multi    bool
		mode     interactions.Mode
	}{
		{"question", question("c", "Which database?", "Postgres", "SQLite", "MySQL"), []string{"Postgres", "SQLite", "MySQL"}, false, interactions.ModeChoice},
		{"two-option question", question("c", "Which database?", "Postgres", "SQLite"), []string{"Postgres", "SQLite"}, false, interactions.ModeChoice},
		{"multi-select question", multi("c", "Which features?", "Auth", "Search"), []string{"Auth", "Search"}, true, interactions.ModeChoice},
		{"free-text question", question("c", "Name the project"), []string{}, false, interactions.ModeText},
		{"plan review", planReview("c"), []string{"clean_edit", "edit", "default", "adjust"}, false, interactions.ModeChoice},
		{"tool approval", toolApproval("c"), []string{"allow", "allow_session", "deny"}, false, interactions.ModeApproval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := request(ctx, c, tt.it)
			it := p.Next(t)
			labels := []string{}
			for _, o := range it.Options {
				labels = append(labels, o.Label)
				assert.NotEmpty(t, o.Description, "option %q has no description", o.Label)
			}
			assert.Equal(t, tt.wantOpts, labels)
			assert.Equal(t, tt.multi, it.MultiSelect)
			assert.Equal(t, tt.mode, it.Mode())
			assert.Equal(t, tt.it.Question, it.Question)
			assert.Equal(t, tt.it.Plan, it.Plan)
			assert.Equal(t, tt.it.ToolSummary, it.ToolSummary)
			assert.False(t, it.AskedAt.IsZero())
			assert.Equal(t, it.AskedAt.Add(time.Hour), it.Deadline, "the deadline shown is asked-at plus the timeout")
			_, err := c.Reply(it.ID, interactions.Reply{Reject: true})
			require.NoError(t, err)
			await(t, done)
		})
	}
}

func TestNoTimeoutMeansNoDeadline(t *testing.T) {
	c, p := newCoord(t)
	done := request(t.Context(), c, question("c", "Ready?", "yes", "no"))
	it := p.Next(t)
	assert.True(t, it.Deadline.IsZero())
	assert.Zero(t, c.Timeout())
	_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"yes"}})
	require.NoError(t, err)
	assert.Equal(t, "yes", await(t, done).res.Answer)
}

func TestRequestRefusesBadInteractions(t *testing.T) {
	c, p := newCoord(t)
	tests := []struct {
		name   string
		it     interactions.Interaction
		errHas string
	}{
		{"no chat", interactions.Interaction{Kind: interactions.KindQuestion, Question: "Q?"}, "no chat ID"},
		{"no question text", question("c", "  ", "a", "b"), "needs text"},
		{"unknown kind", interactions.Interaction{ChatID: "c", Kind: "poll"}, `"poll" (accepted: question, plan_review, tool_approval)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := c.Request(t.Context(), tt.it)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.errHas)
		})
	}
	p.NothingShown(t)
	assert.Zero(t, c.PendingCount())
}
