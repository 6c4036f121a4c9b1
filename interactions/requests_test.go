package interactions_test

import (
	"sync"
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
		mode     interactions.AnswerMode
	}{
		{"question", question("c", "Which database?", "Postgres", "SQLite", "MySQL"), []string{"Postgres", "SQLite", "MySQL"}, false, interactions.AnswerChoice},
		{"two-option question", question("c", "Which database?", "Postgres", "SQLite"), []string{"Postgres", "SQLite"}, false, interactions.AnswerChoice},
		{"multi-select question", multi("c", "Which features?", "Auth", "Search"), []string{"Auth", "Search"}, true, interactions.AnswerChoice},
		{"free-text question", question("c", "Name the project"), []string{}, false, interactions.AnswerText},
		{"plan review", planReview("c"), []string{"clean_edit", "edit", "default", "adjust"}, false, interactions.AnswerChoice},
		{"tool approval", toolApproval("c"), []string{"allow", "allow_session", "deny"}, false, interactions.AnswerApproval},
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
			assert.Equal(t, tt.mode, it.AnswerMode())
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

// Request returns the interaction as it was asked: its ID, who asked (from
// the context), when, its deadline and its options.
func TestRequestCompletesTheInteraction(t *testing.T) {
	c, p := newCoord(t, interactions.WithTimeout(time.Hour))
	ctx := interactions.WithAsker(t.Context(), "api")
	done := request(ctx, c, interactions.Interaction{ChatID: "c1", Kind: interactions.KindToolApproval, ToolName: "Bash", ToolSummary: "rm -rf build"})
	shown := p.Next(t)
	_, err := c.Reply(shown.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	r := await(t, done)
	require.NoError(t, r.err)

	assert.Equal(t, interactions.StatusAnswered, r.res.Status)
	assert.Equal(t, "u1", r.res.By)
	assert.Equal(t, shown.ID, r.it.ID)
	assert.Equal(t, "api", r.it.Asker)
	assert.False(t, r.it.AskedAt.IsZero())
	assert.Equal(t, r.it.AskedAt.Add(time.Hour), r.it.Deadline)
	assert.Equal(t, interactions.ToolOptions, r.it.Options)
	assert.Equal(t, shown, r.it, "what was shown is what Request returns")
}

// Many askers at once while other goroutines answer, type, toggle, cancel,
// list and let some expire: every request returns, and nothing stays
// pending (go test -race checks that no state is shared unguarded).
func TestRequestsUnderConcurrentReplies(t *testing.T) {
	c, p := newCoord(t, interactions.WithTimeout(2*time.Millisecond)) // some expire: a late timer too
	const askers, rounds = 8, 50
	var people sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		people.Go(func() { replyAnyhow(c, p, stop) })
	}
	var asking sync.WaitGroup
	for a := range askers {
		asking.Go(func() {
			for r := range rounds {
				it := question("chat"+string(rune('a'+a)), "Which?", "x", "y")
				it.MultiSelect = r%2 == 0
				if _, _, err := c.Request(t.Context(), it); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	asking.Wait()
	close(stop)
	people.Wait()
	assert.Empty(t, c.Pending(""))
}

// replyAnyhow answers what is shown one way or another until stop.
func replyAnyhow(c *interactions.Coordinator, p *fakePresenter, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case it := <-p.ch:
			switch it.ID[0] % 4 {
			case 0:
				_, _ = c.Reply(it.ID, interactions.Reply{By: "u", Answers: []string{it.Options[0].Label}})
			case 1:
				_, _, _ = c.ReplyText(it.ChatID, interactions.Reply{By: "u", Text: "because"})
			case 2:
				_, _ = c.Toggle(it.ID, it.Options[0].Label, interactions.Reply{By: "u"})
				c.CancelPending(it.ChatID, "gone")
			default:
				_ = c.Pending("")
				c.Cancel(it.ID, "withdrawn")
			}
		}
	}
}
