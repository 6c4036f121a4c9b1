package interactions

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A chat's queue is reused when it asks again, and the queues of chats
// that asked once are dropped before they pile up; a chat with something
// pending is never dropped.
func TestChatsKeepQueuesBounded(t *testing.T) {
	var cs chats
	kept := &pending{it: &Interaction{ChatID: "kept"}}
	cs.add(kept)

	again := &pending{it: &Interaction{ChatID: "again"}}
	cs.add(again)
	q := again.chat
	cs.remove(again)
	assert.Empty(t, cs.pending("again"))
	next := &pending{it: &Interaction{ChatID: "again"}}
	cs.add(next)
	assert.Same(t, q, next.chat, "the idle queue is reused")
	cs.remove(next)

	for i := range 50_000 {
		p := &pending{it: &Interaction{ChatID: "chat-" + strconv.Itoa(i)}}
		cs.add(p)
		cs.remove(p)
		require.Nil(t, p.chat)
	}
	assert.LessOrEqual(t, len(cs.m), 2*keepIdle+2, "idle queues are dropped")
	assert.Equal(t, []*pending{kept}, cs.pending("kept"))
	cs.remove(kept)
	assert.Empty(t, cs.pending("kept"))
}
