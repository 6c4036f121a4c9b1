package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// Every approval counted towards a quorum is in the audit log once, with
// who and when, however often the coordinator passes the list; the quorum
// is kept with the interaction; after a restart the approvals come back
// with it (Interrupt) for the coordinator to restore.
func TestApprovalsJournaled(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path)
	it := toolApproval("q1", "slack:C1:1.2", t0)
	it.Quorum = 3
	require.NoError(t, s.Requested(ctx, it))
	a1 := interactions.Approver{By: "UA", At: t0.Add(time.Minute), Decision: interactions.DecisionAllow}
	a2 := interactions.Approver{By: "UB", At: t0.Add(2 * time.Minute), Decision: interactions.DecisionAllowSession}
	require.NoError(t, s.Approved(ctx, "q1", []interactions.Approver{a1}))
	require.NoError(t, s.Approved(ctx, "q1", []interactions.Approver{a1, a2}))
	rec := record(t, s, "q1")
	assert.Equal(t, 3, rec.Interaction.Quorum)
	assert.Equal(t, []interactions.Approver{a1, a2}, rec.Approvals)
	require.NoError(t, s.Close())

	s = open(t, path)
	got, err := s.Interrupt(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, 3, got[0].Interaction.Quorum)
	assert.Equal(t, []interactions.Approver{a1, a2}, got[0].Approvals)

	// The log is append-only.
	_, err = rawDB(t, path).Exec(`UPDATE approvals SET approver = 'UX'`)
	assert.ErrorContains(t, err, "append-only")
}
