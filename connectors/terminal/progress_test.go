package terminal_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
)

// A long turn's signs of life show dimmed under the spinner while it
// runs, and go with the turn.
func TestSignsOfLifeUnderTheSpinner(t *testing.T) {
	release := make(chan struct{})
	p := startInproc(t, map[string]turnFunc{"build": func(ctx context.Context, _ string, h agent.TurnHandler) (agent.Result, error) {
		h.Text("Building.\n")
		<-release
		return agent.Result{Text: "Building."}, nil
	}})
	p.send("build", keyEnter)
	p.waitText("Building.")
	opened := p.agent.Opened()
	require.NotEmpty(t, opened)
	require.NoError(t, p.conn.Progress(context.Background(), opened[0].ChatID, "⏳ Still working · 30s · ran 1 command"))
	p.waitText("Working… (Ctrl+C stops)\n⏳ Still working · 30s · ran 1 command")
	assert.True(t, p.attrOf("⏳ Still working").dim, "dimmed")
	close(release)
	p.waitCursor(">")
	assert.False(t, strings.Contains(p.screen(), "Still working"), "gone with the turn")
}
