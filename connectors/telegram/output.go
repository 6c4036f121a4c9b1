package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

func htmlMessage(chat int64, text string) tgbotapi.MessageConfig {
	m := tgbotapi.NewMessage(chat, text)
	m.ParseMode = tgbotapi.ModeHTML
	m.DisableWebPagePreview = true
	return m
}

func htmlEdit(ref msgRef, text string, kb *tgbotapi.InlineKeyboardMarkup) tgbotapi.EditMessageTextConfig {
	e := tgbotapi.NewEditMessageText(ref.chat, ref.msg, text)
	e.ParseMode = tgbotapi.ModeHTML
	e.DisableWebPagePreview = true
	e.ReplyMarkup = kb
	return e
}

// sendParts sends HTML parts in order; kb goes on the last. It returns the
// last message's ID.
func sendParts(ctx context.Context, send call, chat int64, parts []string, kb *tgbotapi.InlineKeyboardMarkup) (int, error) {
	last := 0
	for i, p := range parts {
		cfg := htmlMessage(chat, p)
		if i == len(parts)-1 && kb != nil {
			cfg.ReplyMarkup = kb
		}
		m, err := send(ctx, cfg)
		if err != nil {
			return last, err
		}
		last = m.MessageID
	}
	return last, nil
}

// Say implements connectors.Output: text (Markdown) rendered as HTML, in
// as many messages as it takes.
func (c *Connector) Say(ctx context.Context, chat, text string) error {
	id, err := parseChat(chat)
	if err != nil {
		return err
	}
	parts := splitHTML(markdownToHTML(text), maxMessage)
	if len(parts) == 0 {
		return nil
	}
	return c.out.do(ctx, id, func(ctx context.Context, send call) error {
		_, err := sendParts(ctx, send, id, parts, nil)
		return err
	})
}

// sayPlain sends text as it is (no parse mode).
func (c *Connector) sayPlain(ctx context.Context, chat int64, text string) error {
	return c.out.do(ctx, chat, func(ctx context.Context, send call) error {
		_, err := send(ctx, tgbotapi.NewMessage(chat, text))
		return err
	})
}

// Present implements connectors.Output: the interaction as a message (a
// plan in several) with its buttons on the last.
func (c *Connector) Present(ctx context.Context, it *interactions.Interaction) (string, error) {
	chat, err := parseChat(it.ChatID)
	if err != nil {
		return "", err
	}
	c.sealStream(chat) // agent text after this goes below the question
	parts, kb := render(*it, nil)
	id := it.ID // the job below may outlive the loan of *it
	c.mu.Lock()
	c.inflight[id] = nil
	c.mu.Unlock()
	var ref msgRef
	var early *interactions.Event
	// Waited for even when ctx ends: a job that started sends the message
	// through, and its ID must be known before Request reports the end.
	err = <-c.out.enqueue(ctx, chat, "", func(ctx context.Context, send call) error {
		if err := ctx.Err(); err != nil {
			return err // withdrawn before it was shown
		}
		// Once started, the message is sent through even if the request
		// is withdrawn meanwhile: its ID is needed to show the outcome.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), updateTimeout)
		defer cancel()
		last, err := sendParts(sctx, send, chat, parts, kb)
		if err != nil {
			return err
		}
		ref = msgRef{chat, last}
		c.mu.Lock()
		early = c.inflight[id]
		delete(c.inflight, id)
		if early == nil || early.Type != interactions.EventResolved {
			c.refs[id] = ref
		}
		c.mu.Unlock()
		return nil
	})
	c.mu.Lock()
	if e := c.inflight[id]; e != nil && err != nil {
		c.log.Warn("telegram: an interaction ended while it could not be shown", "id", id, "status", e.Resolution.Status)
	}
	delete(c.inflight, id)
	c.mu.Unlock()
	if early != nil {
		// It ended (a fast tap, /stop) before the message's ID was known:
		// show the outcome now.
		c.apply(ctx, *early, ref)
	}
	if err != nil {
		return "", err
	}
	return ref.String(), nil
}

