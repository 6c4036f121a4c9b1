package web_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// approvalAsk is a program's yes/no approval (as leashd ask --approval,
// kind "approval" and request_approval ask it: the action, a blank line,
// the details), with the styles the coordinator gives its options.
func approvalAsk(chat, action string) string {
	b, _ := json.Marshal(map[string]any{
		"chat_id": chat, "kind": "approval", "header": "Approval",
		"question": action + "\n\nRuns migration 42, then restarts the API.",
		"options":  []map[string]string{{"label": "Deploy", "style": "approve"}, {"label": "Abort", "style": "deny"}},
	})
	return string(b)
}

// Issue 31.1: a program's approval is an approval card: the action in
// bold with its details beneath, approve green and reject red, a reason
// field, no Other and no Decline; a rejection is "Denied" in red on the
// page, as the program is told it was rejected.
func TestBrowserProgramApprovalCard(t *testing.T) {
	ctx, e, s, mine := phone(t)

	aid := e.askID(approvalAsk(mine, "Deploy v2 to production"))
	card, _ := waitCard(t, ctx, s)
	assert.Equal(t, "Approval", evalJS[string](t, ctx, `document.querySelector('`+card+` .head').firstChild.textContent`))
	assert.Equal(t, "Deploy v2 to production", evalJS[string](t, ctx, `document.querySelector('`+card+` .q').textContent`), "the action alone on the bold line")
	assert.Equal(t, "Runs migration 42, then restarts the API.", evalJS[string](t, ctx, `document.querySelector('`+card+` .details').textContent`), "the details beneath")
	assert.Equal(t, "400", evalJS[string](t, ctx, `getComputedStyle(document.querySelector('`+card+` .details')).fontWeight`), "the details are not bold")
	assert.Equal(t, "green", evalJS[string](t, ctx, hueJS+`('`+card+` button[data-label="Deploy"]')`))
	assert.Equal(t, "red", evalJS[string](t, ctx, hueJS+`('`+card+` button[data-label="Abort"]')`))
	assert.Zero(t, count(t, ctx, card+" button.reject"), "no Decline: Abort says no")
	assert.Zero(t, count(t, ctx, card+` input[placeholder^="Other"]`), "no Other answer")
	assert.Equal(t, 1, count(t, ctx, card+` input[placeholder^="Reason"]`), "a reason field")
	checkTapAndContrast(t, ctx, "a program's approval", 4)
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	artifact(t, "web-program-approval.png", shot)

	click(t, ctx, card+` button[data-label="Abort"]`)
	waitSel(t, ctx, card+" .outcome.bad")
	assert.Equal(t, "red", evalJS[string](t, ctx, `(() => { const c = getComputedStyle(document.querySelector('`+card+` .outcome')).color.match(/\d+/g).map(Number); return c[0] > c[1] + 40 ? "red" : "other"; })()`))
	waitText(t, ctx, "Denied · by you")
	assert.NotContains(t, visibleText(t, ctx), "Answered: Abort")
	out := e.outcome(aid, "30")
	assert.Equal(t, false, out["approved"], "the program is told it was rejected")

	// A typed reason refuses, and the program gets the reason.
	aid = e.askID(approvalAsk(mine, "Drop the staging database"))
	card, _ = waitCard(t, ctx, s)
	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(card+` input[placeholder^="Reason"]`), "not during the release\n")))
	waitText(t, ctx, "Denied: not during the release · by you")
	out = e.outcome(aid, "30")
	assert.Equal(t, false, out["approved"])
	assert.Equal(t, "not during the release", out["text"])

	// Approving is green.
	aid = e.askID(approvalAsk(mine, "Deploy v3"))
	card, _ = waitCard(t, ctx, s)
	click(t, ctx, card+` button[data-label="Deploy"]`)
	waitSel(t, ctx, card+" .outcome.ok")
	waitText(t, ctx, "Approved: Deploy · by you")
	assert.Equal(t, true, e.outcome(aid, "30")["approved"])

	// An approval whose options carry no style (leashd ask --approval's
	// Approve and Reject) is an approval card all the same.
	aid = e.askID(`{"chat_id":"` + mine + `","kind":"approval","question":"Restart the workers"}`)
	card, _ = waitCard(t, ctx, s)
	assert.Equal(t, "green", evalJS[string](t, ctx, hueJS+`('`+card+` button[data-label="Approve"]')`))
	assert.Equal(t, "red", evalJS[string](t, ctx, hueJS+`('`+card+` button[data-label="Reject"]')`))
	assert.Zero(t, count(t, ctx, card+" button.reject"), "no Decline")
	click(t, ctx, card+` button[data-label="Reject"]`)
	waitSel(t, ctx, card+" .outcome.bad")
	assert.Equal(t, false, e.outcome(aid, "30")["approved"])
}

