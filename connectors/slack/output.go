package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Slack's limits.
const (
	maxSection = 3000 // characters of a section's text
	maxBlocks  = 50   // blocks per message
	maxButton  = 75   // characters of a button's text
	maxMessage = 3900 // characters of a plain message leashd posts (Slack shows up to 4000)
)

// retry runs call, an invocation of the Web API method, waiting out 429s
// (Retry-After, at least a second) and trying again until it goes through
// or ctx ends, so nothing is dropped. The pause is shared by every caller
// of the method: while one waits out a 429, the others do not send either.
func (c *Connector) retry(ctx context.Context, method string, call func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		if err := c.waitPause(ctx, method); err != nil {
			return fmt.Errorf("waiting out a rate limit of %s: %w", method, err)
		}
		err := call(ctx)
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) {
			return err
		}
		connectors.CountRateLimited(c.stats, appName)
		wait := min(max(rl.RetryAfter, time.Second), c.maxWait)
		c.pause(method, time.Now().Add(wait))
		c.log.Warn("rate limited; waiting", "method", method, "retry_after", wait, "attempt", attempt)
	}
}

// pause holds every call of method until until (a later pause wins).
func (c *Connector) pause(method string, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if until.After(c.pauses[method]) {
		c.pauses[method] = until
	}
}

// waitPause waits until no pause of method is in force, or ctx ends.
func (c *Connector) waitPause(ctx context.Context, method string) error {
	for {
		c.mu.Lock()
		until, ok := c.pauses[method]
		if ok && !time.Now().Before(until) {
			delete(c.pauses, method)
			ok = false
		}
		c.mu.Unlock()
		if !ok {
			return ctx.Err()
		}
		if err := sleepUntil(ctx, until); err != nil {
			return err
		}
	}
}

