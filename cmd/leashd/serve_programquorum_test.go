package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/interactions/wire"
)

// TestServeProgramRequestsNeedQuorumAndApprovers: in a Telegram group with
// LEASHD_APPROVAL_QUORUM=2 and two approvers, a program's tool approval and
// its approval (POST /api/interactions) are held to what holds for the
// agent's: Carol, an allowed user who is no approver, is refused; Alice's
// tap counts one of two and the caller still sees it pending; Bob's
// decides it.
func TestServeProgramRequestsNeedQuorumAndApprovers(t *testing.T) {
	fake := tgfake.New()
	defer fake.Close()
	const group, alice, bob, carol = int64(-500), int64(11), int64(12), int64(13)
	fake.SetUserName(alice, "Alice")
	fake.SetUserName(bob, "Bob")
	fake.SetUserName(carol, "Carol")
	url, logs, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_TELEGRAM_BOT_TOKEN="+fake.Token(),
		"LEASHD_TELEGRAM_API_URL="+fake.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=11,12,13",
		"LEASHD_TELEGRAM_APPROVERS=11,12",
		"LEASHD_APPROVAL_QUORUM=2")
	defer func() { require.NoError(t, stop()) }()
	c := tgQuorumChat{t: t, fake: fake, logs: logs, group: group}

	for _, tc := range []struct{ body, shows, approve string }{
		{`{"chat_id":"telegram:-500","kind":"tool_approval","tool_name":"Bash","tool_input":{"command":"make deploy-prod"}}`, "make deploy-prod", "Allow"},
		{`{"chat_id":"telegram:-500","kind":"approval","question":"Deploy v2 to prod?"}`, "Deploy v2 to prod?", "✅ Approve"},
	} {
		code, body := postJSON(t, url+"/api/interactions", tc.body)
		require.Equal(t, http.StatusCreated, code, body)
		var created struct {
			ID string `json:"interaction_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &created))
		msg := c.waitBot(group, tc.shows, func(m tgfake.Message) bool {
			return strings.Contains(m.Text, tc.shows) && len(m.Buttons()) > 0
		})
		a := c.tap(carol, msg.ID, tc.approve)
		assert.Contains(t, a.Text, "only approvers", tc.shows)
		a = c.tap(alice, msg.ID, tc.approve)
		assert.Contains(t, a.Text, "more approvers are needed", tc.shows)
		var out wire.Outcome
		getJSON(t, url+"/api/interactions/"+created.ID, &out)
		assert.Equal(t, "pending", out.Status, "one approver of two: %s", tc.shows)

		c.tap(bob, msg.ID, tc.approve)
		getJSON(t, url+"/api/interactions/"+created.ID+"?wait=30", &out)
		assert.Equal(t, "answered", out.Status, tc.shows)
		assert.True(t, out.Approved, tc.shows)
	}
}
