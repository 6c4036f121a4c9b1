package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/leashd/leashd/connectors"
)

// Rate is a token bucket: Burst requests at once, then one every Every.
// A zero Every means unlimited.
type Rate struct {
	Every time.Duration
	Burst int
}

// Limits are the outbound rates. The defaults follow Telegram's published
// limits: about one message a second in a chat, 20 a minute in a group,
// 30 a second for the whole bot.
type Limits struct {
	Private Rate // per private chat
	Group   Rate // per group chat
	Global  Rate // the whole bot
}

// defaultLimits are Telegram's published rates, evenly spaced (a burst
// followed by the steady rate would exceed them within a second) and with
// a margin of about 5% for requests that arrive closer together than they
// were sent.
var defaultLimits = Limits{
	Private: Rate{Every: 1050 * time.Millisecond, Burst: 1},
	Group:   Rate{Every: 3150 * time.Millisecond, Burst: 1},
	Global:  Rate{Every: 35 * time.Millisecond, Burst: 1},
}

// bucket is a rate limiter in the GCRA form (a token bucket in virtual
// time): it allows Burst requests at once, then one every Every, and a
// request's slot is taken at the time it will really be sent, so the
// per-chat and the global limiter agree about when that is.
type bucket struct {
	rate Rate
	tat  time.Time // theoretical arrival time of the next request
}

// avail is the earliest time at or after now a request may be sent.
func (b *bucket) avail(now time.Time) time.Time {
	if b.rate.Every <= 0 {
		return now
	}
	t := b.tat.Add(-time.Duration(max(b.rate.Burst, 1)-1) * b.rate.Every)
	if t.After(now) {
		return t
	}
	return now
}

// take records a request sent at at.
func (b *bucket) take(at time.Time) {
	if b.rate.Every <= 0 {
		return
	}
	if at.After(b.tat) {
		b.tat = at
	}
	b.tat = b.tat.Add(b.rate.Every)
}

// full reports whether the bucket has its whole burst at now: forgetting
// it then changes nothing.
func (b *bucket) full(now time.Time) bool {
	return b.rate.Every <= 0 || !b.tat.After(now)
}

// A call sends one request through the chat's limits, retrying 429s after
// exactly retry_after, and 5xx and network errors with backoff.
type call func(ctx context.Context, c tgbotapi.Chattable) (tgbotapi.Message, error)

// job is one unit of a chat's outbound work; it may make several calls
// (a message in parts, a stream sync).
type job struct {
	ctx  context.Context
	key  string // non-empty: a later job with the same key replaces this one while queued
	run  func(ctx context.Context, send call) error
	done chan error // buffered; receives the result once (nil for fire-and-forget replaced jobs)
}

// outbox is the bot's one outbound queue: a FIFO per chat, worked by one
// goroutine per busy chat, under a per-chat and a global limiter.
type outbox struct {
	api    func() api
	log    *slog.Logger
	stats  connectors.Stats
	limits Limits
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error

	mu      sync.Mutex
	global  bucket
	chats   map[int64]*chatQueue
	retries int // max attempts for 5xx/network errors
}

type chatQueue struct {
	jobs    []*job
	running bool
	limit   bucket
	paused  time.Time // no request before (a 429's retry_after)
}

