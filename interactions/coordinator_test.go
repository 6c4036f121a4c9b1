package interactions_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
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

// TestQuestionReplies covers every way to answer (or fail to answer) one
// question: what the agent receives, or the error the person is given.
func TestQuestionReplies(t *testing.T) {
	tests := []struct {
		name    string
		it      interactions.Interaction
		toggle  []string // multi-select taps before the reply
		confirm bool     // finish with Confirm instead of Reply
		reply   interactions.Reply
		wantErr error
		errHas  []string
		status  interactions.Status
		answer  string
		text    string
	}{
		{name: "option tap", it: question("c", "Which database?", "Postgres", "SQLite"),
			reply: interactions.Reply{Answers: []string{"SQLite"}}, status: interactions.StatusAnswered, answer: "SQLite"},
		{name: "typed text is the free-text Other answer", it: question("c", "Which database?", "Postgres", "SQLite"),
			reply: interactions.Reply{Text: "  CockroachDB  "}, status: interactions.StatusAnswered, answer: "CockroachDB"},
		{name: "free-text question", it: question("c", "Name the project"),
			reply: interactions.Reply{Text: "leashd"}, status: interactions.StatusAnswered, answer: "leashd"},
		{name: "multi-select toggles and confirm, in option order", it: multi("c", "Features?", "Auth", "Search", "Billing", "Admin"),
			toggle: []string{"Admin", "Auth", "Billing"}, confirm: true, status: interactions.StatusAnswered, answer: "Auth, Billing, Admin"},
		{name: "multi-select toggled twice is off again", it: multi("c", "Features?", "Auth", "Search", "Billing"),
			toggle: []string{"Search", "Auth", "Search"}, confirm: true, status: interactions.StatusAnswered, answer: "Auth"},
		{name: "multi-select answered in one reply", it: multi("c", "Features?", "Auth", "Search", "Billing"),
			reply: interactions.Reply{Answers: []string{"Billing", "Auth"}}, status: interactions.StatusAnswered, answer: "Auth, Billing"},
		{name: "multi-select answered by text", it: multi("c", "Features?", "Auth", "Search"),
			reply: interactions.Reply{Text: "all of them"}, status: interactions.StatusAnswered, answer: "all of them"},
		{name: "single-select refuses two answers", it: question("c", "Which database?", "Postgres", "SQLite"),
			reply: interactions.Reply{Answers: []string{"Postgres", "SQLite"}}, wantErr: interactions.ErrInvalidReply, errHas: []string{"takes one option", "Which database?"}},
		{name: "unknown label names the accepted labels", it: question("c", "Which database?", "Postgres", "SQLite"),
			reply: interactions.Reply{Answers: []string{"Oracle"}}, wantErr: interactions.ErrInvalidReply, errHas: []string{`"Oracle"`, `"Postgres"`, `"SQLite"`}},
		{name: "labels are exact", it: question("c", "Which database?", "Postgres", "SQLite"),
			reply: interactions.Reply{Answers: []string{"postgres"}}, wantErr: interactions.ErrInvalidReply, errHas: []string{`"postgres"`, `"Postgres"`}},
		{name: "empty reply", it: question("c", "Which database?", "Postgres", "SQLite"),
			reply: interactions.Reply{Text: "   "}, wantErr: interactions.ErrInvalidReply, errHas: []string{"option, text, or reject"}},
		{name: "confirm with nothing toggled", it: multi("c", "Features?", "Auth", "Search"),
			confirm: true, wantErr: interactions.ErrInvalidReply, errHas: []string{"select at least one"}},
		{name: "confirm on a single-select question", it: question("c", "Which database?", "Postgres", "SQLite"),
			confirm: true, wantErr: interactions.ErrInvalidReply, errHas: []string{"multi-select"}},
		{name: "reject", it: question("c", "Which database?", "Postgres", "SQLite"),
			reply: interactions.Reply{Reject: true}, status: interactions.StatusRejected, text: "The user rejected this request."},
		{name: "reject with a reason", it: question("c", "Which database?", "Postgres", "SQLite"),
			reply: interactions.Reply{Reject: true, Text: "stop asking"}, status: interactions.StatusRejected, text: "stop asking"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newCoord(t)
			done := request(t.Context(), c, tt.it)
			it := p.Next(t)
			for _, l := range tt.toggle {
				_, err := c.Toggle(it.ID, l, interactions.Reply{By: "u1"})
				require.NoError(t, err)
			}
			tt.reply.By = "u1"
			var err error
			if tt.confirm {
				err = c.Confirm(it.ID, tt.reply)
			} else {
				var out interactions.Outcome
				out, err = c.Reply(it.ID, tt.reply)
				if err == nil {
					assert.Equal(t, interactions.Resolved, out)
				}
			}
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				for _, s := range tt.errHas {
					assert.Contains(t, err.Error(), s)
				}
				// Nothing changed: it still waits, and a valid answer works.
				notYet(t, done)
				_, still := c.Get(it.ID)
				require.True(t, still)
				_, err = c.Reply(it.ID, interactions.Reply{By: "u1", Reject: true})
				require.NoError(t, err)
				assert.Equal(t, interactions.StatusRejected, await(t, done).res.Status)
				return
			}
			require.NoError(t, err)
			r := await(t, done)
			require.NoError(t, r.err)
			assert.Equal(t, it.ID, r.it.ID)
			assert.Equal(t, tt.status, r.res.Status)
			assert.Equal(t, tt.answer, r.res.Answer)
			assert.Equal(t, tt.text, r.res.Text)
			assert.Equal(t, "u1", r.res.By)
			assert.Equal(t, tt.status == interactions.StatusAnswered, r.res.Approved())
		})
	}
}

