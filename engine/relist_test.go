package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// listingRecovery also lists what earlier runs left interrupted and
// unanswered, as engine/sqlite does.
type listingRecovery struct {
	*fakeRecovery
	unanswered []engine.Interrupted
	since      chan time.Time
}

func (l *listingRecovery) Unanswered(_ context.Context, since time.Time) ([]engine.Interrupted, error) {
	l.since <- since
	return l.unanswered, nil
}

// watcherConn is a recording connector that watches every chat, like the
// web page.
type watcherConn struct{ *enginetest.Conn }

func (watcherConn) WatchesAll() bool { return true }

// TestStartShowsUnansweredInterruptionsToWatchersOnly: after a restart the
// web page (a watcher, no history of its own) is shown again what the last
// shutdown interrupted and nobody answered; a chat app, whose message was
// edited at the shutdown and still has its buttons, is not edited again.
// A crash leftover is edited everywhere, as before.
func TestStartShowsUnansweredInterruptionsToWatchersOnly(t *testing.T) {
	shut := interactions.Interaction{ID: "shut1", ChatID: "telegram:42", Kind: interactions.KindQuestion, Question: "Which port?",
		Options: []interactions.Choice{{Label: "80"}, {Label: "8080"}}}
	crash := interactions.Interaction{ID: "crash1", ChatID: "telegram:42", Kind: interactions.KindQuestion, Question: "Which host?",
		Options: []interactions.Choice{{Label: "a"}, {Label: "b"}}}
	rec := &listingRecovery{
		fakeRecovery: &fakeRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{},
			left: []engine.Interrupted{{Ref: "tg-8", Interaction: crash}}},
		unanswered: []engine.Interrupted{{Ref: "tg-7", Interaction: shut}},
		since:      make(chan time.Time, 1),
	}
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e := enginetest.New(ag, interactions.New(), func(d *engine.Deps, _ *engine.Config) { d.Store = rec })
	tg := enginetest.NewConn("telegram")
	web := watcherConn{enginetest.NewConn("web")}
	e.AddConnector(tg)
	e.AddConnector(web)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	select {
	case since := <-rec.since:
		assert.WithinDuration(t, time.Now().Add(-engine.RelistWindow), since, time.Minute, "only recent interruptions are listed")
	case <-time.After(10 * time.Second):
		t.Fatal("Unanswered was not asked at start")
	}
	web.WaitFor(t, "both shown on the page", func() bool { return len(web.Updates) == 2 })
	tg.WaitFor(t, "the crash leftover edited in Telegram", func() bool { return len(tg.Updates) == 1 })
	web.Lock()
	assert.Equal(t, "shut1", web.Updates[0].Interaction.ID, "what the shutdown interrupted comes first")
	assert.Equal(t, interactions.StatusInterrupted, web.Updates[0].Resolution.Status)
	assert.Equal(t, interactions.InterruptedNotice, web.Updates[0].Resolution.Text)
	assert.Equal(t, "crash1", web.Updates[1].Interaction.ID)
	web.Unlock()
	tg.Lock()
	assert.Equal(t, "crash1", tg.Updates[0].Interaction.ID, "Telegram is not told again about shut1")
	assert.Equal(t, "tg-8", tg.Updates[0].Ref)
	tg.Unlock()

	out, err := e.Reply(context.Background(), "shut1", interactions.Reply{By: "web", Answers: []string{"8080"}})
	require.NoError(t, err, "answered on the page after the restart")
	assert.Equal(t, interactions.Resolved, out)
	tg.WaitFor(t, "the Telegram message shows the answer", func() bool { return len(tg.Updates) == 2 })
}

// TestRestartKeepsTheApprovalCountOnTheReshownRequest: a plan review that
// needs two approvals and had one when leashd stopped (or crashed) is
// shown again after the restart with "1 of 2 approvals — UA", on the web
// page and in the chat app whose message a crash left looking pending.
func TestRestartKeepsTheApprovalCountOnTheReshownRequest(t *testing.T) {
	review := func(id string) interactions.Interaction {
		return interactions.Interaction{ID: id, ChatID: "telegram:-42", Kind: interactions.KindPlanReview, Plan: "# Plan", Quorum: 2, Approval: true}
	}
	ua := []interactions.Approver{{By: "UA"}}
	rec := &listingRecovery{
		fakeRecovery: &fakeRecovery{Store: engine.NewMemStore(), done: map[string]interactions.Resolution{},
			left: []engine.Interrupted{{Ref: "tg-8", Interaction: review("crash1"), Approvals: ua}}},
		unanswered: []engine.Interrupted{{Ref: "tg-7", Interaction: review("shut1"), Approvals: ua}},
		since:      make(chan time.Time, 1),
	}
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e := enginetest.New(ag, interactions.New(), func(d *engine.Deps, _ *engine.Config) { d.Store = rec })
	tg := enginetest.NewConn("telegram")
	web := watcherConn{enginetest.NewConn("web")}
	e.AddConnector(tg)
	e.AddConnector(web)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	<-rec.since

	web.WaitFor(t, "both shown on the page", func() bool { return len(web.Updates) == 2 })
	tg.WaitFor(t, "the crash leftover edited in Telegram", func() bool { return len(tg.Updates) == 1 })
	seen := func(ev interactions.Event) string { return interactions.QuorumText(ev.Interaction, ev.Approvals, nil) }
	web.Lock()
	for _, ev := range web.Updates {
		assert.Equal(t, "1 of 2 approvals — UA", seen(ev), "the page shows %s with its count", ev.Interaction.ID)
	}
	web.Unlock()
	tg.Lock()
	assert.Equal(t, "1 of 2 approvals — UA", seen(tg.Updates[0]), "the chat app's message keeps its count")
	tg.Unlock()
}
