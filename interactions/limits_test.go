package interactions_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// What a program asks is held to the limits, whichever way it asks; each
// refusal names the field and what is accepted, and nothing is shown.
func TestProgramRequestsAreHeldToTheLimits(t *testing.T) {
	opts := func(n int) []interactions.Choice {
		out := make([]interactions.Choice, n)
		for i := range out {
			out[i] = interactions.Choice{Label: strings.Repeat("x", i+1)}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		it   interactions.Interaction
		want string
	}{
		{"too many options", interactions.Interaction{Kind: interactions.KindQuestion, Question: "q", Options: opts(11)}, "options: 11 options; at most 10"},
		{"long question", interactions.Interaction{Kind: interactions.KindQuestion, Question: strings.Repeat("é", 2001)}, "question: must be UTF-8 of at most 4000 bytes"},
		{"long header", interactions.Interaction{Kind: interactions.KindQuestion, Question: "q", Header: strings.Repeat("h", 101)}, "header: must be UTF-8 of at most 100 characters"},
		{"repeated label", interactions.Interaction{Kind: interactions.KindQuestion, Question: "q", Options: []interactions.Choice{{Label: "A"}, {Label: " A "}}}, `options[1].label: "A" is given twice`},
		{"empty label", interactions.Interaction{Kind: interactions.KindQuestion, Question: "q", Options: []interactions.Choice{{Label: " "}}}, "options[0].label: missing"},
		{"long description", interactions.Interaction{Kind: interactions.KindQuestion, Question: "q", Options: []interactions.Choice{{Label: "A", Description: strings.Repeat("d", 501)}}}, "options[0].description: must be UTF-8 of at most 500 bytes"},
		{"huge plan", interactions.Interaction{Kind: interactions.KindPlanReview, Plan: strings.Repeat("p", interactions.MaxPlanBytes+1)}, "plan: must be UTF-8 of at most 262144 bytes"},
		{"huge tool input", interactions.Interaction{Kind: interactions.KindToolApproval, ToolName: "Bash", ToolInput: []byte(`{"c":"` + strings.Repeat("i", interactions.MaxToolInputBytes) + `"}`)}, "tool_input: 262152 bytes; at most 262144"},
		{"invalid UTF-8", interactions.Interaction{Kind: interactions.KindQuestion, Question: "q\xff"}, "question: must be UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown := 0
			c := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(context.Context, *interactions.Interaction) (string, error) {
				shown++
				return "ref", nil
			})))
			tc.it.ChatID = "c"
			ctx := interactions.WithAsker(context.Background(), "api")
			_, _, err := c.Request(ctx, tc.it)
			require.ErrorIs(t, err, interactions.ErrInvalid)
			assert.ErrorContains(t, err, tc.want)
			assert.Zero(t, shown, "nothing is shown")
			assert.Empty(t, c.Pending(""), "nothing is pending")
		})
	}
}

// The agent's own requests are not a program's: the engine cuts what is
// too long for a chat, so a long question still reaches the person.
func TestAgentRequestsAreNotHeldToProgramLimits(t *testing.T) {
	shown := make(chan interactions.Interaction, 1)
	c := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(_ context.Context, it *interactions.Interaction) (string, error) {
		shown <- *it
		return "ref", nil
	})))
	_, _, err := c.Start(context.Background(), interactions.Interaction{ChatID: "c", Kind: interactions.KindQuestion, Question: strings.Repeat("q", 5000)}, 0)
	require.NoError(t, err)
	assert.Len(t, (<-shown).Question, 5000)
	c.CancelPending("c", "done")
}