func TestToggle(t *testing.T) {
	c, p := newCoord(t)
	ch, stop := c.Subscribe()
	defer stop()
	done := request(t.Context(), c, multi("c", "Features?", "Auth", "Search", "Billing"))
	it := p.Next(t)
	eventsFor(t, ch, 1) // requested

	sel, err := c.Toggle(it.ID, "Billing", interactions.Reply{By: "u1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"Billing"}, sel)
	sel, err = c.Toggle(it.ID, "Auth", interactions.Reply{By: "u1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"Auth", "Billing"}, sel, "selection is in option order")
	assert.Equal(t, []string{"Auth", "Billing"}, c.Selected(it.ID))

	// Observers see every change (to redraw the checkboxes).
	evs := eventsFor(t, ch, 2)
	for i, want := range [][]string{{"Billing"}, {"Auth", "Billing"}} {
		assert.Equal(t, interactions.EventUpdated, evs[i].Type)
		assert.Equal(t, it.ID, evs[i].Interaction.ID)
		assert.Equal(t, want, evs[i].Selected)
	}

	_, err = c.Toggle(it.ID, "Nope", interactions.Reply{})
	require.ErrorIs(t, err, interactions.ErrInvalidReply)
	assert.Contains(t, err.Error(), `"Search"`)
	assert.Equal(t, []string{"Auth", "Billing"}, c.Selected(it.ID), "a bad toggle changes nothing")

	require.NoError(t, c.Confirm(it.ID, interactions.Reply{By: "u2"}))
	r := await(t, done)
	assert.Equal(t, "Auth, Billing", r.res.Answer)
	assert.Equal(t, "u2", r.res.By)

	_, err = c.Toggle(it.ID, "Search", interactions.Reply{})
	assert.ErrorIs(t, err, interactions.ErrNotPending)
	assert.Nil(t, c.Selected(it.ID))

	// Toggle on a single-select question is refused.
	done = request(t.Context(), c, question("c", "One?", "a", "b"))
	it = p.Next(t)
	_, err = c.Toggle(it.ID, "a", interactions.Reply{})
	require.ErrorIs(t, err, interactions.ErrInvalidReply)
	assert.Contains(t, err.Error(), "not a multi-select")
	_, err = c.Reply(it.ID, interactions.Reply{Answers: []string{"a"}})
	require.NoError(t, err)
	assert.Equal(t, "a", await(t, done).res.Answer)
}

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

	t.Run("approve after adjust was tapped", func(t *testing.T) {
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
	})

	t.Run("feedback text goes to the plan waiting for it, not an older question", func(t *testing.T) {
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
	})
}

func TestToolApproval(t *testing.T) {
	tests := []struct {
		name     string
		text     bool // send as typed text in the chat
		reply    interactions.Reply
		status   interactions.Status
		decision string
		reason   string
	}{
		{"allow", false, interactions.Reply{Answers: []string{"allow"}}, interactions.StatusAnswered, interactions.DecisionAllow, ""},
		{"allow_session", false, interactions.Reply{Answers: []string{"allow_session"}}, interactions.StatusAnswered, interactions.DecisionAllowSession, ""},
		{"deny", false, interactions.Reply{Answers: []string{"deny"}}, interactions.StatusRejected, interactions.DecisionDeny, "The user denied this tool call."},
		{"deny with a reason", false, interactions.Reply{Answers: []string{"deny"}, Text: "use make clean"}, interactions.StatusRejected, interactions.DecisionDeny, "use make clean"},
		{"typed text denies with that reason", true, interactions.Reply{Text: "not on main"}, interactions.StatusRejected, interactions.DecisionDeny, "not on main"},
		{"reject", false, interactions.Reply{Reject: true}, interactions.StatusRejected, interactions.DecisionReject, "The user rejected this request."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newCoord(t)
			done := request(t.Context(), c, toolApproval("c"))
			it := p.Next(t)
			assert.Equal(t, "Bash", it.ToolName)
			assert.JSONEq(t, `{"command":"rm -rf build"}`, string(it.ToolInput))
			tt.reply.By = "u3"
			var err error
			if tt.text {
				_, _, err = c.ReplyText("c", tt.reply)
			} else {
				_, err = c.Reply(it.ID, tt.reply)
			}
			require.NoError(t, err)
			r := await(t, done)
			assert.Equal(t, tt.status, r.res.Status)
			assert.Equal(t, tt.decision, r.res.Decision)
			assert.Equal(t, tt.reason, r.res.Text)
			assert.Equal(t, "u3", r.res.By)
		})
	}

	t.Run("unknown decision", func(t *testing.T) {
		c, p := newCoord(t)
		done := request(t.Context(), c, toolApproval("c"))
		it := p.Next(t)
		_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"yes"}})
		require.ErrorIs(t, err, interactions.ErrInvalidReply)
		assert.Contains(t, err.Error(), `(accepted: "allow", "allow_session", "deny")`)
		_, err = c.Reply(it.ID, interactions.Reply{Answers: []string{"allow", "deny"}})
		require.ErrorIs(t, err, interactions.ErrInvalidReply)
		notYet(t, done)
	})
}

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