// Update implements connectors.Output: toggles redraw the keyboard; an
// ended interaction's message shows what was asked and how it ended, its
// keyboard removed (kept after a restart, so a tap can still send it).
func (c *Connector) Update(ctx context.Context, ev interactions.Event) error {
	it := ev.Interaction
	c.mu.Lock()
	ref, ok := c.refs[it.ID]
	if ev.Type == interactions.EventResolved {
		delete(c.refs, it.ID)
	}
	if r, ok2 := parseRef(ev.Ref); ok2 {
		ref, ok = r, true
	}
	if prev, showing := c.inflight[it.ID]; !ok && showing {
		// Present applies it once the message exists. The latest toggle
		// carries the whole selection; the end overrides everything.
		if prev == nil || prev.Type != interactions.EventResolved {
			c.inflight[it.ID] = &ev
		}
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	if !ok {
		c.log.Debug("telegram: interaction event for a message not shown here", "id", it.ID, "type", ev.Type)
		return nil
	}
	c.apply(ctx, ev, ref)
	return nil
}

// apply edits the interaction's message for an event, in the background.
func (c *Connector) apply(ctx context.Context, ev interactions.Event, ref msgRef) {
	it := ev.Interaction
	switch ev.Type {
	case interactions.EventUpdated:
		if !ev.AwaitingFeedback && len(ev.Approvals) > 0 {
			// Counted towards a quorum: everyone sees who approved so
			// far; the buttons stay for the others.
			kb := keyboard(it, nil)
			text := c.pendingText(it, ev.Approvals)
			line := c.quorumLine(it, ev.Approvals)
			c.background(ctx, ref.chat, "msg:"+ref.String(), "showing the approvals so far", func(ctx context.Context, send call) error {
				if text == "" { // no room in the message: say it below
					_, err := send(ctx, htmlMessage(ref.chat, line))
					return err
				}
				_, err := send(ctx, htmlEdit(ref, text, kb))
				return err
			})
			return
		}
		if ev.AwaitingFeedback || !it.MultiSelect {
			return // the tap's handler asks for the feedback
		}
		c.mu.Lock()
		c.selected[it.ID] = ev.Selected
		c.mu.Unlock()
		kb := keyboard(it, ev.Selected)
		c.background(ctx, ref.chat, "markup:"+ref.String(), "showing a multi-select toggle", func(ctx context.Context, send call) error {
			_, err := send(ctx, tgbotapi.NewEditMessageReplyMarkup(ref.chat, ref.msg, *kb))
			return err
		})
	case interactions.EventResolved:
		group := ref.chat < 0
		c.mu.Lock()
		sel := c.selected[it.ID]
		delete(c.selected, it.ID)
		c.mu.Unlock()
		if ev.Selected != nil {
			sel = ev.Selected // the coordinator's (also after a restart)
		}
		var kb *tgbotapi.InlineKeyboardMarkup
		if ev.Resolution.Status == interactions.StatusInterrupted {
			// The buttons stay, with the selection so far: after the
			// restart the interaction is pending again and they work.
			kb = keyboard(it, sel)
		}
		res := ev.Resolution
		if res.Status == interactions.StatusInterrupted {
			// The approvals so far count after the restart: the
			// message keeps saying how many there are.
			res.Approvals = ev.Approvals
		}
		text, separate := c.resolvedText(it, res, group)
		run := func(ctx context.Context, send call) error {
			_, err := send(ctx, htmlEdit(ref, text, kb))
			return err
		}
		if separate {
			// The last part has no room for the outcome: drop the buttons
			// and say the outcome below it.
			run = func(ctx context.Context, send call) error {
				edit := tgbotapi.EditMessageReplyMarkupConfig{BaseEdit: tgbotapi.BaseEdit{ChatID: ref.chat, MessageID: ref.msg, ReplyMarkup: kb}}
				if _, err := send(ctx, edit); err != nil {
					return err
				}
				_, err := send(ctx, htmlMessage(ref.chat, text))
				return err
			}
		}
		// Edits of one message are coalesced: the last state wins.
		c.background(ctx, ref.chat, "msg:"+ref.String(), "showing how an interaction ended", run)
	}
}

// updateTimeout bounds how long an edit of an interaction's message may
// keep retrying in the background.
const updateTimeout = 2 * time.Minute

// background queues an edit without waiting for it: the engine delivers
// every chat's events on one goroutine, and a chat paused by a 429 must not
// hold up the others. The chat's queue keeps the edits in order. The edit
// outlives ctx (an interrupted interaction is edited during shutdown),
// bounded by updateTimeout.
func (c *Connector) background(ctx context.Context, chat int64, key, what string, run func(context.Context, call) error) {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), updateTimeout)
	done := c.out.enqueue(bctx, chat, key, run)
	c.bg.add()
	go func() {
		defer c.bg.done()
		defer cancel()
		if err := <-done; err != nil {
			c.log.Warn("telegram: "+what+" failed", "chat", chat, "err", err)
		}
	}()
}

// stream is a chat's running agent output: segments of Markdown, each
// shown in as many messages as it needs (edited as text arrives).
type stream struct {
	segs     []*segment
	lastSync time.Time
	progress string // the turn's progress line, under its last part (progress.go)
}

type segment struct {
	text  string
	msgs  []int
	shown []string
}

