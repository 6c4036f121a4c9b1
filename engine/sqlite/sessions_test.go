package sqlite_test

import (
	"context"
	"github.com/leashd/leashd/engine/agent"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/sqlite"
)

func TestSessionsListsEveryChatAlsoToAReadOnlyReader(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path)
	recs := []engine.SessionRecord{
		{ChatID: "web:b", AgentSessionID: "s2", Mode: agent.ModePlan, WorkDir: "/state/worktrees/r/web-b", LastActive: t0},
		{ChatID: "telegram:1", Mode: agent.ModeDefault, WorkDir: "/repo", LastActive: t0.Add(1)},
	}
	for _, r := range recs {
		require.NoError(t, s.SaveSession(ctx, r))
	}
	ro := open(t, path, sqlite.ReadOnly())
	got, err := ro.Sessions(ctx)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "telegram:1", got[0].ChatID)
	assert.Equal(t, "/repo", got[0].WorkDir)
	assert.Equal(t, "web:b", got[1].ChatID)
	assert.Equal(t, "/state/worktrees/r/web-b", got[1].WorkDir)
	assert.Equal(t, agent.ModePlan, got[1].Mode)
	assert.True(t, t0.Equal(got[1].LastActive))
}
