package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
)

type noticeRec struct {
	chat, kind, text string
	at               time.Time
}

type noticeLog struct {
	engine.Store // sessions: in memory
	mu           sync.Mutex
	got          []noticeRec
}

func (l *noticeLog) RecordNotice(_ context.Context, chatID, kind, text string, at time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, noticeRec{chatID, kind, text, at})
	return nil
}

func (l *noticeLog) records() []noticeRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]noticeRec(nil), l.got...)
}

// What the agent reports outside its text — an auto-denial, lost writes —
// is said in the chat and kept in the audit log, terminal escapes dropped.
func TestAgentNoticesAreShownAndAudited(t *testing.T) {
	var ag *enginetest.ScriptAgent
	ag = &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		o := ag.Opened()[0]
		o.Notice(agent.Notice{Kind: agent.NoticeDenied, Text: "Claude Code denied Bash without asking: \x1b[31mrule\x1b[0m"})
		o.Notice(agent.Notice{Kind: agent.NoticeWritesLost, Text: "Claude Code could not save the session transcript (the disk is full)"})
		return agent.Result{Text: "ok"}, nil
	}}
	log := &noticeLog{Store: engine.NewMemStore()}
	e, conn, _ := start(t, ag, nil, func(d *engine.Deps, _ *engine.Config) { d.Store = log })
	send(t, e, "c1", "go")
	conn.WaitSaid(t, "🚫 Claude Code denied Bash without asking: rule")
	conn.WaitSaid(t, "⚠️ Claude Code could not save the session transcript (the disk is full)")
	require.Eventually(t, func() bool { return len(log.records()) == 2 }, 10*time.Second, 5*time.Millisecond)
	recs := log.records()
	kinds := map[string]string{}
	for _, r := range recs {
		assert.Equal(t, "c1", r.chat)
		assert.False(t, r.at.IsZero())
		kinds[r.kind] = r.text
	}
	assert.Equal(t, map[string]string{
		agent.NoticeDenied:     "Claude Code denied Bash without asking: rule",
		agent.NoticeWritesLost: "Claude Code could not save the session transcript (the disk is full)",
	}, kinds)
}