// StreamText implements connectors.Output: the text is appended as it is to the
// chat's current output message, edited at most once per stream interval
// (and within the chat's rate limit), rolling to a new message before
// Telegram's 4096-character limit. It does not wait for the network.
func (c *Connector) StreamText(ctx context.Context, chat, text string) error {
	id, err := parseChat(chat)
	if err != nil {
		return err
	}
	if text == "" {
		return nil
	}
	c.mu.Lock()
	s := c.streams[id]
	if s == nil {
		s = &stream{segs: []*segment{{}}}
		c.streams[id] = s
	}
	seg := s.segs[len(s.segs)-1]
	if seg.text == "" {
		// Pieces arrive as the agent writes them (deltas carry their own
		// separators); a new message does not start with blank lines.
		text = strings.TrimLeft(text, " \t\r\n")
		if text == "" {
			c.mu.Unlock()
			return nil
		}
	}
	seg.text += text
	c.mu.Unlock()
	done := c.out.enqueue(context.WithoutCancel(ctx), id, "stream", func(ctx context.Context, send call) error {
		return c.syncStream(ctx, send, id, true)
	})
	c.bg.add()
	go func() {
		defer c.bg.done()
		if err := <-done; err != nil {
			c.log.Warn("telegram: streaming agent output failed", "chat", id, "err", err)
		}
	}()
	return nil
}

// sealStream ends the current segment: later text starts a new message.
func (c *Connector) sealStream(chat int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.streams[chat]; s != nil && s.segs[len(s.segs)-1].text != "" {
		s.segs = append(s.segs, &segment{})
	}
}

// syncStream brings the chat's output messages up to date with its text.
func (c *Connector) syncStream(ctx context.Context, send call, chat int64, throttle bool) error {
	c.mu.Lock()
	s := c.streams[chat]
	if s == nil {
		c.mu.Unlock()
		return nil
	}
	wait := time.Until(s.lastSync.Add(c.streamGap))
	c.mu.Unlock()
	if throttle && wait > 0 {
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
	}
	for si := 0; ; si++ {
		c.mu.Lock()
		if si >= len(s.segs) {
			s.lastSync = time.Now()
			c.mu.Unlock()
			return nil
		}
		seg := s.segs[si]
		parts := splitHTML(withProgress(markdownToHTML(seg.text), s, si), maxMessage)
		msgs, shown := append([]int(nil), seg.msgs...), append([]string(nil), seg.shown...)
		c.mu.Unlock()
		for i, p := range parts {
			switch {
			case i < len(msgs) && shown[i] == p:
				continue
			case i < len(msgs):
				if _, err := send(ctx, htmlEdit(msgRef{chat, msgs[i]}, p, nil)); err != nil {
					return err
				}
				shown[i] = p
			default:
				m, err := send(ctx, htmlMessage(chat, p))
				if err != nil {
					return err
				}
				msgs, shown = append(msgs, m.MessageID), append(shown, p)
			}
			c.mu.Lock()
			seg.msgs, seg.shown = msgs, shown
			s.lastSync = time.Now()
			c.mu.Unlock()
		}
	}
}

// Done implements connectors.Output: the streamed output is brought up to
// date at once, then the summary line follows.
func (c *Connector) Done(ctx context.Context, chat string, s connectors.Summary) error {
	id, err := parseChat(chat)
	if err != nil {
		return err
	}
	c.mu.Lock()
	st := c.streams[id]
	streamed := st != nil && len(st.segs) > 0 && (len(st.segs) > 1 || st.segs[0].text != "")
	if st != nil {
		st.progress = "" // the summary says how it went
	}
	c.mu.Unlock()
	var parts []string
	if !streamed && strings.TrimSpace(s.Result) != "" {
		parts = splitHTML(markdownToHTML(s.Result), maxMessage)
	}
	line := "<i>" + escape(s.Line()) + "</i>"
	return c.out.do(ctx, id, func(ctx context.Context, send call) error {
		err := c.syncStream(ctx, send, id, false)
		c.mu.Lock()
		if c.streams[id] == st {
			delete(c.streams, id)
		}
		c.mu.Unlock()
		if _, e := sendParts(ctx, send, id, append(parts, line), nil); e != nil {
			err = errors.Join(err, e)
		}
		return err
	})
}

// Flush implements connectors.Flusher: it waits until the edits and
// streamed output queued in the background so far are sent (or gave up).
// The engine calls it at shutdown, so that the "leashd restarted" edits of
// interrupted interactions reach the chat before the process exits.
func (c *Connector) Flush(ctx context.Context) error {
	if n, err := c.bg.wait(ctx); err != nil {
		return fmt.Errorf("telegram: %d background messages or edits not sent yet: %w", n, err)
	}
	return nil
}

// tracker counts work in flight and lets Flush wait until there is none.
// Unlike a sync.WaitGroup, work may be added while someone waits.
type tracker struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil while n is 0
}

func (t *tracker) add() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == 0 {
		t.idle = make(chan struct{})
	}
	t.n++
}

func (t *tracker) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	if t.n == 0 {
		close(t.idle)
		t.idle = nil
	}
}

// wait returns once nothing is in flight, or how much still is when ctx
// ends first.
func (t *tracker) wait(ctx context.Context) (int, error) {
	for {
		t.mu.Lock()
		idle, n := t.idle, t.n
		t.mu.Unlock()
		if n == 0 {
			return 0, nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return n, ctx.Err()
		}
	}
}
