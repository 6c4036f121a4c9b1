package telegram_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine/agent/demo"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/interactions"
)

// With its default HTTP client, the connector keeps its connections to the
// Bot API: many chats sending at once, again and again, reuse the
// connections of the first burst instead of opening (with TLS, against
// Telegram) a new one for nearly every request. Go's default transport
// keeps only two idle connections per host.
func TestConcurrentSendsReuseConnections(t *testing.T) {
	const chats, bursts = 20, 5
	fake := tgfake.New()
	defer fake.Close()
	conn := telegram.New(fake.Token(), telegram.WithAPIURL(fake.URL()), telegram.WithLimits(telegram.Limits{}))
	eng := enginetest.New(demo.New(), interactions.New())
	eng.AddConnector(conn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	require.True(t, fake.Wait(waitLimit, func() bool { return conn.Ready() == nil }))

	for b := range bursts {
		var wg sync.WaitGroup
		for i := range chats {
			wg.Go(func() {
				assert.NoError(t, conn.Say(ctx, "telegram:"+strconv.Itoa(1000+i), "burst "+strconv.Itoa(b)))
			})
		}
		wg.Wait()
	}
	for i := range chats {
		require.Len(t, fake.Messages(int64(1000+i)), bursts, "chat %d got every message", 1000+i)
	}
	// At most one connection per request in flight at once (the chats'
	// sends and the long poll), however many bursts: the old client opened
	// about chats-2 more for each burst.
	assert.LessOrEqual(t, fake.Connections(), chats+3, "connections opened for %d bursts of %d concurrent sends", bursts, chats)
}
