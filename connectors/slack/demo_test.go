package slack_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/connectors/slack/slackfake"
	"github.com/leashd/leashd/engine/agent/demo"
)

// The "done when", with the built-in demo agent: a team prompts
// the agent in a thread and an approver decides its plan with a button, in
// Socket Mode and in HTTP mode.
func TestTeamPlanApprovalWithDemoAgent(t *testing.T) {
	for _, mode := range []string{"socket", "http"} {
		t.Run(mode, func(t *testing.T) {
			e := start(t, envOpt{httpMode: mode == "http", agent: demo.New(demo.WithDelay(0))})
			root := e.mention("C7", allowedUser, "", "make a plan please")
			btn := e.waitButtons("C7", "Plan review")
			assert.Equal(t, root, btn.ThreadTS)
			e.tap(allowedUser, btn, "Approve, auto-accept edits")
			e.waitEphemeral(allowedUser, "only approvers")
			e.tap(approverUser, btn, "Approve, auto-accept edits")
			e.waitText("C7", "✅ *Approve, auto-accept edits* — <@U2>")
			m := e.waitText("C7", "Going ahead with the plan.")
			assert.Equal(t, root, m.ThreadTS)
			// A reply in the thread is the same session's next prompt.
			e.push(slackfake.MessageEvent("C7", "channel", allowedUser, e.nextTS(), root, "ask me a question"))
			q := e.waitButtons("C7", "Which database?")
			assert.Equal(t, root, q.ThreadTS)
			e.tap(allowedUser, q, "SQLite")
			f := e.waitButtons("C7", "Which features?")
			for _, b := range slackfake.Buttons(f.Blocks) {
				if strings.HasPrefix(b.Text, "☐ ") {
					e.tap(allowedUser, f, b.Text)
					e.waitMsg("C7", "ticked", func(m slackfake.Message) bool {
						return m.TS == f.TS && hasButton(m, "✓ "+strings.TrimPrefix(b.Text, "☐ "))
					})
					break
				}
			}
			e.tap(allowedUser, f, "Done")
			e.waitText("C7", "Which database? SQLite")
		})
	}
}
