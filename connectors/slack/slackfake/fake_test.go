package slackfake_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/slack/slackfake"
)

func blocksJSON(t *testing.T, blocks ...any) string {
	t.Helper()
	b, err := json.Marshal(blocks)
	require.NoError(t, err)
	return string(b)
}

func sectionOf(id, text string) map[string]any {
	return map[string]any{"type": "section", "block_id": id, "text": map[string]any{"type": "mrkdwn", "text": text}}
}

func buttonOf(actionID, value, text string) map[string]any {
	return map[string]any{"type": "button", "action_id": actionID, "value": value, "text": map[string]any{"type": "plain_text", "text": text}}
}

func actionsOf(id string, els ...any) map[string]any {
	return map[string]any{"type": "actions", "block_id": id, "elements": els}
}

func TestValidateBlocksLimits(t *testing.T) {
	manyButtons := make([]any, 26)
	for i := range manyButtons {
		manyButtons[i] = buttonOf(fmt.Sprint("a", i), "v", "b")
	}
	fifty1 := make([]any, 51)
	for i := range fifty1 {
		fifty1[i] = sectionOf(fmt.Sprint("s", i), "x")
	}
	for _, tc := range []struct {
		name   string
		blocks string
		want   string // "" = valid
	}{
		{"none", "", ""},
		{"typical", blocksJSON(t, sectionOf("q", "*Q*"), actionsOf("a", buttonOf("x", "k:0", "Yes"), buttonOf("y", "k:1", "No")),
			map[string]any{"type": "context", "block_id": "h", "elements": []any{map[string]any{"type": "mrkdwn", "text": "hint"}}}), ""},
		{"section at the limit", blocksJSON(t, sectionOf("q", strings.Repeat("é", 3000))), ""},
		{"section too long", blocksJSON(t, sectionOf("q", strings.Repeat("é", 3001))), "must be less than 3001 characters, got 3001 [json-pointer:/blocks/0/text/text]"},
		{"empty section", blocksJSON(t, sectionOf("q", " ")), "must be more than 0 characters [json-pointer:/blocks/0/text/text]"},
		{"51 blocks", blocksJSON(t, fifty1...), "no more than 50 items allowed, got 51 [json-pointer:/blocks]"},
		{"button text too long", blocksJSON(t, actionsOf("a", buttonOf("x", "v", strings.Repeat("b", 76)))), "must be less than 76 characters, got 76 [json-pointer:/blocks/0/elements/0/text/text]"},
		{"button text mrkdwn", blocksJSON(t, actionsOf("a", map[string]any{"type": "button", "action_id": "x", "text": map[string]any{"type": "mrkdwn", "text": "*b*"}})), `text type "mrkdwn" not allowed here [json-pointer:/blocks/0/elements/0/text/type]`},
		{"button value too long", blocksJSON(t, actionsOf("a", buttonOf("x", strings.Repeat("v", 2001), "b"))), "must be at most 2000 characters, got 2001 [json-pointer:/blocks/0/elements/0/value]"},
		{"action_id too long", blocksJSON(t, actionsOf("a", buttonOf(strings.Repeat("x", 256), "v", "b"))), "action_id must be at most 255 characters, got 256"},
		{"block_id too long", blocksJSON(t, sectionOf(strings.Repeat("x", 256), "t")), "block_id must be at most 255 characters, got 256"},
		{"duplicate action_id", blocksJSON(t, actionsOf("a", buttonOf("x", "1", "b")), actionsOf("b", buttonOf("x", "2", "c"))), `action_id "x" is not unique within the message [json-pointer:/blocks/1/elements/0/action_id]`},
		{"duplicate block_id", blocksJSON(t, sectionOf("q", "a"), sectionOf("q", "b")), `block_id "q" is not unique within the message [json-pointer:/blocks/1/block_id]`},
		{"26 buttons", blocksJSON(t, actionsOf("a", manyButtons...)), "an actions block needs 1 to 25 elements, got 26 [json-pointer:/blocks/0/elements]"},
		{"context too long", blocksJSON(t, map[string]any{"type": "context", "elements": []any{map[string]any{"type": "mrkdwn", "text": strings.Repeat("c", 3001)}}}), "must be less than 3001 characters"},
		{"not JSON", "[{", "blocks are not a JSON array of objects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := slackfake.ValidateBlocks(tc.blocks)
			if tc.want == "" {
				assert.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1, "%v", errs)
			assert.Contains(t, errs[0], tc.want)
		})
	}
}

// TestInvalidBlocksRefusedLikeSlack: through slack-go, as leashd calls it:
// refused blocks come back as invalid_blocks, nothing is posted or changed,
// and the refusal is listed.
func TestInvalidBlocksRefusedLikeSlack(t *testing.T) {
	fake := slackfake.New("xoxb-t", "xapp-t")
	defer fake.Close()
	api := slack.New("xoxb-t", slack.OptionAPIURL(fake.APIURL()))
	long := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat("x", 3001), false, false), nil, nil)
	_, _, err := api.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("t", false), slack.MsgOptionBlocks(long))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid_blocks")
	assert.Empty(t, fake.Messages(""), "nothing posted")

	ok := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "fine", false, false), nil, nil)
	_, ts, err := api.PostMessageContext(t.Context(), "C1", slack.MsgOptionText("t", false), slack.MsgOptionBlocks(ok))
	require.NoError(t, err)
	btn := slack.NewButtonBlockElement("a", "v", slack.NewTextBlockObject(slack.PlainTextType, strings.Repeat("b", 80), false, false))
	_, _, _, err = api.UpdateMessageContext(t.Context(), "C1", ts, slack.MsgOptionText("t2", false), slack.MsgOptionBlocks(slack.NewActionBlock("x", btn)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid_blocks")
	_, err = api.PostEphemeralContext(t.Context(), "C1", "U1", slack.MsgOptionText("t", false), slack.MsgOptionBlocks(long, long))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid_blocks")

	msgs := fake.Messages("C1")
	require.Len(t, msgs, 1)
	assert.Equal(t, 0, msgs[0].Edits, "a refused update changes nothing")
	assert.Equal(t, "t", msgs[0].Text)
	assert.Empty(t, fake.Ephemerals())
	rej := fake.Rejected()
	require.Len(t, rej, 3)
	assert.Equal(t, []string{"chat.postMessage", "chat.update", "chat.postEphemeral"}, []string{rej[0].Method, rej[1].Method, rej[2].Method})
	assert.Contains(t, rej[1].Errors[0], "/blocks/0/elements/0/text/text")
}
