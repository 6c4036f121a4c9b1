package interactions_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
