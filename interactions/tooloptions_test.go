package interactions_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

func labels(opts []interactions.Choice) []string {
	out := make([]string, len(opts))
	for i, o := range opts {
		out[i] = o.Label
	}
	return out
}

// A tool approval's options come from what the agent said: no "allow for
// this session" when it would not keep such a rule, Deny first when one
// stray tap must not approve. An option not offered is not accepted.
func TestToolApprovalOptionsFollowTheRequest(t *testing.T) {
	tests := []struct {
		name            string
		noSession, deny bool
		want            []string
	}{
		{"plain", false, false, []string{"allow", "allow_session", "deny"}},
		{"no session rule", true, false, []string{"allow", "deny"}},
		{"default to no", false, true, []string{"deny", "allow", "allow_session"}},
		{"both", true, true, []string{"deny", "allow"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newCoord(t)
			it := toolApproval("c")
			it.NoSessionAllow, it.DefaultToNo = tt.noSession, tt.deny
			ch := request(t.Context(), c, it)
			shown := p.Next(t)
			assert.Equal(t, tt.want, labels(shown.Options))
			assert.Equal(t, interactions.AnswerApproval, shown.AnswerMode())
			_, err := c.Reply(shown.ID, interactions.Reply{Answers: []string{interactions.DecisionAllowSession}})
			if tt.noSession {
				require.ErrorIs(t, err, interactions.ErrInvalidReply)
				assert.Contains(t, err.Error(), `"allow_session" is not an option`)
				_, err = c.Reply(shown.ID, interactions.Reply{Answers: []string{interactions.DecisionAllow}})
			}
			require.NoError(t, err)
			r := await(t, ch)
			assert.True(t, r.res.Approved())
		})
	}
}

// A request whose context the agent withdrew (ErrWithdrawn as the cause)
// is cancelled with WithdrawnText; any other cancellation keeps its own
// text.
func TestWithdrawnRequestSaysSo(t *testing.T) {
	c, p := newCoord(t)
	ctx, cancel := context.WithCancelCause(t.Context())
	ch := request(ctx, c, toolApproval("c"))
	p.Next(t)
	cancel(interactions.ErrWithdrawn)
	r := await(t, ch)
	assert.Equal(t, interactions.StatusCancelled, r.res.Status)
	assert.Equal(t, interactions.WithdrawnText, r.res.Text)

	ctx, cancel2 := context.WithCancel(t.Context())
	ch = request(ctx, c, toolApproval("c"))
	p.Next(t)
	cancel2()
	r = await(t, ch)
	assert.Equal(t, interactions.StatusCancelled, r.res.Status)
	assert.NotEqual(t, interactions.WithdrawnText, r.res.Text)
}