func TestAuthorize(t *testing.T) {
	onlyAlice := func(by string) func(interactions.Interaction) error {
		return func(it interactions.Interaction) error {
			if by != "alice" {
				return fmt.Errorf("%s may not decide %s", by, it.Kind)
			}
			return nil
		}
	}
	tests := []struct {
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
	for _, tt := range tests {
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

	t.Run("confirm", func(t *testing.T) {
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
	})

	t.Run("the authorizer sees the interaction", func(t *testing.T) {
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
	})
}

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

func TestContextCancellation(t *testing.T) {
	c, p := newCoord(t)
	ctx, cancel := context.WithCancel(t.Context())
	ch, stop := c.Subscribe()
	defer stop()
	done := request(ctx, c, toolApproval("c"))
	it := p.Next(t)
	cancel()
	r := await(t, done)
	require.NoError(t, r.err)
	assert.Equal(t, interactions.StatusCancelled, r.res.Status)
	assert.Contains(t, r.res.Text, "cancelled")
	assert.Empty(t, c.Pending("c"))
	evs := eventsFor(t, ch, 2)
	assert.Equal(t, interactions.StatusCancelled, evs[1].Resolution.Status)
	assert.Equal(t, refOf(it), evs[1].Ref)
	_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"allow"}})
	require.ErrorIs(t, err, interactions.ErrNotPending)
	assert.Contains(t, err.Error(), "cancelled")
}

func TestCancelPendingOnlyThatChat(t *testing.T) {
	c, p := newCoord(t)
	ctx := t.Context()
	a1 := request(ctx, c, question("a", "Q1?", "x", "y"))
	p.Next(t)
	a2 := request(ctx, c, toolApproval("a"))
	p.Next(t)
	b := request(ctx, c, planReview("b"))
	itB := p.Next(t)

	got := c.CancelPending("a", "The chat was cleared.")
	require.Len(t, got, 2)
	assert.Equal(t, "Q1?", got[0].Question, "oldest first")
	assert.Equal(t, interactions.KindToolApproval, got[1].Kind)
	for _, ch := range []<-chan result{a1, a2} {
		r := await(t, ch)
		assert.Equal(t, interactions.StatusCancelled, r.res.Status)
		assert.Equal(t, "The chat was cleared.", r.res.Text)
	}
	notYet(t, b)
	assert.Empty(t, c.CancelPending("a", "again"), "nothing left to cancel")
	assert.Empty(t, c.CancelPending("nobody", "x"))

	// Cancel one by ID.
	assert.True(t, c.Cancel(itB.ID, "The agent withdrew the request."))
	r := await(t, b)
	assert.Equal(t, interactions.StatusCancelled, r.res.Status)
	assert.Equal(t, "The agent withdrew the request.", r.res.Text)
	assert.False(t, c.Cancel(itB.ID, "twice"))
	assert.False(t, c.Cancel("unknown", "x"))
}

