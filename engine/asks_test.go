package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/interactions"
)

// A program's request is shown in its chat by the chat's connector, and
// Outcome returns the answer; a chat of an app that is not running is
// refused with ErrNoPresenter; an interaction interrupted by a shutdown is
// not an outcome (it can still be answered after the restart).
func TestProgramAsksThroughTheEngine(t *testing.T) {
	e, conn, coord := start(t, &enginetest.ScriptAgent{}, nil)
	it, err := e.Ask(context.Background(), interactions.Interaction{ChatID: "ops", Kind: interactions.KindQuestion, Question: "Ship?",
		Options: []interactions.Choice{{Label: "Yes"}, {Label: "No"}}}, time.Minute)
	require.NoError(t, err)
	shown := conn.WaitShown(t, 1)
	assert.Equal(t, it.ID, shown.ID)
	assert.Equal(t, engine.AskerAPI, shown.Asker)
	assert.False(t, shown.Deadline.IsZero(), "its own timeout")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	_, _, resolved, err := e.Outcome(ctx, it.ID)
	cancel()
	require.NoError(t, err)
	assert.False(t, resolved)

	_, err = coord.Reply(it.ID, interactions.Reply{By: "ann", Answers: []string{"Yes"}})
	require.NoError(t, err)
	got, res, resolved, err := e.Outcome(context.Background(), it.ID)
	require.NoError(t, err)
	require.True(t, resolved)
	assert.Equal(t, "Yes", res.Answer)
	assert.Equal(t, "Ship?", got.Question)

	_, err = e.Ask(context.Background(), interactions.Interaction{ChatID: "slack:C1", Kind: interactions.KindQuestion, Question: "Ship?"}, 0)
	require.ErrorIs(t, err, interactions.ErrNoPresenter)
	// What the API's caller reads (leashd ask prints it): plain words.
	assert.NotContains(t, err.Error(), "presenter")
	assert.Regexp(t, `^there is no chat "slack:C1" here: Slack is not connected to this leashd; this leashd serves `, err.Error())
	_, _, _, err = e.Outcome(context.Background(), "nope")
	require.ErrorIs(t, err, interactions.ErrNotFound)
	require.ErrorIs(t, e.CancelAsk("nope", ""), interactions.ErrNotFound)
	require.ErrorIs(t, e.CancelAsk(it.ID, ""), interactions.ErrNotPending)

	it, err = e.Ask(context.Background(), interactions.Interaction{ChatID: "ops", Kind: interactions.KindQuestion, Question: "Name?"}, 0)
	require.NoError(t, err)
	coord.Interrupt(interactions.InterruptedNotice) // leashd stopping
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, res, resolved, err = e.Outcome(ctx, it.ID)
	require.NoError(t, err)
	assert.False(t, resolved, "interrupted is not an outcome: %+v", res)
}
