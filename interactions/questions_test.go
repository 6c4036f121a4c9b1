package interactions_test

import (
	"testing"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// questionReplies are every way to answer (or fail to answer) one question:
// what the agent receives, or the error the person is given.
var questionReplies = []struct {
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

func TestQuestionReplies(t *testing.T) {
	for _, tt := range questionReplies {
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