func TestInterrupt(t *testing.T) {
	c, p := newCoord(t)
	ctx := t.Context()
	a := request(ctx, c, question("a", "Q1?", "x", "y"))
	p.Next(t)
	b := request(ctx, c, toolApproval("b"))
	p.Next(t)

	got := c.Interrupt("leashd is shutting down")
	assert.Len(t, got, 2)
	for _, ch := range []<-chan result{a, b} {
		r := await(t, ch)
		require.NoError(t, r.err)
		assert.Equal(t, interactions.StatusInterrupted, r.res.Status)
		assert.Equal(t, "leashd is shutting down", r.res.Text)
	}
	assert.Zero(t, c.PendingCount())

	// New requests are refused without being shown.
	r := await(t, request(ctx, c, question("a", "Q2?", "x", "y")))
	require.ErrorIs(t, r.err, interactions.ErrClosed)
	_, err := c.Ask(ctx, "a", []interactions.Question{{Question: "Q3?"}})
	require.ErrorIs(t, err, interactions.ErrClosed)
	p.NothingShown(t)
	assert.Len(t, p.Shown(), 2)
	assert.Empty(t, c.Interrupt("again"))
}

// At shutdown a subscriber stops right after Interrupt; Wait makes sure it
// has been sent every interrupted interaction's resolved event first (each
// is published by its own Request call as it returns), so no chat misses
// its "leashd restarted" edit.
func TestWaitAfterInterruptDeliversEveryResolvedEvent(t *testing.T) {
	c, p := newCoord(t)
	ctx := t.Context()
	events, stop := c.Subscribe()
	const n = 50
	for i := range n {
		request(ctx, c, question(fmt.Sprintf("chat-%d", i), "Q?", "x", "y"))
		p.Next(t)
	}
	require.Len(t, c.Interrupt("restarting"), n)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	require.NoError(t, c.Wait(wctx))
	stop()
	interrupted := 0
	for ev := range events {
		if ev.Type == interactions.EventResolved && ev.Resolution.Status == interactions.StatusInterrupted {
			interrupted++
		}
	}
	assert.Equal(t, n, interrupted)
}

// Wait gives up when its context ends while a request is still being
// resolved, saying so.
func TestWaitIsBoundedByItsContext(t *testing.T) {
	c, p := newCoord(t)
	release := make(chan struct{})
	defer close(release)
	j := &blockingJournal{release: release}
	c = interactions.New(interactions.WithPresenter(p), interactions.WithJournal(j))
	request(t.Context(), c, question("a", "Q?", "x", "y"))
	p.Next(t)
	c.Interrupt("restarting") // the Request now blocks writing its resolution
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := c.Wait(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "interactions still being resolved")
}

// blockingJournal holds every Resolved write until released.
type blockingJournal struct{ release chan struct{} }

func (blockingJournal) Requested(context.Context, interactions.Interaction) error { return nil }
func (blockingJournal) Presented(context.Context, string, string) error           { return nil }
func (j *blockingJournal) Resolved(context.Context, interactions.Interaction, interactions.Resolution) error {
	<-j.release
	return nil
}

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

