package web_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// flagged is a tool approval that must be read in full, defaults to no
// and offers no session rule.
func flagged(chat string) interactions.Interaction {
	return interactions.Interaction{
		ChatID: chat, Kind: interactions.KindToolApproval, ToolName: "mcp__github__create_issue",
		ToolInput: json.RawMessage(`{"title":"Leak <keys>","repo":"acme/site"}`), ToolSummary: "{compact}",
		Reason: "Why it asks: Posts to a public repo", MCPServer: "github (user)",
		DefaultToNo: true, NoSessionAllow: true, RequiresDetails: true,
	}
}

// The API shows what the agent said about a tool approval and the options
// in the request's own order.
func TestToolApprovalFlagsInTheAPI(t *testing.T) {
	e := start(t, setup{})
	s := e.subscribe("")
	done := make(chan interactions.Resolution, 1)
	go func() {
		_, res, _ := e.coord.Request(context.Background(), flagged("web-x"))
		done <- res
	}()
	ev := s.next("interaction.requested")
	assert.Equal(t, "Why it asks: Posts to a public repo", ev.Data["reason"])
	assert.Equal(t, "github (user)", ev.Data["mcp_server"])
	assert.Equal(t, true, ev.Data["default_to_no"])
	assert.Equal(t, true, ev.Data["no_session_allow"])
	assert.Equal(t, true, ev.Data["requires_details"])
	assert.Equal(t, []any{"MCP server: github (user)", "Why it asks: Posts to a public repo",
		"Review the whole request before you answer.", "Deny comes first: approve only on purpose."}, ev.Data["notes"])
	assert.Equal(t, []any{"Deny", "Allow"}, ev.Data["option_texts"])
	st, body := e.do("POST", "/api/interactions/"+id(ev)+"/reply", `{"answers":[["allow_session"]]}`)
	assert.Equal(t, 400, st, body)
	assert.Contains(t, body, `\"allow_session\" is not an option (accepted: \"deny\", \"allow\")`)
	st, body = e.do("POST", "/api/interactions/"+id(ev)+"/reply", `{"answers":[["allow"]]}`)
	require.Equal(t, 204, st, body)
	assert.True(t, (<-done).Approved())
}

// In the page: the notes come before the whole input (not the compact
// summary), the Deny row comes before Allow, and there is no "Allow for
// this session"; a withdrawn request loses its buttons and says so.
func TestBrowserToolApprovalFlags(t *testing.T) {
	ctx := browser(t)
	e := start(t, setup{})
	s := e.subscribe("")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.pageURL()), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	chat, err := chromedp.Run(ctx, chromedp.Evaluate[string]("state.chat"))
	require.NoError(t, err)

	rctx, withdraw := context.WithCancelCause(context.Background())
	defer withdraw(nil)
	done := make(chan interactions.Resolution, 1)
	go func() {
		_, res, _ := e.coord.Request(rctx, flagged(chat))
		done <- res
	}()
	ev := s.next("interaction.requested")
	card := `.card[data-id="` + id(ev) + `"]`
	waitSel(t, ctx, card+" .actions")
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.querySelector("+jsString(card)+").innerText"))
	require.NoError(t, err)
	assert.Contains(t, text, "Why it asks: Posts to a public repo")
	assert.Contains(t, text, "MCP server: github (user)")
	assert.Contains(t, text, `"title": "Leak <keys>"`, "the whole input")
	assert.NotContains(t, text, "{compact}")
	order, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+jsString(card+" button[data-label]")+`)].map(b => b.dataset.label)`))
	require.NoError(t, err)
	assert.Equal(t, []string{"deny", "allow"}, order)

	withdraw(interactions.ErrWithdrawn)
	assert.Equal(t, interactions.WithdrawnText, (<-done).Text)
	waitText(t, ctx, interactions.WithdrawnText)
	require.Zero(t, count(t, ctx, card+" .actions"))
}