func newOutbox(a func() api, log *slog.Logger, stats connectors.Stats, l Limits) *outbox {
	return &outbox{api: a, log: log, stats: stats, limits: l, now: time.Now, sleep: sleepCtx,
		global: bucket{rate: l.Global}, chats: make(map[int64]*chatQueue), retries: 6}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enqueue adds a job to chat's queue and returns the channel its result
// arrives on. A queued job with the same non-empty key is replaced (its
// waiter gets nil: the newer content supersedes it).
func (o *outbox) enqueue(ctx context.Context, chat int64, key string, run func(context.Context, call) error) <-chan error {
	j := &job{ctx: ctx, key: key, run: run, done: make(chan error, 1)}
	o.mu.Lock()
	q := o.chats[chat]
	if q == nil {
		rate := o.limits.Private
		if chat < 0 {
			rate = o.limits.Group
		}
		q = &chatQueue{limit: bucket{rate: rate}}
		o.chats[chat] = q
	}
	replaced := false
	if key != "" {
		for i, old := range q.jobs {
			if old.key == key {
				old.done <- nil
				q.jobs[i] = j
				replaced = true
				break
			}
		}
	}
	if !replaced {
		q.jobs = append(q.jobs, j)
	}
	if !q.running {
		q.running = true
		go o.work(chat, q)
	}
	o.mu.Unlock()
	return j.done
}

// do runs a job and waits for it.
func (o *outbox) do(ctx context.Context, chat int64, run func(context.Context, call) error) error {
	select {
	case err := <-o.enqueue(ctx, chat, "", run):
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (o *outbox) work(chat int64, q *chatQueue) {
	for {
		o.mu.Lock()
		if len(q.jobs) == 0 {
			q.running = false
			// Forget an idle chat once its limiter has nothing left to
			// remember (full bucket, no pause), so memory stays bounded.
			now := o.now()
			if !q.paused.After(now) && q.limit.full(now) {
				delete(o.chats, chat)
			}
			o.mu.Unlock()
			return
		}
		j := q.jobs[0]
		q.jobs = q.jobs[1:]
		o.mu.Unlock()
		send := func(ctx context.Context, c tgbotapi.Chattable) (tgbotapi.Message, error) {
			return o.send(ctx, chat, q, c)
		}
		j.done <- j.run(j.ctx, send)
	}
}

// send makes one request to chat, waiting for the limiters and a pending
// retry_after, and retrying what may be retried.
func (o *outbox) send(ctx context.Context, chat int64, q *chatQueue, c tgbotapi.Chattable) (tgbotapi.Message, error) {
	backoff := 500 * time.Millisecond
	for attempt := 1; ; attempt++ {
		o.mu.Lock()
		now := o.now()
		at := q.limit.avail(now)
		if q.paused.After(at) {
			at = q.paused
		}
		if g := o.global.avail(at); g.After(at) {
			at = g
		}
		q.limit.take(at)
		o.global.take(at)
		o.mu.Unlock()
		if err := o.sleep(ctx, at.Sub(o.now())); err != nil {
			return tgbotapi.Message{}, err
		}
		a := o.api()
		if a == nil {
			return tgbotapi.Message{}, errNotConnected
		}
		m, err := a.send(ctx, c)
		if err == nil {
			connectors.CountOutbound(o.stats, "telegram")
			return m, nil
		}
		if notModified(err) {
			return m, nil
		}
		if ctx.Err() != nil {
			return m, ctx.Err()
		}
		code, retryAfter, _ := apiCode(err)
		switch {
		case code == 429:
			connectors.CountRateLimited(o.stats, "telegram")
			wait := time.Duration(max(retryAfter, 1)) * time.Second
			o.mu.Lock()
			q.paused = o.now().Add(wait)
			o.mu.Unlock()
			o.log.Warn("telegram rate limit: pausing the chat", "chat", chat, "retry_after", wait)
			attempt-- // flood control is not a failure: wait and go on
			continue
		case code >= 500 || code == 0:
			if attempt >= o.retries {
				return m, fmt.Errorf("telegram: giving up after %d attempts: %w", attempt, err)
			}
			d := jitter(backoff)
			o.log.Warn("telegram request failed; retrying", "chat", chat, "attempt", attempt, "in", d, "err", err)
			if err := o.sleep(ctx, d); err != nil {
				return m, err
			}
			backoff = min(backoff*2, 30*time.Second)
			continue
		default:
			return m, err
		}
	}
}

// errNotConnected is returned for output before Run has connected.
var errNotConnected = errors.New("telegram: not connected yet (the bot has not reached the Bot API since start-up)")

// jitter spreads d over [d/2, 3d/2).
func jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(rand.Int64N(int64(d)+1))
}

// direct makes a request outside the chat queues (answering a tap must
// not wait behind a chat's messages), retrying 429 and 5xx briefly.
func (o *outbox) direct(ctx context.Context, c tgbotapi.Chattable) error {
	backoff := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		a := o.api()
		if a == nil {
			return errNotConnected
		}
		_, err := a.request(ctx, c)
		if err == nil || notModified(err) {
			return nil
		}
		code, retryAfter, _ := apiCode(err)
		if ctx.Err() != nil || attempt >= 4 || (code != 429 && code < 500 && code != 0) {
			return err
		}
		d := jitter(backoff)
		if code == 429 {
			connectors.CountRateLimited(o.stats, "telegram")
			d = time.Duration(max(retryAfter, 1)) * time.Second
		}
		if err := o.sleep(ctx, d); err != nil {
			return err
		}
		backoff *= 2
	}
}