func TestRegisteredBeforePresent(t *testing.T) {
	t.Run("a tap from inside Present resolves it", func(t *testing.T) {
		p := newPresenter()
		c := interactions.New(interactions.WithPresenter(p))
		t.Cleanup(func() { c.Interrupt("test over") })
		var tapErr error
		p.OnPresent = func(ctx context.Context, it *interactions.Interaction) (string, error) {
			// The fastest possible tap: before the message is even sent.
			_, tapErr = c.Reply(it.ID, interactions.Reply{By: "fast", Answers: []string{"allow"}})
			return refOf(*it), nil
		}
		ch, stop := c.Subscribe()
		defer stop()
		r := await(t, request(t.Context(), c, toolApproval("c")))
		require.NoError(t, tapErr)
		assert.Equal(t, interactions.StatusAnswered, r.res.Status)
		assert.Equal(t, interactions.DecisionAllow, r.res.Decision)
		assert.Equal(t, "fast", r.res.By)
		evs := eventsFor(t, ch, 2)
		assert.Equal(t, refOf(r.it), evs[1].Ref)
	})

	t.Run("a tap while Present blocks", func(t *testing.T) {
		p := newPresenter()
		c := interactions.New(interactions.WithPresenter(p))
		t.Cleanup(func() { c.Interrupt("test over") })
		entered := make(chan interactions.Interaction)
		release := make(chan struct{})
		p.OnPresent = func(ctx context.Context, it *interactions.Interaction) (string, error) {
			entered <- *it
			<-release // the send is slow
			return refOf(*it), nil
		}
		done := request(t.Context(), c, question("c", "Q?", "x", "y"))
		it := await(t, entered)
		// Pending and findable both ways while the send is in flight.
		_, ok := c.Get(it.ID)
		require.True(t, ok)
		require.Len(t, c.Pending("c"), 1)
		_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"y"}})
		require.NoError(t, err)
		notYet(t, done) // the send has not returned yet
		close(release)
		assert.Equal(t, "y", await(t, done).res.Answer)
	})

	t.Run("typed text while Present blocks", func(t *testing.T) {
		p := newPresenter()
		c := interactions.New(interactions.WithPresenter(p))
		t.Cleanup(func() { c.Interrupt("test over") })
		entered := make(chan struct{})
		release := make(chan struct{})
		p.OnPresent = func(ctx context.Context, it *interactions.Interaction) (string, error) {
			close(entered)
			<-release
			return refOf(*it), nil
		}
		done := request(t.Context(), c, planReview("c"))
		<-entered
		_, _, err := c.ReplyText("c", interactions.Reply{Text: "smaller"})
		require.NoError(t, err)
		close(release)
		assert.Equal(t, "smaller", await(t, done).res.Text)
	})
}

// A Present that fails is never an answer: the interaction stays pending
// and answerable (the web page, the API), Present is retried in the
// background until it succeeds, and the operator is told.
func TestPresentFailure(t *testing.T) {
	var mu sync.Mutex
	attempts := []int{}
	failing := true
	p := newPresenter()
	p.OnPresent = func(ctx context.Context, it *interactions.Interaction) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		attempts = append(attempts, interactions.PresentAttempt(ctx))
		if failing {
			return "", errors.New("telegram: 502 Bad Gateway")
		}
		return refOf(*it), nil
	}
	var logs syncBuf
	c := interactions.New(interactions.WithPresenter(p), interactions.WithPresentRetry(time.Millisecond, 5*time.Millisecond),
		interactions.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	t.Cleanup(func() { c.Interrupt("test over") })
	ch, stop := c.Subscribe()
	defer stop()
	done := request(t.Context(), c, toolApproval("c"))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(attempts) >= 3 }, wait, time.Millisecond,
		"Present is retried")
	require.Equal(t, 1, c.PendingCount(), "still pending after failed attempts")
	assert.Contains(t, logs.String(), "level=ERROR msg=\"presenting interaction failed")
	assert.Contains(t, logs.String(), "502 Bad Gateway")
	mu.Lock()
	assert.Equal(t, []int{1, 2, 3}, attempts[:3])
	failing = false
	mu.Unlock()
	it := c.Pending("c")[0]
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "interaction shown after earlier attempts failed") }, wait, time.Millisecond)
	_, err := c.Reply(it.ID, interactions.Reply{By: "web", Answers: []string{"allow"}})
	require.NoError(t, err)
	r := await(t, done)
	assert.Equal(t, interactions.StatusAnswered, r.res.Status)
	evs := eventsFor(t, ch, 2)
	assert.Equal(t, interactions.EventResolved, evs[1].Type)
	assert.Equal(t, refOf(it), evs[1].Ref, "the message shown by the retry is edited")
	mu.Lock()
	n := len(attempts)
	mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	assert.Equal(t, n, len(attempts), "no attempt after it was shown")
	mu.Unlock()

	t.Run("failing for good: answered elsewhere, retries stop", func(t *testing.T) {
		var calls atomic.Int32
		p := newPresenter()
		p.OnPresent = func(context.Context, *interactions.Interaction) (string, error) {
			calls.Add(1)
			return "", errors.New("telegram: 400 Bad Request: chat not found")
		}
		c := interactions.New(interactions.WithPresenter(p), interactions.WithPresentRetry(time.Millisecond, 2*time.Millisecond))
		t.Cleanup(func() { c.Interrupt("test over") })
		done := request(t.Context(), c, toolApproval("c"))
		require.Eventually(t, func() bool { return calls.Load() >= 2 }, wait, time.Millisecond)
		it := c.Pending("c")[0]
		_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"deny"}, Text: "not now"})
		require.NoError(t, err)
		r := await(t, done)
		assert.Equal(t, interactions.StatusRejected, r.res.Status)
		assert.Equal(t, "not now", r.res.Text)
		time.Sleep(10 * time.Millisecond)
		n := calls.Load()
		time.Sleep(20 * time.Millisecond)
		assert.Equal(t, n, calls.Load(), "retries end with the interaction")
	})

	t.Run("no presenter", func(t *testing.T) {
		c := interactions.New()
		r := await(t, request(t.Context(), c, toolApproval("c")))
		require.NoError(t, r.err)
		assert.Equal(t, interactions.StatusCancelled, r.res.Status)
		assert.Contains(t, r.res.Text, "No chat connector")
		assert.Zero(t, c.PendingCount())
		// SetPresenter wires one later.
		p := newPresenter()
		c.SetPresenter(p)
		done := request(t.Context(), c, toolApproval("c"))
		it := p.Next(t)
		_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"allow"}})
		require.NoError(t, err)
		assert.Equal(t, interactions.StatusAnswered, await(t, done).res.Status)
	})
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