func (c *Connector) post(ctx context.Context, ref chatRef, text string, blocks []slack.Block) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if len(blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	if ref.thread != "" {
		opts = append(opts, slack.MsgOptionTS(ref.thread))
	}
	var ts string
	err := c.retry(ctx, "chat.postMessage", func(ctx context.Context) error {
		var err error
		_, ts, err = c.api.PostMessageContext(ctx, ref.channel, opts...)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("slack: chat.postMessage: %s", c.redact(err.Error()))
	}
	connectors.CountOutbound(c.stats, appName)
	return ts, nil
}

func (c *Connector) update(ctx context.Context, channel, ts, text string, blocks []slack.Block) error {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if len(blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	err := c.retry(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := c.api.UpdateMessageContext(ctx, channel, ts, opts...)
		return err
	})
	if err != nil {
		return fmt.Errorf("slack: chat.update: %s", c.redact(err.Error()))
	}
	connectors.CountOutbound(c.stats, appName)
	return nil
}

// ephemeral tells one person something only they see; failures are logged.
func (c *Connector) ephemeral(ctx context.Context, channel, thread, user, text string) {
	if channel == "" || user == "" {
		return
	}
	opts := []slack.MsgOption{slack.MsgOptionText(escape(text), false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	err := c.retry(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := c.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
	if err != nil {
		c.log.Warn("sending an ephemeral message", "channel", channel, c.errAttr(err))
		return
	}
	connectors.CountOutbound(c.stats, appName)
}

// place is how a chat's interactions are shown: "Only approvers can
// decide" in a thread, and in a DM when approvers were configured apart
// from the allowed users.
func (c *Connector) place(ref chatRef) place {
	return place{thread: ref.thread != "", approversOnly: ref.thread != "" || c.ownApprovers}
}

// outLock serialises what leashd posts in one chat, so a question comes
// after the text before it.
func (c *Connector) outLock(chatID string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.outLocks[chatID]
	if m == nil {
		m = &sync.Mutex{}
		c.outLocks[chatID] = m
	}
	return m
}

// --- streaming ---

// stream is a chat's running agent output: one message edited at most
// once per streamGap, continued in a new message before it grows past
// maxMessage.
type stream struct {
	md       string    // Markdown of the current message
	ts       string    // the current message, once posted
	shown    string    // what it shows
	last     time.Time // when the current message was last sent or edited
	timer    *time.Timer
	flushing bool   // a flush is running: it schedules the next one itself
	streamed bool   // this turn showed agent text
	progress string // the turn's signs of life, under its output (progress.go)
}

// StreamText implements connectors.Output.
func (c *Connector) StreamText(_ context.Context, chatID, text string) error {
	if _, err := parseChat(chatID); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streams[chatID]
	if s == nil {
		s = &stream{}
		c.streams[chatID] = s
	}
	s.md += text
	s.streamed = true
	if s.timer == nil && !s.flushing {
		wait := max(time.Until(s.last.Add(c.streamGap)), 0)
		s.timer = time.AfterFunc(wait, func() { c.flushLater(chatID) })
	}
	return nil
}

func (c *Connector) flushLater(chatID string) {
	c.mu.Lock()
	ctx := c.runCtx
	c.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	l := c.outLock(chatID)
	l.Lock()
	defer l.Unlock()
	if err := c.flush(ctx, chatID, false); err != nil {
		c.log.Warn("streaming agent text", "chat", chatID, c.errAttr(err))
	}
}

// flush shows a chat's pending stream text; seal ends the current message
// so what follows starts a new one. An edit of the streamed message waits
// until streamGap has passed since it was last sent or edited. Called with
// the chat's outLock held.
func (c *Connector) flush(ctx context.Context, chatID string, seal bool) error {
	ref, err := parseChat(chatID)
	if err != nil {
		return err
	}
	c.mu.Lock()
	s := c.streams[chatID]
	if s == nil {
		c.mu.Unlock()
		return nil
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.flushing = true
	md, ts, shown, last, progress := s.md, s.ts, s.shown, s.last, s.progress
	c.mu.Unlock()

	var firstErr error
	sent := false
	if seal {
		progress = "" // a sealed message keeps only the agent's text
	}
	parts := streamParts(md, progress)
	for i, part := range parts {
		text := toMrkdwn(part)
		if i == len(parts)-1 {
			text = withProgress(text, progress)
		}
		switch {
		case ts != "" && text == shown:
		case ts != "":
			if err := sleepUntil(ctx, last.Add(c.streamGap)); err != nil {
				firstErr = cmp.Or(firstErr, err)
				continue
			}
			if err := c.update(ctx, ref.channel, ts, text, nil); err != nil {
				firstErr = cmp.Or(firstErr, err)
			}
			last, sent = time.Now(), true
		default:
			newTS, err := c.post(ctx, ref, text, nil)
			if err != nil {
				firstErr = cmp.Or(firstErr, err)
				continue
			}
			ts, last, sent = newTS, time.Now(), true
		}
		shown = text
		if i < len(parts)-1 { // this message is full: the rest goes into new ones
			ts, shown = "", ""
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s.flushing = false
	if c.streams[chatID] != s {
		return firstErr
	}
	if sent {
		s.last = last
	}
	// keep only what the current message holds; text added meanwhile stays
	added := strings.TrimPrefix(s.md, md)
	if len(parts) > 0 {
		s.md = parts[len(parts)-1] + added
	} else {
		s.md = added
	}
	s.ts, s.shown = ts, shown
	if seal {
		s.md, s.ts, s.shown = added, "", ""
	}
	if (added != "" || s.progress != progress && !seal) && s.timer == nil { // more came meanwhile
		s.timer = time.AfterFunc(max(time.Until(s.last.Add(c.streamGap)), 0), func() { c.flushLater(chatID) })
	}
	return firstErr
}

// sleepUntil waits until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// --- Output ---

// Say implements connectors.Output.
func (c *Connector) Say(ctx context.Context, chatID, text string) error {
	ref, err := parseChat(chatID)
	if err != nil {
		return err
	}
	l := c.outLock(chatID)
	l.Lock()
	defer l.Unlock()
	ferr := c.flush(ctx, chatID, true)
	for _, part := range splitMarkdown(text, maxMessage) {
		if _, err := c.post(ctx, ref, toMrkdwn(part), nil); err != nil {
			return errors.Join(ferr, err)
		}
	}
	return ferr
}

// Done implements connectors.Output: the stream is flushed, then the
// result (when nothing was streamed) and the summary line are posted.
func (c *Connector) Done(ctx context.Context, chatID string, sum connectors.Summary) error {
	ref, err := parseChat(chatID)
	if err != nil {
		return err
	}
	l := c.outLock(chatID)
	l.Lock()
	defer l.Unlock()
	c.mu.Lock()
	if s := c.streams[chatID]; s != nil {
		s.progress = "" // the summary says how it went
	}
	c.mu.Unlock()
	err = c.flush(ctx, chatID, true)
	c.mu.Lock()
	streamed := c.streams[chatID] != nil && c.streams[chatID].streamed
	delete(c.streams, chatID)
	c.mu.Unlock()
	var texts []string
	if !streamed && strings.TrimSpace(sum.Result) != "" {
		for _, p := range splitMarkdown(sum.Result, maxMessage) {
			texts = append(texts, toMrkdwn(p))
		}
	}
	texts = append(texts, "_"+escape(sum.Line())+"_")
	for _, t := range texts {
		if _, perr := c.post(ctx, ref, t, nil); perr != nil {
			return errors.Join(err, perr)
		}
	}
	return err
}

// Present implements connectors.Output: the interaction as Block Kit
// messages in the chat (a long plan spans several); the reference is the
// message with the buttons, "<channel>:<ts>".
func (c *Connector) Present(ctx context.Context, it *interactions.Interaction) (string, error) {
	ref, err := parseChat(it.ChatID)
	if err != nil {
		return "", err
	}
	l := c.outLock(it.ChatID)
	l.Lock()
	defer l.Unlock()
	if err := c.flush(ctx, it.ChatID, true); err != nil {
		c.log.Warn("flushing agent text before an interaction", c.errAttr(err))
	}
	msgs := render(*it, c.place(ref), nil)
	var ts string
	for _, m := range msgs {
		if ts, err = c.post(ctx, ref, m.text, m.blocks); err != nil {
			return "", err
		}
	}
	mr := msgRef{channel: ref.channel, ts: ts}.String()
	c.mu.Lock()
	c.refs[it.ID] = mr
	c.mu.Unlock()
	return mr, nil
}

// Update implements connectors.Output: the interaction's message shows the
// multi-select state, the adjust prompt, or the outcome and who gave it
// (buttons removed; an interrupted one keeps them, as they still work).
func (c *Connector) Update(ctx context.Context, ev interactions.Event) error {
	ref, err := parseChat(ev.Interaction.ChatID)
	if err != nil {
		return err
	}
	// Present holds this lock until the reference is recorded, so a tap
	// faster than Present's return still finds its message.
	l := c.outLock(ev.Interaction.ChatID)
	l.Lock()
	defer l.Unlock()
	c.mu.Lock()
	refText := ev.Ref
	if refText == "" {
		refText = c.refs[ev.Interaction.ID]
	}
	if ev.Type == interactions.EventResolved {
		delete(c.refs, ev.Interaction.ID)
	}
	c.mu.Unlock()
	mr, ok := parseRef(refText)
	if !ok {
		return nil // never shown (or shown by another connector)
	}
	m := renderUpdate(ev, c.place(ref))
	return c.update(ctx, mr.channel, mr.ts, m.text, m.blocks)
}

// splitMarkdown cuts Markdown into parts that each render within max
// characters, at line ends where it can, closing a code fence at the end
// of a part and reopening it in the next.
func splitMarkdown(md string, max int) []string {
	parts := connectors.SplitLines(md, max-8)
	open := false
	for i, p := range parts {
		if open {
			p = "```\n" + p
		}
		open = false
		for _, line := range strings.Split(p, "\n") {
			if strings.HasPrefix(strings.TrimLeft(line, " \t"), "```") {
				open = !open
			}
		}
		if open && i < len(parts)-1 {
			p += "\n```"
		}
		parts[i] = p
	}
	var out []string
	for _, p := range parts {
		if utf8.RuneCountInString(toMrkdwn(p)) > max && max > 200 {
			out = append(out, splitMarkdown(p, max/2)...) // escaping grew it
			continue
		}
		out = append(out, p)
	}
	return out
}
