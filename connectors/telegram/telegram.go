// Package telegram connects leashd to Telegram through the Bot API: people
// chat with the bot, and the agent's questions, plan reviews and tool
// approvals appear as messages with inline buttons.
//
// It uses go-telegram-bot-api v5.5.1 behind a small interface of its own,
// with its own context-aware long-poll loop (or a webhook), a fail-closed
// allowlist of user IDs, one outbound queue with per-chat and global rate
// limits that honours 429 retry_after, and Markdown rendered as Telegram
// HTML. Tests run it against tgfake, a fake Bot API server.
package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Connector is the Telegram connector. Create it with New.
type Connector struct {
	token     string
	apiURL    string
	allowed   map[int64]bool
	webhook   string
	secret    string
	log       *slog.Logger
	client    httpClient
	stats     connectors.Stats
	limits    Limits
	commands  []connectors.Command
	pollWait  int           // long-poll timeout, seconds
	streamGap time.Duration // minimum time between edits of a streamed message
	backoff   time.Duration // first retry delay of the poll loop

	out *outbox

	// hot holds what every request and tap reads (the API client, the
	// handler): its own read lock, so that a tap or a send never queues
	// behind mu, which every chat's lanes, streams and messages take.
	hot     sync.RWMutex
	bot     api
	handler connectors.Handler
	// namesMu guards names, read on every message and tap.
	namesMu sync.RWMutex

	// laneMu guards lanes and stopped: the poll loop takes it for every
	// update, so it is not mu, which every chat's output takes.
	laneMu sync.Mutex

	mu       sync.Mutex
	self     tgbotapi.User
	runCtx   context.Context
	ready    error
	lanes    map[int64]*lane // laneMu
	lanesWG  sync.WaitGroup
	bg       tracker // background edits and streamed output, for Flush
	seen     dedupe
	refs     map[string]msgRef              // interaction ID → its message (with buttons)
	inflight map[string]*interactions.Event // being presented → an event that came first
	selected map[string][]string            // multi-select ID → its selection so far
	names    map[string]string              // user ID → display name, for "answered by" (namesMu)
	// approvers decide plan reviews and tool approvals (nil: the allowed
	// users); set once by New.
	approvers map[int64]bool
	streams   map[int64]*stream
	refused   map[[2]int64]time.Time // (chat, user) → when a stranger was last told
	stopped   bool                   // no new update handlers after Run ends (laneMu)
}

// newHTTPClient is the connector's default HTTP client: its own transport
// keeping up to 1,024 idle connections to the Bot API (Go's default keeps
// 2, so every request beyond two at a time, e.g. several chats' edits and
// a tap's answerCallbackQuery, opened, and closed, a new TLS connection).
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 1024
	return &http.Client{Transport: t}
}

// Option configures a Connector.
type Option func(*Connector)

// WithAPIURL sets the Bot API base URL (default https://api.telegram.org);
// leashd appends /bot<token>/<method>.
func WithAPIURL(u string) Option { return func(c *Connector) { c.apiURL = u } }

// WithAllowedUsers sets the user IDs served; everyone else is refused. An
// empty list serves nobody.
func WithAllowedUsers(ids []int64) Option {
	return func(c *Connector) {
		for _, id := range ids {
			c.allowed[id] = true
		}
	}
}

// WithApprovers sets the user IDs that may decide plan reviews and tool
// approvals (and, with WithApprovalQuorum in the engine, count towards a
// group's quorum). Empty (the default): the allowed users. An approver need
// not be an allowed user to decide; when set, only approvers decide.
func WithApprovers(ids []int64) Option {
	return func(c *Connector) {
		for _, id := range ids {
			if c.approvers == nil {
				c.approvers = make(map[int64]bool)
			}
			c.approvers[id] = true
		}
	}
}

// WithWebhook switches from long polling to a webhook: Telegram posts
// updates to url (served on the web server at the URL's own path; see
// webhookPath), with
// secret in the X-Telegram-Bot-Api-Secret-Token header.
func WithWebhook(url, secret string) Option {
	return func(c *Connector) { c.webhook, c.secret = url, secret }
}

