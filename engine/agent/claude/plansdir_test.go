package claude

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPlansDir: the CLI's plan directory follows its environment, the
// last value winning: CLAUDE_CONFIG_DIR's plans/, else ~/.claude/plans.
func TestPlansDir(t *testing.T) {
	assert.Equal(t, "/home/u/.claude/plans", plansDir([]string{"HOME=/root", "HOME=/home/u"}))
	assert.Equal(t, "/cfg/plans", plansDir([]string{"HOME=/home/u", "CLAUDE_CONFIG_DIR=/cfg"}))
	assert.Equal(t, "", plansDir([]string{"PATH=/bin"}))
	a := New("claude", WithEnv([]string{"CLAUDE_CONFIG_DIR=/x/.claude"}))
	assert.Equal(t, "/x/.claude/plans", a.planDir)
}
