package interactions_test

import (
	"testing"

	"github.com/leashd/leashd/interactions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolApproval(t *testing.T) {
	tests := []struct {
		name     string
		text     bool // send as typed text in the chat
		reply    interactions.Reply
		status   interactions.Status
		decision string
		reason   string
	}{
		{"allow", false, interactions.Reply{Answers: []string{"allow"}}, interactions.StatusAnswered, interactions.DecisionAllow, ""},
		{"allow_session", false, interactions.Reply{Answers: []string{"allow_session"}}, interactions.StatusAnswered, interactions.DecisionAllowSession, ""},
		{"deny", false, interactions.Reply{Answers: []string{"deny"}}, interactions.StatusRejected, interactions.DecisionDeny, "The user denied this tool call."},
		{"deny with a reason", false, interactions.Reply{Answers: []string{"deny"}, Text: "use make clean"}, interactions.StatusRejected, interactions.DecisionDeny, "use make clean"},
		{"typed text denies with that reason", true, interactions.Reply{Text: "not on main"}, interactions.StatusRejected, interactions.DecisionDeny, "not on main"},
		{"reject", false, interactions.Reply{Reject: true}, interactions.StatusRejected, interactions.DecisionReject, "The user rejected this request."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newCoord(t)
			done := request(t.Context(), c, toolApproval("c"))
			it := p.Next(t)
			assert.Equal(t, "Bash", it.ToolName)
			assert.JSONEq(t, `{"command":"rm -rf build"}`, string(it.ToolInput))
			tt.reply.By = "u3"
			var err error
			if tt.text {
				_, _, err = c.ReplyText("c", tt.reply)
			} else {
				_, err = c.Reply(it.ID, tt.reply)
			}
			require.NoError(t, err)
			r := await(t, done)
			assert.Equal(t, tt.status, r.res.Status)
			assert.Equal(t, tt.decision, r.res.Decision)
			assert.Equal(t, tt.reason, r.res.Text)
			assert.Equal(t, "u3", r.res.By)
		})
	}

	t.Run("unknown decision", func(t *testing.T) {
		c, p := newCoord(t)
		done := request(t.Context(), c, toolApproval("c"))
		it := p.Next(t)
		_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{"yes"}})
		require.ErrorIs(t, err, interactions.ErrInvalidReply)
		assert.Contains(t, err.Error(), `(accepted: "allow", "allow_session", "deny")`)
		_, err = c.Reply(it.ID, interactions.Reply{Answers: []string{"allow", "deny"}})
		require.ErrorIs(t, err, interactions.ErrInvalidReply)
		notYet(t, done)
	})
}
