package interactions_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

func byOf(as []interactions.Approver) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.By
	}
	return out
}

// A plan review needing 2 approvals: one approval leaves it pending and
// published as "1 of 2", a repeat tap is refused and not counted, the
// second approver resolves it with their decision and both approvals.
func TestQuorumPlanReview(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	c, p := newCoord(t, interactions.WithClock(func() time.Time { return at }))
	ch, stop := c.Subscribe()
	defer stop()
	it := planReview("telegram:-5")
	it.Quorum = 2
	done := request(t.Context(), c, it)
	shown := p.Next(t)
	assert.Equal(t, 2, shown.Quorum)
	eventsFor(t, ch, 1) // requested

	out, err := c.Reply(shown.ID, interactions.Reply{By: "alice", Answers: []string{interactions.DecisionEdit}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Counted, out)
	ev := eventsFor(t, ch, 1)[0]
	assert.Equal(t, interactions.EventUpdated, ev.Type)
	assert.Equal(t, []string{"alice"}, byOf(ev.Approvals))
	assert.Equal(t, "msg-"+shown.ID, ev.Ref)
	assert.Equal(t, "1 of 2 approvals — @alice", interactions.QuorumText(ev.Interaction, ev.Approvals, func(s string) string { return "@" + s }))
	notYet(t, done)

	_, err = c.Reply(shown.ID, interactions.Reply{By: "alice", Answers: []string{interactions.DecisionDefault}})
	require.ErrorIs(t, err, interactions.ErrAlreadyApproved)
	assert.Contains(t, err.Error(), "1 of 2 approvals — alice")
	notYet(t, done)

	at = at.Add(time.Minute)
	out, err = c.Reply(shown.ID, interactions.Reply{By: "bob", Answers: []string{interactions.DecisionDefault}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
	r := await(t, done)
	assert.Equal(t, interactions.StatusAnswered, r.res.Status)
	assert.Equal(t, interactions.DecisionDefault, r.res.Decision, "the approval that completes the quorum decides how")
	assert.Equal(t, "bob", r.res.By)
	assert.Equal(t, []interactions.Approver{
		{By: "alice", At: at.Add(-time.Minute), Decision: interactions.DecisionEdit},
		{By: "bob", At: at, Decision: interactions.DecisionDefault},
	}, r.res.Approvals)
	ev = eventsFor(t, ch, 1)[0]
	assert.Equal(t, interactions.EventResolved, ev.Type)
	assert.Equal(t, []string{"alice", "bob"}, byOf(ev.Approvals))
}

// Any approver's deny, adjust (with feedback) or reject ends it at once,
// keeping the approvals given before.
func TestQuorumRejectsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		it    interactions.Interaction
		reply interactions.Reply
		want  string
	}{
		{"tool deny", toolApproval("slack:C1:1"), interactions.Reply{By: "bob", Answers: []string{interactions.DecisionDeny}, Text: "not on prod"}, interactions.DecisionDeny},
		{"plan adjust", planReview("slack:C1:1"), interactions.Reply{By: "bob", Answers: []string{interactions.DecisionAdjust}, Text: "add tests"}, interactions.DecisionAdjust},
		{"reject", planReview("slack:C1:1"), interactions.Reply{By: "bob", Reject: true}, interactions.DecisionReject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, p := newCoord(t)
			tc.it.Quorum = 3
			done := request(t.Context(), c, tc.it)
			shown := p.Next(t)
			approve := interactions.DecisionAllow
			if tc.it.Kind == interactions.KindPlanReview {
				approve = interactions.DecisionEdit
			}
			out, err := c.Reply(shown.ID, interactions.Reply{By: "alice", Answers: []string{approve}})
			require.NoError(t, err)
			require.Equal(t, interactions.Counted, out)
			out, err = c.Reply(shown.ID, tc.reply)
			require.NoError(t, err)
			assert.Equal(t, interactions.Resolved, out)
			r := await(t, done)
			assert.Equal(t, interactions.StatusRejected, r.res.Status)
			assert.Equal(t, tc.want, r.res.Decision)
			assert.Equal(t, "bob", r.res.By)
			assert.Equal(t, []string{"alice"}, byOf(r.res.Approvals))
		})
	}
}

