package claude_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/claude/fakeapi"
)

func TestRealCLIPromptGetsText(t *testing.T) {
	c := newRealCLI(t)
	c.api.Reply(fakeapi.Text("Hello from the fake model"))
	s := c.open(t, engine.SessionOptions{ChatID: "t1", Mode: engine.ModeDefault})
	h := &recHandler{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	res, err := s.Turn(ctx, "say hello", h)
	require.NoError(t, err)
	t.Logf("turn took %s", time.Since(start).Round(time.Millisecond))
	assert.Equal(t, "Hello from the fake model", res.Text)
	assert.False(t, res.IsError)
	assert.NotEmpty(t, res.SessionID)
	assert.Equal(t, res.SessionID, s.ID())
	assert.Equal(t, []string{"Hello from the fake model"}, h.texts)
	calls := c.api.Calls()
	require.Len(t, calls, 1)
	assert.True(t, calls[0].HasUserText("say hello"))
	for _, r := range c.api.Side() {
		t.Logf("side request: %s %s", r.Method, r.Path)
	}
}
