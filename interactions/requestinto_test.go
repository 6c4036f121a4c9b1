package interactions_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// RequestInto completes the caller's interaction in place and answers like
// Request.
func TestRequestIntoCompletesTheInteraction(t *testing.T) {
	c, p := newCoord(t, interactions.WithTimeout(time.Hour))
	ctx := interactions.WithAsker(t.Context(), "api")
	it := interactions.Interaction{ChatID: "c1", Kind: interactions.KindToolApproval, ToolName: "Bash", ToolSummary: "rm -rf build"}
	done := make(chan interactions.Resolution, 1)
	go func() {
		res, err := c.RequestInto(ctx, &it)
		assert.NoError(t, err)
		done <- res
	}()
	shown := p.Next(t)
	_, err := c.Reply(shown.ID, interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	res := await(t, done)

	assert.Equal(t, interactions.StatusAnswered, res.Status)
	assert.Equal(t, "u1", res.By)
	// Read only after RequestInto returned: *it is the caller's again.
	assert.Equal(t, shown.ID, it.ID)
	assert.Equal(t, "api", it.Asker)
	assert.False(t, it.AskedAt.IsZero())
	assert.Equal(t, it.AskedAt.Add(time.Hour), it.Deadline)
	assert.Equal(t, interactions.ToolOptions, it.Options)
}

// The caller may reuse its Interaction as soon as RequestInto returns, while
// other goroutines still settle, cancel, list and toggle interactions: the
// coordinator must not read it any more (go test -race fails otherwise).
func TestRequestIntoCallerReusesItsInteraction(t *testing.T) {
	c, p := newCoord(t, interactions.WithTimeout(2*time.Millisecond)) // some expire: a late timer too
	ctx := t.Context()
	const askers, rounds = 8, 50
	var people sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		people.Go(func() {
			for {
				select {
				case <-stop:
					return
				case it := <-p.ch:
					switch it.ID[0] % 4 {
					case 0:
						_, _ = c.Reply(it.ID, interactions.Reply{By: "u", Answers: []string{it.Options[0].Label}})
					case 1:
						_, _, _ = c.ReplyText(it.ChatID, interactions.Reply{By: "u", Text: "because"})
					case 2:
						_, _ = c.Toggle(it.ID, it.Options[0].Label, interactions.Reply{By: "u"})
						c.CancelPending(it.ChatID, "gone")
					default:
						_ = c.Pending("")
						c.Cancel(it.ID, "withdrawn")
					}
				}
			}
		})
	}
	var asking sync.WaitGroup
	for a := range askers {
		asking.Go(func() {
			var it interactions.Interaction
			for r := range rounds {
				it = question("chat"+string(rune('a'+a)), "Which?", "x", "y")
				it.MultiSelect = r%2 == 0
				if _, err := c.RequestInto(ctx, &it); err != nil {
					t.Error(err)
					return
				}
				// Reuse at once: overwrite every field the coordinator reads.
				it = interactions.Interaction{ID: "reused", ChatID: "elsewhere", Question: "scribbled"}
				it.Options = []interactions.Option{{Label: "z"}}
			}
		})
	}
	asking.Wait()
	close(stop)
	people.Wait()
	assert.Empty(t, c.Pending(""))
}

// A cancelled context ends a RequestInto like a Request.
func TestRequestIntoCancelled(t *testing.T) {
	c, p := newCoord(t)
	ctx, cancel := context.WithCancel(t.Context())
	it := question("c1", "Which?", "a", "b")
	done := make(chan interactions.Resolution, 1)
	go func() {
		res, err := c.RequestInto(ctx, &it)
		assert.NoError(t, err)
		done <- res
	}()
	p.Next(t)
	cancel()
	assert.Equal(t, interactions.StatusCancelled, await(t, done).Status)
}