// Typed text in the chat is a deny reason for a tool approval needing a
// quorum: it rejects at once.
func TestQuorumTypedDenyReason(t *testing.T) {
	c, p := newCoord(t)
	it := toolApproval("telegram:-9")
	it.Quorum = 2
	done := request(t.Context(), c, it)
	shown := p.Next(t)
	_, err := c.Reply(shown.ID, interactions.Reply{By: "alice", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	_, out, err := c.ReplyText("telegram:-9", interactions.Reply{By: "alice", Text: "wrong dir after all"})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
	r := await(t, done)
	assert.Equal(t, interactions.StatusRejected, r.res.Status)
	assert.Equal(t, "wrong dir after all", r.res.Text)
}

// Quorum 0 or 1, and questions, resolve on the first answer as before.
func TestQuorumOneAndQuestions(t *testing.T) {
	for _, tc := range []struct {
		it     interactions.Interaction
		answer string
	}{
		{planReview("c"), interactions.DecisionEdit},
		{func() interactions.Interaction { it := planReview("c"); it.Quorum = 1; return it }(), interactions.DecisionEdit},
		{func() interactions.Interaction { it := question("c", "Which?", "a", "b"); it.Quorum = 3; return it }(), "a"},
	} {
		c, p := newCoord(t)
		done := request(t.Context(), c, tc.it)
		shown := p.Next(t)
		out, err := c.Reply(shown.ID, interactions.Reply{By: "alice", Answers: []string{tc.answer}})
		require.NoError(t, err)
		assert.Equal(t, interactions.Resolved, out)
		r := await(t, done)
		assert.Equal(t, interactions.StatusAnswered, r.res.Status)
		assert.Empty(t, r.res.Approvals)
	}
}

// Timeout and /clear end an interaction waiting for more approvals like
// any other, and the approvals so far are in its resolution.
func TestQuorumExpiresAndClears(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newCoord(t, interactions.WithTimeout(200*time.Millisecond))
		it := toolApproval("telegram:-1")
		it.Quorum = 2
		done := request(t.Context(), c, it)
		shown := p.Next(t)
		_, err := c.Reply(shown.ID, interactions.Reply{By: "alice", Answers: []string{interactions.DecisionAllow}})
		require.NoError(t, err)
		r := await(t, done)
		assert.Equal(t, interactions.StatusExpired, r.res.Status)
		assert.Equal(t, []string{"alice"}, byOf(r.res.Approvals))

		c2, p2 := newCoord(t)
		done = request(t.Context(), c2, it)
		shown = p2.Next(t)
		_, err = c2.Reply(shown.ID, interactions.Reply{By: "alice", Answers: []string{interactions.DecisionAllow}})
		require.NoError(t, err)
		require.Len(t, c2.CancelPending("telegram:-1", "cleared"), 1)
		r = await(t, done)
		assert.Equal(t, interactions.StatusCancelled, r.res.Status)
		_, err = c2.Reply(shown.ID, interactions.Reply{By: "bob", Answers: []string{interactions.DecisionAllow}})
		assert.ErrorIs(t, err, interactions.ErrNotPending)
	})
}

// An unauthorized person's approval is not counted.
func TestQuorumUnauthorizedNotCounted(t *testing.T) {
	c, p := newCoord(t)
	it := planReview("slack:C1:1")
	it.Quorum = 2
	done := request(t.Context(), c, it)
	shown := p.Next(t)
	_, err := c.Reply(shown.ID, interactions.Reply{By: "mallory", Answers: []string{interactions.DecisionEdit},
		Authorize: func(interactions.Interaction) error { return errors.New("not an approver") }})
	require.ErrorIs(t, err, interactions.ErrUnauthorized)
	out, err := c.Reply(shown.ID, interactions.Reply{By: "alice", Answers: []string{interactions.DecisionEdit}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Counted, out, "mallory's tap counted")
	notYet(t, done)
}

// approvalJournal records the approvals the coordinator journals.
type approvalJournal struct {
	selJournal
	mu        sync.Mutex
	approvals map[string][]interactions.Approver
}

func (j *approvalJournal) Approved(_ context.Context, id string, as []interactions.Approver) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.approvals[id] = slices.Clone(as)
	return nil
}

func (j *approvalJournal) get(id string) []interactions.Approver {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.approvals[id]
}

