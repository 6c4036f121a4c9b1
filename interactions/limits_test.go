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
		{"long question", interactions.Interaction{Kind: interactions.KindQuestion, Question: strings.Repeat("é", 8193)}, "question: must be UTF-8 of at most 16384 bytes"},
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

// The agent's own requests are held to the same limits, but what people
// only read is cut to fit, with a note, rather than refused: a long
// question still reaches the person, in one chat message.
func TestAgentRequestsAreCutToTheLimits(t *testing.T) {
	shown := make(chan interactions.Interaction, 1)
	c := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(_ context.Context, it *interactions.Interaction) (string, error) {
		shown <- *it
		return "ref", nil
	})))
	long := strings.Repeat("é", 120_000) // 240 KB: 61 Telegram messages; cut, 4 at most
	opts := []interactions.Choice{{Label: "A", Description: strings.Repeat("d", 600)}, {Label: "B"}}
	_, _, err := c.Start(context.Background(), interactions.Interaction{ChatID: "c", Kind: interactions.KindQuestion,
		Header: strings.Repeat("h", 150), Question: long + "\xff", Options: opts}, 0)
	require.NoError(t, err)
	it := <-shown
	assert.LessOrEqual(t, len(it.Question), interactions.MaxQuestionBytes)
	assert.Greater(t, len(it.Question), interactions.MaxQuestionBytes-30)
	assert.Regexp(t, `^(é)+… \(22\d{4} bytes cut\)$`, it.Question)
	assert.Equal(t, strings.Repeat("h", 99)+"…", it.Header)
	assert.Len(t, it.Options[0].Description, interactions.MaxDescriptionBytes)
	assert.Len(t, opts[0].Description, 600, "the caller's options are left as they were")
	c.CancelPending("c", "done")

	big := `{"content":"` + strings.Repeat("x", 10<<20) + `"}`
	_, _, err = c.Start(context.Background(), interactions.Interaction{ChatID: "c", Kind: interactions.KindToolApproval, ToolName: "Write", ToolInput: []byte(big)}, 0)
	require.NoError(t, err)
	it = <-shown
	assert.LessOrEqual(t, len(it.ToolInput), interactions.MaxToolSummaryBytes+200)
	assert.Contains(t, string(it.ToolInput), "the tool input is 10485774 bytes")
	c.CancelPending("c", "done")
}

// What cannot be cut without changing what an answer means is refused,
// whoever asks: too many options, a blank or repeated label (a blank
// button would record answered ""), a chat ID with control characters.
func TestAgentRequestsAreRefusedWhatCannotBeCut(t *testing.T) {
	opts := func(n int) []interactions.Choice {
		out := make([]interactions.Choice, n)
		for i := range out {
			out[i] = interactions.Choice{Label: strings.Repeat("x", i+1)}
		}
		return out
	}
	q := func(chat string, o []interactions.Choice) interactions.Interaction {
		return interactions.Interaction{ChatID: chat, Kind: interactions.KindQuestion, Question: "q", Options: o}
	}
	for _, tc := range []struct {
		name string
		it   interactions.Interaction
		want string
	}{
		{"10,000 options", q("c", opts(10_000)), "options: 10000 options; at most 10"},
		{"blank label", q("c", []interactions.Choice{{Label: "A"}, {Label: ""}}), "options[1].label: missing"},
		{"repeated label", q("c", []interactions.Choice{{Label: "A"}, {Label: "A"}}), `options[1].label: "A" is given twice; labels must differ`},
		{"long label", q("c", []interactions.Choice{{Label: strings.Repeat("l", 201)}}), "options[0].label: must be UTF-8 of at most 200 bytes"},
		{"control characters in the chat ID", q("c\x1b[2J", nil), "chat_id: \"c\\x1b[2J\": no spaces or control characters"},
		{"invalid UTF-8 chat ID", q("c\xff", nil), "chat_id: must be UTF-8 of 1 to 200 bytes"},
		{"long chat ID", q(strings.Repeat("c", 201), nil), "chat_id: must be UTF-8 of 1 to 200 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown := 0
			c := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(context.Context, *interactions.Interaction) (string, error) {
				shown++
				return "ref", nil
			})))
			_, _, err := c.Request(context.Background(), tc.it)
			require.ErrorIs(t, err, interactions.ErrInvalid)
			assert.EqualError(t, err, tc.want)
			assert.Zero(t, shown, "nothing is shown")
		})
	}
}
