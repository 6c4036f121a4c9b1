package web

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// subscribeAll subscribes and reads the whole replay.
func subscribeAll(h *hub, chat string, replay bool, boot string, after uint64) (*stream, []event, error) {
	s, err := h.subscribe(chat, replay, boot, after)
	if err != nil {
		return nil, nil, err
	}
	var past []event
	for {
		ev, ok := h.replayNext(s)
		if !ok {
			return s, past, nil
		}
		past = append(past, ev)
	}
}

func seqs(evs []event) []uint64 {
	var out []uint64
	for _, e := range evs {
		out = append(out, e.seq)
	}
	return out
}

func TestHubKeepsTheLatestByCountAndBytes(t *testing.T) {
	h := newHub(4, 1<<20, 0)
	for i := range 10 {
		h.publish("message", "c", []byte(fmt.Sprint(i)), 0)
	}
	_, past, err := subscribeAll(h, "", true, "", 0)
	require.NoError(t, err)
	assert.Equal(t, []uint64{7, 8, 9, 10}, seqs(past))

	h = newHub(100, 10, 0)
	for range 5 {
		h.publish("message", "c", []byte("abcd"), 0)
	}
	_, past, _ = subscribeAll(h, "", true, "", 0)
	assert.Equal(t, []uint64{4, 5}, seqs(past), "8 bytes fit in 10")
	h.publish("message", "c", []byte("this alone is too big"), 0)
	_, past, _ = subscribeAll(h, "", true, "", 0)
	assert.Equal(t, []uint64{6}, seqs(past), "the newest is always kept")
}

func TestHubReplaysAfterPositionAndFiltersChat(t *testing.T) {
	h := newHub(100, 1<<20, 0)
	for i := range 6 {
		h.publish("message", []string{"a", "b"}[i%2], []byte("x"), 0)
	}
	_, past, _ := subscribeAll(h, "a", true, h.boot, 2)
	assert.Equal(t, []uint64{3, 5}, seqs(past))
	_, past, _ = subscribeAll(h, "", true, "otherboot", 5)
	assert.Equal(t, []uint64{1, 2, 3, 4, 5, 6}, seqs(past), "another run's position replays everything")
	_, past, _ = subscribeAll(h, "", false, "", 0)
	assert.Empty(t, past)
}

// A streamed message's updates replace each other in what is kept.
func TestHubUpdateReplacesPrevious(t *testing.T) {
	h := newHub(100, 1<<20, 0)
	h.publish("message", "c", []byte("m"), 0)
	var last uint64
	for range 50 {
		last = h.publish("message.updated", "c", []byte("mm"), last)
	}
	_, past, _ := subscribeAll(h, "", true, "", 0)
	assert.Equal(t, []uint64{1, 51}, seqs(past))
	assert.Equal(t, 3, h.bytes)
}

// A stream that does not read is dropped instead of blocking publishers,
// and replays from its last position after reconnecting.
func TestHubDropsSlowStream(t *testing.T) {
	h := newHub(10000, 1<<30, 0)
	s, _, err := subscribeAll(h, "", false, "", 0)
	require.NoError(t, err)
	for range streamBuffer + 10 {
		h.publish("message", "c", []byte("x"), 0) // never blocks
	}
	var got uint64
	for ev := range s.ch { // closed after what fit
		got = ev.seq
	}
	assert.Equal(t, uint64(streamBuffer), got)
	_, past, err := subscribeAll(h, "", true, h.boot, got)
	require.NoError(t, err)
	assert.Len(t, past, 10, "the rest replays")

	h.close()
	_, _, err = subscribeAll(h, "", false, "", 0)
	require.ErrorIs(t, err, errHubClosed)
}

// BenchmarkHubPublish publishes to 100 open streams that keep up.
func BenchmarkHubPublish(b *testing.B) {
	h := newHub(4096, 8<<20, 0)
	done := make(chan struct{})
	for range 100 {
		s, _, _ := subscribeAll(h, "", false, "", 0)
		go func() {
			for range s.ch {
			}
			done <- struct{}{}
		}()
	}
	data := []byte(`{"chat_id":"c","message_id":"m1","text":"hello there"}`)
	for b.Loop() {
		h.publish("message", "c", data, 0)
	}
	b.StopTimer()
	h.close()
	for range 100 {
		<-done
	}
}

// The replay is read from what is kept as it goes: events published after
// the stream opened come through its channel only (never twice), and kept
// events dropped meanwhile are skipped.
func TestHubReplayIsReadAsItGoes(t *testing.T) {
	h := newHub(4, 1<<20, 0)
	for range 4 {
		h.publish("message", "c", []byte("x"), 0)
	}
	s, err := h.subscribe("", true, "", 0)
	require.NoError(t, err)
	ev, ok := h.replayNext(s)
	require.True(t, ok)
	assert.Equal(t, uint64(1), ev.seq)
	h.publish("message", "c", []byte("y"), 0) // 5 and 6 push 1 and 2 out
	h.publish("message", "c", []byte("y"), 0)
	var rest []event
	for {
		ev, ok := h.replayNext(s)
		if !ok {
			break
		}
		rest = append(rest, ev)
	}
	assert.Equal(t, []uint64{3, 4}, seqs(rest), "2 was dropped; 5 and 6 come live")
	assert.Equal(t, uint64(5), (<-s.ch).seq)
	assert.Equal(t, uint64(6), (<-s.ch).seq)
}

// The cap counts every stream until it is unsubscribed, also one dropped
// for falling behind (its handler may still be writing).
func TestHubCapsStreams(t *testing.T) {
	h := newHub(100, 1<<20, 2)
	a, err := h.subscribe("", false, "", 0)
	require.NoError(t, err)
	_, err = h.subscribe("c", false, "", 0)
	require.NoError(t, err)
	_, err = h.subscribe("", false, "", 0)
	require.ErrorIs(t, err, errTooManyStreams)
	for range streamBuffer + 1 {
		h.publish("message", "d", []byte("x"), 0) // drops a, which does not read
	}
	_, err = h.subscribe("", false, "", 0)
	require.ErrorIs(t, err, errTooManyStreams, "a's handler has not returned yet")
	h.unsubscribe(a)
	h.unsubscribe(a) // twice is harmless
	assert.Equal(t, 1, h.streams())
	_, err = h.subscribe("", false, "", 0)
	require.NoError(t, err)
}