// Approvals are journaled before Reply returns, and a restored interaction
// keeps them: the approver counted before the restart is told so, and the
// next distinct approver completes the quorum.
func TestQuorumJournaledAndRestored(t *testing.T) {
	j := &approvalJournal{selJournal: selJournal{selected: map[string][]string{}}, approvals: map[string][]interactions.Approver{}}
	c, p := newCoord(t, interactions.WithJournal(j))
	it := planReview("telegram:-3")
	it.Quorum = 3
	done := request(t.Context(), c, it)
	shown := p.Next(t)
	_, err := c.Reply(shown.ID, interactions.Reply{By: "alice", Answers: []string{interactions.DecisionEdit}})
	require.NoError(t, err)
	saved := j.get(shown.ID)
	assert.Equal(t, []string{"alice"}, byOf(saved))
	c.Interrupt("restarting")
	assert.Equal(t, interactions.StatusInterrupted, await(t, done).res.Status)

	c2, _ := newCoord(t, interactions.WithJournal(j))
	ch, stop := c2.Subscribe()
	defer stop()
	resc := restore(t, t.Context(), c2, interactions.Restored{Interaction: shown, Ref: "m1", Approvals: saved})
	ev := eventsFor(t, ch, 1)[0]
	assert.Equal(t, []string{"alice"}, byOf(ev.Approvals))
	_, err = c2.Reply(shown.ID, interactions.Reply{By: "alice", Answers: []string{interactions.DecisionEdit}})
	require.ErrorIs(t, err, interactions.ErrAlreadyApproved)
	out, err := c2.Reply(shown.ID, interactions.Reply{By: "bob", Answers: []string{interactions.DecisionEdit}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Counted, out)
	assert.Equal(t, []string{"alice", "bob"}, byOf(j.get(shown.ID)))
	out, err = c2.Reply(shown.ID, interactions.Reply{By: "carol", Answers: []string{interactions.DecisionEdit}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
	res := await(t, resc)
	assert.Equal(t, interactions.StatusAnswered, res.Status)
	assert.Equal(t, []string{"alice", "bob", "carol"}, byOf(res.Approvals))
}

// Taps from many approvers, repeats among them, race a deny, the timeout
// and /clear: it resolves exactly once, never with more approvals than the
// quorum, every distinct approver counted at most once, and an answered
// resolution always has exactly the quorum.
func TestQuorumRaces(t *testing.T) {
	for i := range 200 {
		c, p := newCoord(t, interactions.WithTimeout(time.Duration(1+i%5)*time.Millisecond))
		it := toolApproval("slack:C9:1")
		it.Quorum = 3
		done := request(t.Context(), c, it)
		shown := p.Next(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		counted := map[string]int{}
		for k := range 8 {
			wg.Go(func() {
				by := fmt.Sprintf("u%d", k%4) // u0..u3, each twice
				r := interactions.Reply{By: by, Answers: []string{interactions.DecisionAllow}}
				if k == 7 && i%3 == 0 {
					r.Answers = []string{interactions.DecisionDeny}
				}
				out, err := c.Reply(shown.ID, r)
				if err == nil && out == interactions.Counted {
					mu.Lock()
					counted[by]++
					mu.Unlock()
				}
			})
		}
		if i%4 == 0 {
			wg.Go(func() { c.CancelPending("slack:C9:1", "cleared") })
		}
		wg.Wait()
		r := await(t, done)
		for by, n := range counted {
			assert.Equal(t, 1, n, "%s counted twice", by)
		}
		assert.LessOrEqual(t, len(r.res.Approvals), 3)
		seen := map[string]bool{}
		for _, a := range r.res.Approvals {
			assert.False(t, seen[a.By], "%s twice in %v", a.By, r.res.Approvals)
			seen[a.By] = true
		}
		if r.res.Status == interactions.StatusAnswered {
			assert.Len(t, r.res.Approvals, 3)
		}
	}
}

// A request that needs 3 approvals, approved by three people the moment it
// is shown: what a quorum adds to BenchmarkRequestResolve.
func BenchmarkRequestResolveQuorum3(b *testing.B) {
	var c *interactions.Coordinator
	c = interactions.New(interactions.WithTimeout(time.Hour), interactions.WithPresenter(interactions.PresenterFunc(
		func(_ context.Context, it *interactions.Interaction) (string, error) {
			for _, by := range []string{"a", "b", "c"} {
				if _, err := c.Reply(it.ID, interactions.Reply{By: by, Answers: []string{interactions.DecisionAllow}}); err != nil {
					return "", err
				}
			}
			return "m", nil
		})))
	it := benchApproval
	it.ChatID, it.Quorum = "telegram:-1", 3
	b.ReportAllocs()
	for b.Loop() {
		if _, res, err := c.Request(context.Background(), it); err != nil || len(res.Approvals) != 3 {
			b.Fatal(res, err)
		}
	}
}
