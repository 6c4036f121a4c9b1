package claude_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
	"github.com/leashd/leashd/interactions"
)

// lastPrompt is the newest user text of a call that is not a system
// reminder.
func lastPrompt(r *fakeapi.Request) string {
	texts := r.UserTexts()
	for i := len(texts) - 1; i >= 0; i-- {
		if !strings.HasPrefix(strings.TrimSpace(texts[i]), "<system-reminder>") {
			return texts[i]
		}
	}
	return ""
}

func TestE2ESeveralChatsAtOnce(t *testing.T) {
	const limit = 2
	s := newStack(t, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = limit })
	peak := s.countProcesses(t)
	s.api.Otherwise(func(r *fakeapi.Request) fakeapi.Reply {
		p := lastPrompt(r)
		if strings.Contains(p, "ask") {
			if _, ok := r.ToolResult(askID(r)); !ok {
				return fakeapi.Tool("AskUserQuestion", map[string]any{"questions": []map[string]any{
					{"question": "Colour for " + p + "?", "header": "Colour", "multiSelect": false,
						"options": []map[string]string{{"label": "Red", "description": "r"}, {"label": "Blue", "description": "b"}}},
				}})
			}
		}
		return fakeapi.Text("answer to " + p)
	})
	chats := []string{"c1", "c2", "c3", "c4"}
	var wg sync.WaitGroup
	for _, c := range chats {
		wg.Go(func() {
			_, err := s.e.HandleMessage(context.Background(), connectors.Incoming{ChatID: c, UserID: "u-" + c, Text: "ask " + c})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	// answer each chat's question as it comes; two chats wait for a slot
	for range chats {
		var it interactions.Interaction
		s.conn.WaitFor(t, "an unanswered question", func() bool {
			for _, x := range s.conn.Shown {
				if !answered(s.conn.Updates, x.ID) && len(s.coord.Pending(x.ChatID)) > 0 {
					it = x
					return true
				}
			}
			return false
		})
		_, err := s.e.Reply(context.Background(), it.ID, interactions.Reply{By: "u-" + it.ChatID, Answers: []string{"Blue"}})
		require.NoError(t, err)
		s.conn.WaitFor(t, "the answer to be resolved", func() bool { return answered(s.conn.Updates, it.ID) })
	}
	s.conn.WaitFor(t, "four summaries", func() bool { return len(s.conn.Summaries) == len(chats) })
	var results []string
	queued := map[string]string{} // chat → what it was told about the queue
	s.conn.Lock()
	for _, d := range s.conn.Summaries {
		results = append(results, d.Result)
	}
	for _, e := range s.conn.Said {
		chat, said := enginetest.Entry(e)
		if strings.Contains(said, "agent slots are busy") {
			assert.NotContains(t, queued, chat, "a chat is told its place once")
			queued[chat] = said
		}
	}
	s.conn.Unlock()
	assert.ElementsMatch(t, []string{"answer to ask c1", "answer to ask c2", "answer to ask c3", "answer to ask c4"}, results)
	assert.LessOrEqual(t, s.e.SessionsActive(), limit)
	// every chat had its own CLI, never more than limit alive at once
	assert.Len(t, s.starts(t), len(chats))
	assert.Equal(t, limit, peak(), "CLI processes alive at once")
	// the two chats beyond the limit were told their place
	var told []string
	for _, said := range queued {
		// What follows (how many chats wait for an answer) depends on
		// how far the first chats got; engine tests check it.
		first, _, _ := strings.Cut(said, " frees up.")
		told = append(told, first+" frees up.")
	}
	assert.ElementsMatch(t, []string{
		"All 2 agent slots are busy; you are number 1 in the queue. Your prompt runs as soon as one frees up.",
		"All 2 agent slots are busy; you are number 2 in the queue. Your prompt runs as soon as one frees up.",
	}, told, "queued chats: %v", queued)
	for _, c := range s.api.Calls() {
		if res, ok := c.ToolResult(askID(c)); ok {
			assert.Contains(t, res.ResultText(), `"="Blue"`)
		}
	}
}

func askID(r *fakeapi.Request) string {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_use" && b.Name == "AskUserQuestion" {
				return b.ID
			}
		}
	}
	return ""
}

func answered(evs []interactions.Event, id string) bool {
	for _, ev := range evs {
		if ev.Interaction.ID == id && ev.Type == interactions.EventResolved {
			return true
		}
	}
	return false
}
