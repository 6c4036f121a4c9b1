package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/engine"
)

// TestTurnOutputIsCappedWithANote: an agent that writes far more than the
// turn's output limit (in many pieces, as a streaming agent does) gets only
// the limit through to the chat, cut at a character boundary, followed by
// one "… truncated (N bytes)" note; the summary's result is capped the same
// way; the next turn starts with a fresh allowance.
func TestTurnOutputIsCappedWithANote(t *testing.T) {
	const limit = 1000
	piece := strings.Repeat("é", 50) + "\n" // 101 bytes
	ag := &enginetest.ScriptAgent{Turn: func(_ context.Context, _ *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if prompt == "small" {
			h.Text("short answer")
			return agent.Result{Text: "short answer"}, nil
		}
		for range 100 { // 10,100 bytes
			h.Text(piece)
		}
		return agent.Result{Text: strings.Repeat(piece, 100)}, nil
	}}
	e, conn, _ := start(t, ag, nil, func(_ *engine.Deps, c *engine.Config) { c.MaxTurnOutput = limit })
	send(t, e, "c1", "flood")
	conn.WaitFor(t, "the summary", func() bool { return len(conn.Summaries) == 1 })

	var shown strings.Builder
	for _, s := range conn.Streamed {
		shown.WriteString(strings.TrimPrefix(s, "c1|"))
	}
	out := shown.String()
	body, note, ok := strings.Cut(out, "\n\n… truncated (")
	if assert.True(t, ok, "a note ends the output: %q", out[max(0, len(out)-80):]) {
		assert.LessOrEqual(t, len(body), limit)
		assert.Greater(t, len(body), limit-4, "cut at the limit (within one character)")
		assert.Equal(t, strings.Count(out, "truncated"), 1, "one note")
		assert.Equal(t, fmt.Sprintf("%d bytes)", 100*len(piece)-len(body)), note, "what was left out: all of it minus what was shown")
		assert.Equal(t, 999, len(body), "999: the 1,000th byte would split an é")
	}
	assert.True(t, strings.HasPrefix(body, piece), "the first part is shown as written")
	assert.True(t, strings.ToValidUTF8(body, "?") == body, "never cut inside a character")
	res := conn.Summaries[0].Result
	assert.LessOrEqual(t, len(res), limit+40)
	assert.Contains(t, res, "… truncated (9101 bytes)")

	send(t, e, "c1", "small")
	conn.WaitFor(t, "the second summary", func() bool { return len(conn.Summaries) == 2 })
	assert.Equal(t, "c1|short answer", conn.Streamed[len(conn.Streamed)-1], "a new turn, a new allowance")
	assert.Equal(t, "short answer", conn.Summaries[1].Result)
}
