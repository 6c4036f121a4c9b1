package demo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent/demo"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/interactions"
)

// planReview runs the demo behind the real engine and coordinator, sends
// "plan" and resolves the plan review with decide; it returns what the demo
// said.
func planReview(t *testing.T, decide func(e *engine.Engine, it interactions.Interaction), copts ...interactions.Opt) string {
	t.Helper()
	c := enginetest.NewConn("test")
	coord := interactions.New(copts...)
	e := enginetest.New(demo.New(demo.WithDelay(0)), coord, func(_ *engine.Deps, c *engine.Config) { c.CloseTimeout = 5 * time.Second })
	e.AddConnector(c)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-ran)
	})
	route, err := e.HandleMessage(ctx, connectors.Incoming{ChatID: "test:1", UserID: "u", Text: "plan"})
	require.NoError(t, err)
	require.Equal(t, connectors.RouteAgent, route)
	it := c.WaitShown(t, 1)
	require.Equal(t, interactions.KindPlanReview, it.Kind)
	decide(e, it)
	c.WaitDone(t, 1)
	c.Lock()
	defer c.Unlock()
	// what the demo said, streamed or not, as one text
	return strings.Join(enginetest.Texts(c.Told), "")
}

// What the demo reports for each way a plan review ends without approval,
// from the message the engine really sends.
func TestPlanDenialsThroughTheEngine(t *testing.T) {
	reply := func(r interactions.Reply) func(*engine.Engine, interactions.Interaction) {
		return func(e *engine.Engine, it interactions.Interaction) {
			r.By = "u"
			_, err := e.Reply(context.Background(), it.ID, r)
			require.NoError(t, err)
		}
	}
	t.Run("adjust", func(t *testing.T) {
		said := planReview(t, reply(interactions.Reply{Answers: []string{interactions.DecisionAdjust}, Text: "add tests first"}))
		assert.Contains(t, said, `Plan not approved, so I stay in plan mode. Your feedback: "add tests first"`)
	})
	t.Run("adjust, feedback typed as a message", func(t *testing.T) {
		said := planReview(t, func(e *engine.Engine, it interactions.Interaction) {
			out, err := e.Reply(context.Background(), it.ID, interactions.Reply{By: "u", Answers: []string{interactions.DecisionAdjust}})
			require.NoError(t, err)
			require.Equal(t, interactions.AwaitingFeedback, out)
			route, err := e.HandleMessage(context.Background(), connectors.Incoming{ChatID: "test:1", UserID: "u", Text: "smaller steps"})
			require.NoError(t, err)
			require.Equal(t, connectors.RouteInteraction, route)
		})
		assert.Contains(t, said, `Your feedback: "smaller steps"`)
	})
	// What /reject and Ctrl+C in the terminal, Reject on the page and the
	// API's /reject route send.
	t.Run("/reject", func(t *testing.T) {
		said := planReview(t, reply(interactions.Reply{Reject: true}))
		assert.Contains(t, said, `Plan rejected ("The user rejected this request."), so I stop here and change nothing.`)
		assert.NotContains(t, said, "adjust")
		assert.NotContains(t, said, "Your feedback")
	})
	t.Run("expired", func(t *testing.T) {
		said := planReview(t, func(*engine.Engine, interactions.Interaction) {}, interactions.WithTimeout(50*time.Millisecond))
		assert.Contains(t, said, `Plan review expired ("No answer came within 50ms; the user did not respond."), so I stay in plan mode and change nothing.`)
		assert.NotContains(t, said, "Your feedback")
	})
}
