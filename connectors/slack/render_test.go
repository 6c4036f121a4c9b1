package slack

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slack-go/slack"

	"github.com/leashd/leashd/connectors/slack/slackfake"
	"github.com/leashd/leashd/interactions"
)

func TestRenderLongLabelsAndManyOptions(t *testing.T) {
	long := strings.Repeat("very long option label ", 6) // 138 characters
	it := interactions.Interaction{ID: "abc", ChatID: "slack:C1:1.1", Kind: interactions.KindQuestion, Question: "Pick", MultiSelect: true}
	it.Options = append(it.Options, interactions.Option{Label: long})
	for i := range 29 {
		it.Options = append(it.Options, interactions.Option{Label: "opt" + strings.Repeat("x", i)})
	}
	msgs := render(it, place{thread: true, approversOnly: true}, []string{long})
	require.Len(t, msgs, 1)
	raw, err := json.Marshal(msgs[0].blocks)
	require.NoError(t, err)
	btns := slackfake.Buttons(raw)
	require.Len(t, btns, 31, "thirty options and Done")
	ids := map[string]bool{}
	for _, b := range btns {
		assert.LessOrEqual(t, utf8.RuneCountInString(b.Text), MaxButton)
		assert.False(t, ids[b.ActionID], "action_id %s repeated", b.ActionID)
		ids[b.ActionID] = true
		assert.NotContains(t, b.Value, "option")
	}
	assert.True(t, strings.HasPrefix(btns[0].Text, "✓ very long"))
	assert.True(t, strings.HasSuffix(btns[0].Text, "…"))
	assert.Contains(t, slackfake.Texts(raw), "*"+long+"*", "the full label is in the text")
	var blocks []struct {
		Type     string            `json:"type"`
		BlockID  string            `json:"block_id"`
		Elements []json.RawMessage `json:"elements"`
	}
	require.NoError(t, json.Unmarshal(raw, &blocks))
	bids := map[string]bool{}
	for _, b := range blocks {
		assert.False(t, bids[b.BlockID], "block_id %s repeated", b.BlockID)
		bids[b.BlockID] = true
		if b.Type == "actions" {
			assert.LessOrEqual(t, len(b.Elements), 25)
		}
	}
}

func TestRenderOutcomes(t *testing.T) {
	tool := interactions.Interaction{ID: "t1", ChatID: "slack:D1", Kind: interactions.KindToolApproval, ToolName: "Bash", ToolSummary: "rm -rf <dir>"}
	for _, tc := range []struct {
		res  interactions.Resolution
		want string
	}{
		{interactions.Resolution{Status: interactions.StatusAnswered, Decision: interactions.DecisionAllow, By: "U7"}, "✅ *Allow* — <@U7>"},
		{interactions.Resolution{Status: interactions.StatusRejected, Decision: interactions.DecisionDeny, By: "U7", Text: "no <way>"}, "❌ *Deny* — <@U7>: no &lt;way&gt;"},
		{interactions.Resolution{Status: interactions.StatusRejected, Decision: interactions.DecisionReject, By: "U7"}, "❌ *Rejected* — <@U7>"},
		{interactions.Resolution{Status: interactions.StatusCancelled, Text: "cleared"}, "🚫 *Cancelled*: cleared"},
		{interactions.Resolution{Status: interactions.StatusExpired, Text: "timeout"}, "⌛ *Expired*: timeout"},
	} {
		m := renderUpdate(interactions.Event{Type: interactions.EventResolved, Interaction: tool, Resolution: tc.res}, place{})
		raw, _ := json.Marshal(m.blocks)
		assert.Contains(t, slackfake.Texts(raw), tc.want)
		assert.Contains(t, slackfake.Texts(raw), "rm -rf &lt;dir&gt;", "the command stays visible")
		assert.Empty(t, slackfake.Buttons(raw))
	}
}

func BenchmarkMrkdwn(b *testing.B) {
	var sb strings.Builder
	for i := range 200 {
		sb.WriteString("## Step **" + strings.Repeat("x", i%7) + "**\n- change `a<b>` in [file](https://x.test/f?a=1&b=2) _now_\n```go\nif a < b { return }\n```\n")
	}
	md := sb.String()
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		Mrkdwn(md)
	}
}

func BenchmarkRenderLongPlan(b *testing.B) {
	it := interactions.Interaction{ID: "p", ChatID: "slack:C1:1.1", Kind: interactions.KindPlanReview, Plan: strings.Repeat("1. Step: change `file.go` so **it** does <the> thing & more\n", 2500)}
	for b.Loop() {
		render(it, place{thread: true}, nil)
	}
}

func TestRenderNeverEmptyTexts(t *testing.T) {
	plan := "# P\n" + strings.Repeat("\n", 5000) + strings.Repeat("word ", 1000) + "\n\n\n"
	it := interactions.Interaction{ID: "p", ChatID: "slack:D1", Kind: interactions.KindPlanReview, Plan: plan}
	for _, m := range render(it, place{}, nil) {
		for _, b := range m.blocks {
			if sb, ok := b.(*slack.SectionBlock); ok {
				assert.NotEmpty(t, strings.TrimSpace(sb.Text.Text))
			}
		}
	}
	q := interactions.Interaction{ID: "q", ChatID: "slack:D1", Kind: interactions.KindQuestion, Question: "?", Options: []interactions.Option{{Label: " "}, {Label: "b"}}}
	raw, _ := json.Marshal(render(q, place{}, nil)[0].blocks)
	for _, b := range slackfake.Buttons(raw) {
		assert.NotEmpty(t, strings.TrimSpace(b.Text))
	}
}
