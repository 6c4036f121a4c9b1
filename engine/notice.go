package engine

import (
	"context"
	"strings"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/approval"
)

// noticePrefix marks each kind of notice in the chat.
var noticePrefix = map[string]string{
	agent.NoticeDenied:     "🚫 ",
	agent.NoticeWritesLost: "⚠️ ",
	agent.NoticeReset:      "🧹 ",
	agent.NoticeLost:       "⚠️ ",
}

// agentNotice shows what an agent reported in its chat, logs it, and
// records it in the audit log. It runs on the agent's reader: saying and
// recording go on in the background, in order per call.
func (e *Engine) agentNotice(chatID string, n agent.Notice) {
	text := strings.TrimSpace(approval.PlainText(n.Text))
	if text == "" {
		return
	}
	text = approval.Excerpt(text, 20)
	at := time.Now()
	e.log.Warn("agent notice", "chat", chatID, "kind", n.Kind, "text", text)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if e.opts.persistent {
			if err := e.store.RecordNotice(ctx, chatID, n.Kind, text, at); err != nil {
				e.log.Error("recording an agent notice in the audit log", "chat", chatID, "kind", n.Kind, "err", err)
			}
		}
		e.say(ctx, chatID, noticePrefix[n.Kind]+text)
	}()
}