// Issue 31.2: a destructive choice (/discard's Discard) is red, and so is
// its outcome; the other option stays plain.
func TestBrowserDestructiveChoiceIsRed(t *testing.T) {
	ctx, e, s, mine := phone(t)
	b, _ := json.Marshal(map[string]any{"chat_id": mine, "question": "Discard the changes of this session?",
		"options": []map[string]string{{"label": "Discard", "style": "destructive"}, {"label": "Keep"}}})
	aid := e.askID(string(b))
	card, _ := waitCard(t, ctx, s)
	assert.Equal(t, "red", evalJS[string](t, ctx, hueJS+`('`+card+` button[data-label="Discard"]')`))
	assert.Equal(t, "other", evalJS[string](t, ctx, hueJS+`('`+card+` button[data-label="Keep"]')`))
	checkTapAndContrast(t, ctx, "a destructive choice", 2)
	click(t, ctx, card+` button[data-label="Discard"]`)
	waitSel(t, ctx, card+" .outcome.bad")
	waitText(t, ctx, "Discard · by you")
	assert.Equal(t, "Discard", e.outcome(aid, "30")["answer"])
}

// Issue 31.1: a tool approval with the agent's own options (ACP) shows
// the agent's names as buttons coloured by style, and the refusal chosen
// as Denied.
func TestBrowserAgentsOwnToolOptions(t *testing.T) {
	ctx, e, _, mine := phone(t)
	it := interactions.Interaction{ID: "acp-1", ChatID: mine, Kind: interactions.KindToolApproval, ToolName: "Bash",
		ToolInput: json.RawMessage(`{"command":"rm -rf build"}`), ToolSummary: "rm -rf build", AskedAt: time.Now(),
		Options: []interactions.Choice{
			{Label: "Allow once", Style: interactions.StyleApprove},
			{Label: "Always allow", Style: interactions.StyleApprove},
			{Label: "Reject", Style: interactions.StyleDeny},
		}}
	_, err := e.web.Present(context.Background(), &it)
	require.NoError(t, err)
	card := `.card[data-id="acp-1"]`
	waitSel(t, ctx, card+` button[data-label="Reject"]`)
	assert.Equal(t, "green", evalJS[string](t, ctx, hueJS+`('`+card+` button[data-label="Allow once"]')`))
	assert.Equal(t, "green", evalJS[string](t, ctx, hueJS+`('`+card+` button[data-label="Always allow"]')`))
	assert.Equal(t, "red", evalJS[string](t, ctx, hueJS+`('`+card+` button[data-label="Reject"]')`))
	assert.Zero(t, count(t, ctx, card+` button[data-label="deny"]`), "no Deny the agent did not offer")
	require.NoError(t, e.web.Update(context.Background(), interactions.Event{Type: interactions.EventResolved, Interaction: it,
		Resolution: interactions.Resolution{Status: interactions.StatusAnswered, Decision: "Reject", By: "web", At: time.Now()}}))
	waitSel(t, ctx, card+" .outcome.bad")
	assert.Contains(t, evalJS[string](t, ctx, `document.querySelector('`+card+` .outcome').textContent`), "Denied · by you")
}

// Options carry their style on the event stream and in the list of
// pending requests, which the page colours its buttons by.
func TestOptionsCarryTheirStyle(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("")
	e.askID(approvalAsk("deploys", "Deploy v2"))
	ev := s.next("interaction.requested")
	opts := ev.Data["options"].([]any)
	require.Len(t, opts, 2)
	assert.Equal(t, "approve", opts[0].(map[string]any)["style"])
	assert.Equal(t, "deny", opts[1].(map[string]any)["style"])
	st, body := e.do("GET", "/api/interactions?chat=deploys", "")
	require.Equal(t, 200, st, body)
	assert.Contains(t, body, `"label":"Deploy","description":"","style":"approve"`)
}
