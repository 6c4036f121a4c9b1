package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/connectors"
)

// scriptLogin is how the script agent says it logs in.
var scriptLogin = agent.About{
	Label:       "the script agent",
	LoginHelp:   "The script agent logs in on the machine that runs leashd: set SCRIPT_KEY there.",
	NotLoggedIn: "The script agent is not logged in. Set SCRIPT_KEY on the machine.",
}

// /login (an agent's own command, which runs on the machine) is answered
// with the agent's own words on how to give it its credentials, not
// "Unknown command".
func TestLoginCommandSaysHowToLogIn(t *testing.T) {
	ag := &enginetest.ScriptAgent{Info: scriptLogin, Turn: func(context.Context, *enginetest.ScriptSession, string, agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil)
	assert.Equal(t, connectors.RouteCommand, send(t, e, "c1", "/login"))
	conn.WaitSaid(t, "c1|The script agent logs in on the machine that runs leashd: set SCRIPT_KEY there.")
	assert.NotContains(t, conn.SaidText(), "Unknown command")
	assert.Empty(t, ag.Prompts(), "/login is not sent to the agent")

	send(t, e, "c1", "/help")
	conn.WaitSaid(t, "/login — How to give the agent its credentials")
}

// A turn the agent could not run for want of credentials ends with how to
// log in; another failed turn does not.
func TestNotLoggedInSaysHowToLogIn(t *testing.T) {
	ag := &enginetest.ScriptAgent{Info: scriptLogin, Turn: func(_ context.Context, _ *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if prompt == "broken" {
			h.Text("API Error: 500")
			return agent.Result{Text: "API Error: 500", IsError: true, NumTurns: 1}, nil
		}
		h.Text("Not logged in · Please run /login")
		return agent.Result{Text: "Not logged in · Please run /login", IsError: true, AuthFailed: true, NumTurns: 1}, nil
	}}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "broken")
	conn.WaitFor(t, "the failed turn", func() bool { return len(conn.Summaries) == 1 })
	send(t, e, "c1", "hello")
	conn.WaitSaid(t, "c1|The script agent is not logged in. Set SCRIPT_KEY on the machine.")
	conn.WaitFor(t, "both summaries", func() bool { return len(conn.Summaries) == 2 })
	assert.Equal(t, 1, strings.Count(conn.SaidText(), "is not logged in"), "said once, after the turn that could not log in, not after the other failure")
}
