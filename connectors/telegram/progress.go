package telegram

import "context"

// Progress implements connectors.Progresser: the progress line goes in
// italics under the turn's latest output message (a message of its own
// when the agent has said nothing yet), edited in place as output is,
// within the chat's rate limit; "" takes it away.
func (c *Connector) Progress(ctx context.Context, chat, text string) error {
	id, err := parseChat(chat)
	if err != nil {
		return err
	}
	c.mu.Lock()
	s := c.streams[id]
	if s == nil {
		if text == "" {
			c.mu.Unlock()
			return nil
		}
		s = &stream{segs: []*segment{{}}}
		c.streams[id] = s
	}
	s.progress = text
	c.mu.Unlock()
	done := c.out.enqueue(context.WithoutCancel(ctx), id, "stream", func(ctx context.Context, send call) error {
		return c.syncStream(ctx, send, id, true)
	})
	c.bg.add()
	go func() {
		defer c.bg.done()
		if err := <-done; err != nil {
			c.log.Warn("telegram: showing a turn's progress failed", "chat", id, "err", err)
		}
	}()
	return nil
}

// withProgress is segment si's HTML with the stream's progress line under
// it when si is the last segment. Called with c.mu held.
func withProgress(html string, s *stream, si int) string {
	if s.progress == "" || si != len(s.segs)-1 {
		return html
	}
	line := "<i>" + escape(s.progress) + "</i>"
	if html == "" {
		return line
	}
	return html + "\n\n" + line
}