// WithLogger sets the logger. Errors are logged without the bot token.
func WithLogger(l *slog.Logger) Option { return func(c *Connector) { c.log = l } }

// withHTTPClient sets the HTTP client for Bot API calls.
func withHTTPClient(h httpClient) Option { return func(c *Connector) { c.client = h } }

// WithStats counts sent messages and 429s.
func WithStats(s connectors.Stats) Option { return func(c *Connector) { c.stats = s } }

// WithLimits overrides the outbound rates (defaultLimits).
func WithLimits(l Limits) Option { return func(c *Connector) { c.limits = l } }

// WithCommands sets the commands registered with setMyCommands (default:
// none).
func WithCommands(cmds []connectors.Command) Option { return func(c *Connector) { c.commands = cmds } }

// WithPollTimeout sets the long-poll timeout (default 30s).
func WithPollTimeout(d time.Duration) Option {
	return func(c *Connector) { c.pollWait = max(int(d/time.Second), 0) }
}

// WithStreamInterval sets the minimum time between edits of the streamed
// agent output in a chat (default 1s).
func WithStreamInterval(d time.Duration) Option { return func(c *Connector) { c.streamGap = d } }

// WithRetryDelay sets the first delay of the poll loop's exponential
// backoff (default 1s).
func WithRetryDelay(d time.Duration) Option { return func(c *Connector) { c.backoff = d } }

// New returns a Telegram connector for the bot with this token. It does
// not touch the network until Run.
func New(token string, opts ...Option) *Connector {
	c := &Connector{
		token:     token,
		apiURL:    "https://api.telegram.org",
		allowed:   make(map[int64]bool),
		log:       slog.New(slog.DiscardHandler),
		client:    newHTTPClient(),
		limits:    defaultLimits,
		pollWait:  30,
		streamGap: time.Second,
		backoff:   time.Second,
		ready:     errors.New("telegram: not connected yet"),
		lanes:     make(map[int64]*lane),
		seen:      newDedupe(4096),
		refs:      make(map[string]msgRef),
		inflight:  make(map[string]*interactions.Event),
		selected:  make(map[string][]string),
		names:     make(map[string]string),
		streams:   make(map[int64]*stream),
		refused:   make(map[[2]int64]time.Time),
	}
	for _, o := range opts {
		o(c)
	}
	c.log = c.log.With("connector", "telegram")
	c.out = newOutbox(c.api, c.log, c.stats, c.limits)
	return c
}

// Name implements connectors.Connector.
func (c *Connector) Name() string { return "telegram" }

// Ready implements connectors.Readier: nil once getMe succeeded and while
// the poll loop (or the webhook) is healthy.
func (c *Connector) Ready() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ready
}

func (c *Connector) setReady(err error) {
	c.mu.Lock()
	c.ready = err
	c.mu.Unlock()
}

func (c *Connector) api() api {
	c.hot.RLock()
	defer c.hot.RUnlock()
	return c.bot
}

