package web_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/interactions"
)

// groupConn owns group chats, like Telegram's groups.
type groupConn struct{ otherConn }

func (g *groupConn) IsGroupChat(string) bool { return true }

// The page and the API watch a group chat that needs 2 approvals: the
// request says so, the page's approval is counted as one approver ("web")
// and shown as "1 of 2 approvals — web", a second one from the page is not
// counted (and not an error), and another approver in the group resolves
// it; the resolved event names both.
func TestWebIsOneApproverOfAQuorum(t *testing.T) {
	g := &groupConn{}
	e := start(t, setup{extra: []connectors.Connector{g}, engOpts: []enginetest.Setup{func(_ *engine.Deps, c *engine.Config) { c.ApprovalQuorum = 2 }}})
	s := e.subscribe("")
	_, err := e.eng.HandleMessage(context.Background(), connectors.Incoming{ChatID: "telegram:-5", UserID: "7", Text: "bash"})
	require.NoError(t, err)
	b := s.next("interaction.requested")
	assert.EqualValues(t, 2, b.Data["quorum"])
	assert.Equal(t, "0 of 2 approvals", b.Data["quorum_text"])

	st, body := e.reply(id(b), `{"answers":[["allow"]]}`)
	require.Equal(t, http.StatusAccepted, st, body)
	assert.Contains(t, body, `"counted":true`)
	up := s.next("interaction.updated")
	assert.Equal(t, "1 of 2 approvals — web", up.Data["quorum_text"])

	st, body = e.reply(id(b), `{"answers":[["allow"]]}`)
	require.Equal(t, http.StatusOK, st, body)
	assert.Contains(t, body, `"already_approved":true`)

	out, err := e.eng.Reply(context.Background(), id(b), interactions.Reply{By: "42", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	assert.Equal(t, interactions.Resolved, out)
	res := s.resolved(id(b))
	approvals, _ := res.Data["approvals"].([]any)
	require.Len(t, approvals, 2)
	assert.Equal(t, "web", approvals[0].(map[string]any)["by"])
	assert.Equal(t, "42", approvals[1].(map[string]any)["by"])
	s.saying("Bash `echo hello` allowed")
}
