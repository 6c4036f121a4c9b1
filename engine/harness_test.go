package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// start runs an engine with one recording connector named "web" (it owns
// every chat) until the test ends.
func start(t *testing.T, ag agent.Agent, coordOpts []interactions.Opt, opts ...enginetest.Setup) (*engine.Engine, *enginetest.Conn, *interactions.Coordinator) {
	t.Helper()
	coord := interactions.New(coordOpts...)
	e := enginetest.New(ag, coord, opts...)
	conn := enginetest.NewConn("web")
	e.AddConnector(conn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Error("engine did not stop")
		}
	})
	return e, conn, coord
}

func send(t *testing.T, e *engine.Engine, chatID, text string) connectors.Route {
	t.Helper()
	r, err := e.HandleMessage(context.Background(), connectors.Incoming{ChatID: chatID, UserID: "u1", Text: text})
	require.NoError(t, err)
	return r
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