// Run connects (getMe), registers the commands, and receives updates until
// ctx is done. It returns an error only when the token is rejected.
func (c *Connector) Run(ctx context.Context, h connectors.Handler) error {
	c.hot.Lock()
	c.handler = h
	c.hot.Unlock()
	c.mu.Lock()
	c.runCtx = ctx
	c.mu.Unlock()
	c.laneMu.Lock()
	c.stopped = false
	c.laneMu.Unlock()
	if c.webhook != "" && c.secret == "" {
		return errors.New("telegram: webhook mode needs a secret token (LEASHD_TELEGRAM_WEBHOOK_SECRET) so that forged updates can be refused")
	}
	if c.webhook != "" && !telegramAccepts(c.secret) {
		return errors.New("telegram: the webhook secret (LEASHD_TELEGRAM_WEBHOOK_SECRET) must be 1-256 characters of A-Z, a-z, 0-9, _ and - (Telegram's rule for secret_token)")
	}
	if c.webhook != "" {
		if _, err := webhookPath(c.webhook); err != nil {
			return err
		}
	}
	if len(c.allowed) == 0 {
		c.log.Warn("LEASHD_TELEGRAM_ALLOWED_USERS is empty: the bot answers nobody. Add your numeric user ID (the bot tells you yours when you write to it).")
	}
	if err := c.connect(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	c.registerCommands(ctx)
	var err error
	if c.webhook != "" {
		err = c.runWebhook(ctx)
	} else {
		err = c.poll(ctx)
	}
	c.laneMu.Lock()
	c.stopped = true
	c.laneMu.Unlock()
	c.lanesWG.Wait()
	return err
}

// connect calls getMe until it works; a rejected token is fatal.
func (c *Connector) connect(ctx context.Context) error {
	delay := c.backoff
	for {
		a, self, err := dial(ctx, c.token, c.apiURL, c.client)
		if err == nil {
			c.hot.Lock()
			if c.bot == nil { // tests may have set one
				c.bot = a
			}
			c.hot.Unlock()
			c.mu.Lock()
			c.self = self
			c.mu.Unlock()
			c.log.Info("connected to Telegram", "bot", self.UserName, "allowed_users", len(c.allowed), "webhook", c.webhook != "")
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if code, _, _ := apiCode(err); code == 401 || code == 404 {
			return fmt.Errorf("telegram: the bot token was rejected (getMe answered %w); check LEASHD_TELEGRAM_BOT_TOKEN (and that LEASHD_TELEGRAM_API_URL, %s, is a Bot API server)", err, c.apiURL)
		}
		c.setReady(fmt.Errorf("telegram: cannot reach the Bot API: %w", err))
		d := jitter(delay)
		c.log.Error("telegram getMe failed; retrying", "in", d, "err", err)
		if sleepCtx(ctx, d) != nil {
			return ctx.Err()
		}
		delay = min(delay*2, time.Minute)
	}
}

func (c *Connector) registerCommands(ctx context.Context) {
	cmds := make([]tgbotapi.BotCommand, 0, len(c.commands))
	for _, cmd := range c.commands {
		cmds = append(cmds, tgbotapi.BotCommand{Command: cmd.Name, Description: cmd.Help})
	}
	if err := c.out.direct(ctx, tgbotapi.NewSetMyCommands(cmds...)); err != nil {
		c.log.Warn("telegram setMyCommands failed; the command menu may be out of date", "err", err)
	}
}

// poll is the long-poll loop: getUpdates with offset = last update_id+1,
// cancelled with ctx.
func (c *Connector) poll(ctx context.Context) error {
	if err := c.dropWebhook(ctx); err != nil && ctx.Err() == nil {
		c.log.Warn("telegram: could not check for a webhook", "err", err)
	}
	offset := 0
	delay := c.backoff
	failures := 0
	c.setReady(nil)
	for ctx.Err() == nil {
		cfg := tgbotapi.NewUpdate(offset)
		cfg.Timeout = c.pollWait
		cfg.AllowedUpdates = []string{"message", "callback_query"}
		// Each update is handled as soon as it is decoded: a tap need not
		// wait for the rest of its batch (up to 100 updates) to be read.
		err := c.api().getUpdates(ctx, cfg, func(u tgbotapi.Update) {
			if u.UpdateID >= offset {
				offset = u.UpdateID + 1
			}
			c.dispatch(ctx, u)
		})
		if bad := (*badUpdatesError)(nil); errors.As(err, &bad) {
			c.log.Warn("telegram: skipped updates that could not be read (the others were handled)", "err", err)
			err = nil
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failures++
			d := jitter(delay)
			delay = min(delay*2, time.Minute)
			if code, _, _ := apiCode(err); code == 409 {
				c.log.Error("telegram getUpdates answered 409 Conflict: another process polls this bot, or a webhook is set. Stop the other leashd (or bot) using this token, or set LEASHD_TELEGRAM_WEBHOOK_URL to use the webhook; retrying",
					"in", d, "failures", failures, "err", err)
				c.setReady(fmt.Errorf("telegram: getUpdates conflict (409): %w", err))
			} else {
				c.log.Warn("telegram getUpdates failed; retrying", "in", d, "failures", failures, "err", err)
				c.setReady(fmt.Errorf("telegram: getUpdates failing: %w", err))
			}
			if sleepCtx(ctx, d) != nil {
				break
			}
			continue
		}
		if failures > 0 {
			c.log.Info("telegram getUpdates works again", "after_failures", failures)
		}
		failures, delay = 0, c.backoff
		c.setReady(nil)
	}
	c.confirmOffset(offset)
	return nil
}

// confirmOffset tells Telegram which updates were handled (it learns that
// only from the next getUpdates), so the next run does not receive them
// again.
func (c *Connector) confirmOffset(offset int) {
	if offset == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cfg := tgbotapi.NewUpdate(offset)
	cfg.Limit, cfg.Timeout = 1, 0
	if err := c.api().getUpdates(ctx, cfg, func(tgbotapi.Update) {}); err != nil {
		c.log.Warn("telegram: confirming handled updates at shutdown failed; the next start may see some again", "err", err)
	}
}

// dropWebhook deletes a webhook left from webhook mode, which would make
// every getUpdates fail with 409.
func (c *Connector) dropWebhook(ctx context.Context) error {
	resp, err := c.api().makeRequest(ctx, "getWebhookInfo", nil)
	if err != nil {
		return err
	}
	var info tgbotapi.WebhookInfo
	if jerr := jsonUnmarshal(resp.Result, &info); jerr != nil || info.URL == "" {
		return jerr
	}
	c.log.Info("telegram: deleting the webhook to switch to long polling", "webhook", info.URL)
	return c.out.direct(ctx, tgbotapi.DeleteWebhookConfig{})
}

// dispatch handles an update once: messages in order within their chat,
// taps at once.
func (c *Connector) dispatch(ctx context.Context, u tgbotapi.Update) {
	if !c.seen.add(u.UpdateID) {
		c.log.Debug("telegram: duplicate update ignored", "update_id", u.UpdateID)
		return
	}
	switch {
	case u.CallbackQuery != nil:
		c.laneMu.Lock()
		if c.stopped {
			c.laneMu.Unlock()
			return
		}
		c.lanesWG.Add(1)
		c.laneMu.Unlock()
		go func() {
			defer c.lanesWG.Done()
			c.handleTap(ctx, u.CallbackQuery)
		}()
	case u.Message != nil && u.Message.Chat != nil:
		c.enqueueMessage(ctx, u.Message)
	}
}

// lane runs one chat's messages in order, one at a time.
type lane struct {
	queue []*tgbotapi.Message
}

// enqueueMessage adds m to its chat's lane, starting the lane's worker
// when it is idle.
func (c *Connector) enqueueMessage(ctx context.Context, m *tgbotapi.Message) {
	chat := m.Chat.ID
	c.laneMu.Lock()
	if c.stopped {
		c.laneMu.Unlock()
		return
	}
	l, busy := c.lanes[chat]
	if !busy {
		l = &lane{}
		c.lanes[chat] = l
	}
	l.queue = append(l.queue, m)
	if busy {
		c.laneMu.Unlock()
		return
	}
	c.lanesWG.Add(1)
	c.laneMu.Unlock()
	go func() {
		defer c.lanesWG.Done()
		for {
			c.laneMu.Lock()
			if len(l.queue) == 0 {
				delete(c.lanes, chat)
				c.laneMu.Unlock()
				return
			}
			next := l.queue[0]
			l.queue = l.queue[1:]
			c.laneMu.Unlock()
			c.handleMessage(ctx, next)
		}
	}()
}

// dedupe remembers the last n update IDs.
type dedupe struct {
	set  map[int]struct{}
	ring []int
	next int
	mu   sync.Mutex
}

func newDedupe(n int) dedupe { return dedupe{set: make(map[int]struct{}, n), ring: make([]int, 0, n)} }

// add reports whether id is new.
func (d *dedupe) add(id int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.set[id]; ok {
		return false
	}
	if len(d.ring) < cap(d.ring) {
		d.ring = append(d.ring, id)
	} else {
		delete(d.set, d.ring[d.next])
		d.ring[d.next] = id
		d.next = (d.next + 1) % len(d.ring)
	}
	d.set[id] = struct{}{}
	return true
}
