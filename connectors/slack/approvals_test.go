package slack

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/slack/slackfake"
	"github.com/leashd/leashd/interactions"
)

// styledButtons are the buttons of blocks as "text/style" (style "" for
// a plain button), in order.
func styledButtons(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var bs []struct {
		Elements []json.RawMessage `json:"elements"`
	}
	require.NoError(t, json.Unmarshal(raw, &bs))
	var out []string
	for _, b := range bs {
		for _, r := range b.Elements {
			var e struct {
				Type  string `json:"type"`
				Style string `json:"style"`
				Text  struct {
					Text string `json:"text"`
				} `json:"text"`
			}
			if json.Unmarshal(r, &e) == nil && e.Type == "button" {
				out = append(out, e.Text.Text+"/"+e.Style)
			}
		}
	}
	return out
}

// A program's yes/no approval is an approval card: its header, the action
// in bold and the details beneath, Approve green and Reject red, a reason
// typed instead; a rejection shows as Denied.
func TestYesNoApprovalIsAnApprovalCard(t *testing.T) {
	it := interactions.Interaction{ID: "q1", ChatID: "slack:D1", Kind: interactions.KindQuestion, Approval: true,
		Header: "Approval", Question: "Deploy v1.2 to production\n\n3 services, 40 s downtime",
		Options: []interactions.Choice{{Label: "Approve", Style: interactions.StyleApprove}, {Label: "Reject", Style: interactions.StyleDeny}}}
	raw := validBlocks(t, render(it, place{}, nil)[0].blocks)
	texts := sectionTexts(t, raw)
	assert.Equal(t, "*🔐 Approval*\n*Deploy v1.2 to production*\n3 services, 40 s downtime", texts[0])
	assert.Equal(t, []string{"Approve/primary", "Reject/danger"}, styledButtons(t, raw))
	assert.Contains(t, slackfake.Texts(raw), "Reply here to reject with a reason.")
	assert.NotContains(t, slackfake.Texts(raw), "in your own words")

	for _, tc := range []struct {
		res  interactions.Resolution
		want string
	}{
		{interactions.Resolution{Status: interactions.StatusAnswered, Answer: "Reject", By: "U7"}, "🚫 *Denied* — <@U7>"},
		{interactions.Resolution{Status: interactions.StatusAnswered, Answer: "not today", By: "U7"}, "🚫 *Denied* — <@U7>: not today"},
		{interactions.Resolution{Status: interactions.StatusRejected, Decision: interactions.DecisionReject, Text: interactions.RejectedText, By: "U7"}, "🚫 *Denied* — <@U7>"},
		{interactions.Resolution{Status: interactions.StatusAnswered, Answer: "Approve", By: "U7"}, "✅ *Answer:* Approve — <@U7>"},
	} {
		done := renderUpdate(interactions.Event{Type: interactions.EventResolved, Interaction: it, Resolution: tc.res}, place{})
		texts := sectionTexts(t, validBlocks(t, done.blocks))
		assert.Equal(t, tc.want, texts[len(texts)-1])
	}
}

// A tool approval with the agent's own options shows them by name,
// allow-like ones green and reject-like ones red, with what each means;
// a tap answers with that option, and a denial names it.
func TestToolApprovalWithTheAgentsOptions(t *testing.T) {
	it := interactions.Interaction{ID: "t1", ChatID: "slack:D1", Kind: interactions.KindToolApproval, ToolName: "Bash",
		ToolInput: []byte(`{"command":"make all"}`), ToolSummary: "make all", Options: []interactions.Choice{
			{Label: "Allow", Description: "Allow this call", Style: interactions.StyleApprove},
			{Label: "Always allow make", Style: interactions.StyleApprove},
			{Label: "Reject", Style: interactions.StyleDeny},
		}}
	raw := validBlocks(t, render(it, place{}, nil)[0].blocks)
	assert.Equal(t, []string{"Allow/primary", "Always allow make/primary", "Reject/danger"}, styledButtons(t, raw))
	assert.Contains(t, slackfake.Texts(raw), "Allow this call")
	bs := slackfake.Buttons(raw)
	k, err := parseAction(bs[1].ActionID, bs[1].Value)
	require.NoError(t, err)
	assert.Equal(t, byte('q'), k.Kind, "keyed by place: the inbound side reads it.Options")
	assert.Equal(t, 1, k.Index)

	done := renderUpdate(interactions.Event{Type: interactions.EventResolved, Interaction: it,
		Resolution: interactions.Resolution{Status: interactions.StatusRejected, Decision: interactions.DecisionDeny, Answer: "Reject", Text: "The user denied this tool call.", By: "U7"}}, place{})
	texts := sectionTexts(t, validBlocks(t, done.blocks))
	assert.Equal(t, "🚫 *Denied* (Reject) — <@U7>", texts[len(texts)-1])
}
