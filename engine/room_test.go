package engine_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
)

// A chat whose runner is full keeps what the person sent: it is told once
// why it waits, later messages queue behind the first, and when room comes
// (a runner connects: SlotsChanged) they all run, in order.
func TestChatWaitsForRoomOnItsRunner(t *testing.T) {
	var full atomic.Bool
	full.Store(true)
	ag := &enginetest.ScriptAgent{OpenErr: func(agent.SessionOptions) error {
		if full.Load() {
			return fmt.Errorf("starting claude: this chat's runner r1 is full (2 agents): %w", agent.ErrNoRoom)
		}
		return nil
	}}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "first")
	conn.WaitSaid(t, "Waiting for room to start the agent: starting claude: this chat's runner r1 is full")
	send(t, e, "c1", "second")
	send(t, e, "c1", "third")
	assert.Empty(t, ag.Prompts())

	full.Store(false)
	e.SlotsChanged()
	assert.Equal(t, []string{"first", "second", "third"}, ag.WaitPrompts(t, 3))
	conn.WaitDone(t, 3)
	said := conn.SaidText()
	assert.Equal(t, 1, strings.Count(said, "Waiting for room"), "told once: %s", said)
	assert.NotContains(t, said, "Could not start the agent")
}

// Two chats waiting for room do not wake each other: a failed try frees a
// reserved slot but starts nobody, so the engine stays quiet until room
// may have come.
func TestChatsWaitingForRoomDoNotSpin(t *testing.T) {
	var tries atomic.Int64
	ag := &enginetest.ScriptAgent{OpenErr: func(agent.SessionOptions) error {
		tries.Add(1)
		return fmt.Errorf("no runner is connected: %w", agent.ErrNoRoom)
	}}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "one")
	send(t, e, "c2", "two")
	conn.WaitSaid(t, "Waiting for room")
	conn.WaitFor(t, "both told", func() bool { return strings.Count(strings.Join(conn.Said, "\n"), "Waiting for room") == 2 })
	before := tries.Load()
	e.SlotsChanged() // one more try each, and no more
	conn.WaitFor(t, "the retries", func() bool { return tries.Load() >= before+2 })
	e.SlotsChanged()
	conn.WaitFor(t, "the next retries", func() bool { return tries.Load() >= before+4 })
	assert.LessOrEqual(t, tries.Load(), before+4, "a failed try wakes nobody")
}
