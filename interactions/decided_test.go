package interactions_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

func TestDecidedIsJournalledNotShown(t *testing.T) {
	j := &fakeJournal{}
	c, p := newCoord(t, interactions.WithJournal(j))
	events, stop := c.Subscribe()
	defer stop()
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // a turn that already ended still gets its record
	it, err := c.Decided(ctx, interactions.Interaction{ChatID: "c", Kind: interactions.KindToolApproval,
		ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"git push"}`), ToolSummary: "git push"},
		interactions.Resolution{Status: interactions.StatusRejected, Decision: interactions.DecisionDeny, Text: "policy rule 1 (line 2): no", By: "policy"})
	require.NoError(t, err)
	require.NotEmpty(t, it.ID)
	assert.False(t, it.AskedAt.IsZero())
	assert.Equal(t, interactions.ToolOptions, it.Options)
	assert.Equal(t, []string{"requested " + it.ID + " tool_approval", "resolved " + it.ID + " rejected"}, j.lines())
	assert.NoError(t, j.resolvedCtxErr)
	p.NothingShown(t)
	assert.Zero(t, c.PendingCount())
	select {
	case ev := <-events:
		t.Fatalf("published %v", ev.Type)
	default:
	}
	// A tap on it finds it is over, not unknown.
	_, err = c.Reply(it.ID, interactions.Reply{Answers: []string{"allow"}})
	require.ErrorIs(t, err, interactions.ErrNotPending)

	_, err = c.Decided(t.Context(), interactions.Interaction{ChatID: "c", Kind: interactions.KindToolApproval},
		interactions.Resolution{Status: interactions.StatusExpired})
	require.ErrorContains(t, err, "needs status answered or rejected")
	_, err = c.Decided(t.Context(), interactions.Interaction{Kind: interactions.KindToolApproval},
		interactions.Resolution{Status: interactions.StatusAnswered})
	require.ErrorContains(t, err, "no chat ID")

	jf := &fakeJournal{fail: true}
	cf, _ := newCoord(t, interactions.WithJournal(jf))
	_, err = cf.Decided(t.Context(), interactions.Interaction{ChatID: "c", Kind: interactions.KindToolApproval},
		interactions.Resolution{Status: interactions.StatusAnswered})
	require.ErrorContains(t, err, "disk full")
}
