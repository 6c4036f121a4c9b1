package interactions_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// selJournal records what the coordinator journals.
type selJournal struct {
	mu       sync.Mutex
	selected map[string][]string
	resolved []string
}

func (j *selJournal) Requested(context.Context, interactions.Interaction) error { return nil }
func (j *selJournal) Presented(context.Context, string, string) error           { return nil }
func (j *selJournal) Resolved(_ context.Context, it interactions.Interaction, _ interactions.Resolution) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.resolved = append(j.resolved, it.ID)
	return nil
}

func (j *selJournal) Selected(_ context.Context, id string, labels []string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.selected[id] = slices.Clone(labels)
	return nil
}

func (j *selJournal) get(id string) ([]string, []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.selected[id], slices.Clone(j.resolved)
}

func restore(t *testing.T, ctx context.Context, c *interactions.Coordinator, r interactions.Restored) <-chan interactions.Resolution {
	t.Helper()
	ch, err := c.Restore(ctx, r)
	require.NoError(t, err)
	return ch
}

func waitPending(t *testing.T, c *interactions.Coordinator, id string) interactions.Interaction {
	t.Helper()
	var it interactions.Interaction
	require.Eventually(t, func() bool {
		var ok bool
		it, ok = c.Get(id)
		return ok
	}, wait, time.Millisecond, "%s is not pending", id)
	return it
}

// A restored multi-select question is one pending interaction like any
// other: it keeps its ID and its journaled selection, toggles are
// journaled, Done answers with every checked option, a tap from another
// chat is refused, and its outcome is left to the caller to record.
func TestRestoreMultiSelect(t *testing.T) {
	j := &selJournal{selected: map[string][]string{}}
	c, p := newCoord(t, interactions.WithJournal(j), interactions.WithTimeout(time.Hour))
	ch, stop := c.Subscribe()
	defer stop()
	asked := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	old := multi("telegram:1", "Which checks?", "lint", "test", "vet")
	old.ID, old.AskedAt = "old1", asked
	done := restore(t, t.Context(), c, interactions.Restored{Interaction: old, Ref: "telegram:1:7", Selected: []string{"lint", "gone"}})

	it := waitPending(t, c, "old1")
	assert.Equal(t, asked, it.AskedAt, "asked when it was asked")
	assert.True(t, it.Restored)
	assert.True(t, it.Deadline.After(time.Now().Add(59*time.Minute)), "a fresh timeout from the restart: %s", it.Deadline)
	assert.Equal(t, []string{"lint"}, c.Selected("old1"), "the journaled selection, unknown labels dropped")
	assert.Empty(t, p.Shown(), "not presented again: its message exists")
	assert.Equal(t, []interactions.Interaction{it}, c.Pending("telegram:1"))

	fromChat := func(chat string) func(interactions.Interaction) error {
		return func(it interactions.Interaction) error {
			if it.ChatID != chat {
				return errors.New("this button belongs to another chat")
			}
			return nil
		}
	}
	_, err := c.Toggle("old1", "vet", interactions.Reply{By: "u", Authorize: fromChat("telegram:2")})
	require.ErrorIs(t, err, interactions.ErrUnauthorized)
	err = c.Confirm("old1", interactions.Reply{By: "u", Authorize: fromChat("telegram:2")})
	require.ErrorIs(t, err, interactions.ErrUnauthorized)

	sel, err := c.Toggle("old1", "vet", interactions.Reply{By: "u", Authorize: fromChat("telegram:1")})
	require.NoError(t, err)
	assert.Equal(t, []string{"lint", "vet"}, sel)
	journaled, _ := j.get("old1")
	assert.Equal(t, []string{"lint", "vet"}, journaled, "journaled before Toggle returns")

	require.NoError(t, c.Confirm("old1", interactions.Reply{By: "u", Authorize: fromChat("telegram:1")}))
	r := await(t, done)
	assert.Equal(t, interactions.StatusAnswered, r.Status)
	assert.Equal(t, "lint, vet", r.Answer)
	assert.Equal(t, "u", r.By)
	_, resolved := j.get("old1")
	assert.Empty(t, resolved, "the caller records a restored interaction's outcome")

	evs := eventsFor(t, ch, 3)
	assert.Equal(t, interactions.EventRequested, evs[0].Type)
	assert.Equal(t, interactions.EventUpdated, evs[1].Type)
	assert.Equal(t, "telegram:1:7", evs[1].Ref, "toggles edit the old message")
	assert.Equal(t, interactions.EventResolved, evs[2].Type)
	assert.Equal(t, "telegram:1:7", evs[2].Ref)

	_, err = c.Toggle("old1", "test", interactions.Reply{})
	assert.ErrorIs(t, err, interactions.ErrNotPending, "answered once")
}

// Typed text, /clear (CancelPending) and shutdown (Interrupt) reach a
// restored interaction as they reach a live one; its ID cannot be restored
// twice.
func TestRestoreIsLikeALiveInteraction(t *testing.T) {
	c, _ := newCoord(t)
	q := question("web:a", "Which database?", "Postgres", "SQLite")
	q.ID = "q1"
	dq := restore(t, t.Context(), c, interactions.Restored{Interaction: q})
	waitPending(t, c, "q1")
	_, err := c.Restore(t.Context(), interactions.Restored{Interaction: q})
	assert.ErrorIs(t, err, interactions.ErrInvalidReply, "the same ID twice")
	_, err = c.Restore(t.Context(), interactions.Restored{Interaction: question("web:a", "no id")})
	assert.ErrorIs(t, err, interactions.ErrInvalidReply)

	got, _, err := c.ReplyText("web:a", interactions.Reply{By: "u", Text: "MySQL"})
	require.NoError(t, err)
	assert.Equal(t, "q1", got.ID)
	assert.Equal(t, "MySQL", await(t, dq).Answer)

	tool := toolApproval("web:a")
	tool.ID = "t1"
	dt := restore(t, t.Context(), c, interactions.Restored{Interaction: tool})
	waitPending(t, c, "t1")
	assert.Len(t, c.CancelPending("web:a", "cleared"), 1)
	assert.Equal(t, interactions.StatusCancelled, await(t, dt).Status)

	plan := planReview("web:a")
	plan.ID = "p1"
	dp := restore(t, t.Context(), c, interactions.Restored{Interaction: plan})
	waitPending(t, c, "p1")
	c.Interrupt("stopping")
	assert.Equal(t, interactions.StatusInterrupted, await(t, dp).Status)
	_, err = c.Restore(t.Context(), interactions.Restored{Interaction: plan})
	assert.ErrorIs(t, err, interactions.ErrClosed)
}