func TestJournalOrder(t *testing.T) {
	j := &fakeJournal{}
	p := newPresenter()
	c := interactions.New(interactions.WithPresenter(p), interactions.WithJournal(j))
	t.Cleanup(func() { c.Interrupt("test over") })
	p.OnPresent = func(ctx context.Context, it *interactions.Interaction) (string, error) {
		j.add("present " + it.ID)
		return refOf(*it), nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := request(ctx, c, toolApproval("c"))
	require.Eventually(t, func() bool { return c.PendingCount() == 1 }, wait, time.Millisecond)
	id := c.Pending("c")[0].ID
	require.Eventually(t, func() bool { return len(j.lines()) >= 3 }, wait, time.Millisecond)
	cancel() // the resolution must still be recorded with a done context
	r := await(t, done)
	assert.Equal(t, []string{
		"requested " + id + " tool_approval",
		"present " + id,
		"presented " + id + " msg-" + id,
		"resolved " + id + " cancelled",
	}, j.lines())
	assert.Equal(t, interactions.StatusCancelled, r.res.Status)
	assert.NoError(t, j.resolvedCtxErr, "Resolved is called with a live context")

	t.Run("journal errors do not stop the interaction", func(t *testing.T) {
		j := &fakeJournal{fail: true}
		c, p := newCoord(t, interactions.WithJournal(j))
		done := request(t.Context(), c, toolApproval("c"))
		it := p.Next(t)
		_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"allow"}})
		require.NoError(t, err)
		assert.Equal(t, interactions.StatusAnswered, await(t, done).res.Status)
		assert.Len(t, j.lines(), 3)
	})
}

type fakeJournal struct {
	fail           bool
	mu             sync.Mutex
	log            []string
	resolvedCtxErr error
}

func (j *fakeJournal) add(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.log = append(j.log, s)
}

func (j *fakeJournal) lines() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.log...)
}

func (j *fakeJournal) err() error {
	if j.fail {
		return errors.New("disk full")
	}
	return nil
}

func (j *fakeJournal) Requested(ctx context.Context, it interactions.Interaction) error {
	j.add("requested " + it.ID + " " + string(it.Kind))
	return j.err()
}

func (j *fakeJournal) Presented(ctx context.Context, id, ref string) error {
	j.add("presented " + id + " " + ref)
	return j.err()
}

func (j *fakeJournal) Resolved(ctx context.Context, it interactions.Interaction, res interactions.Resolution) error {
	j.mu.Lock()
	j.resolvedCtxErr = ctx.Err()
	j.mu.Unlock()
	j.add("resolved " + it.ID + " " + string(res.Status))
	return j.err()
}
