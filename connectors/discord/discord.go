// Package discord connects leashd to Discord with discordgo: people prompt
// the agent in a direct message with the bot, or by mentioning it in a
// server channel, which starts a thread for that session; the agent's
// questions, plan reviews and tool approvals appear as messages with
// buttons (a select menu for a multi-select question).
//
// Chats: a DM is one chat, "discord:<channel>"; in a server each thread
// started from a mention is one chat, "discord:<guild>:<thread>", and
// everything leashd says for it goes into the thread.
//
// It receives over the Gateway (the intents for guild messages, direct
// messages and message content; discordgo reconnects and resumes) and
// sends over the REST API. Every component tap and application command is
// acknowledged at once, within Discord's 3 s, and handled afterwards. A
// 429 waits for its retry_after (discordgo's limiter keeps the per-route
// buckets and the global limit from the X-RateLimit headers) and retries
// until it goes through or the context ends.
//
// Access fails closed: WithAllowedUsers (and, in a server, members of
// WithAllowedRoles) may prompt and answer questions; WithApprovers
// (default: the allowed) alone decide plan reviews and tool approvals.
// Tests run it against discordfake.
package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/leashd/leashd/connectors"
)

// appName is the connector's name and chat ID prefix.
const appName = "discord"

// Connector is the Discord connector. Create it with New.
type Connector struct {
	token      string
	apiURL     string
	allowedIDs map[string]bool
	roles      map[string]bool
	approvers  map[string]bool
	// ownApprovers: LEASHD_DISCORD_APPROVERS was set, so not everyone
	// allowed may decide
	ownApprovers bool
	commands     []connectors.Command
	log          *slog.Logger
	stats        connectors.Stats
	streamGap    time.Duration
	maxWait      time.Duration // longest retry_after honoured per attempt

	s *discordgo.Session

	mu         sync.Mutex
	h          connectors.Handler
	runCtx     context.Context
	ready      error
	botID      string
	appID      string
	seen       *dedupe           // message and interaction IDs handled
	warned     *dedupe           // user|chat pairs told they may not use the bot
	asked      *dedupe           // channels looked up (ownThread)
	threads    map[string]string // leashd thread → its parent channel
	lastThread map[string]string // channel → its latest leashd thread
	streams    map[string]*stream
	lanes      map[string]*lane
	outLocks   map[string]*sync.Mutex
	refs       map[string]string // interaction ID → its buttons message
	work       sync.WaitGroup
}

// Option configures a Connector.
type Option func(*Connector)

// WithAPIURL sets the base URL that stands for https://discord.com/ (the
// REST API is under <base>api/v10/; the Gateway's address comes from GET
// gateway), e.g. a fake's. Requests are rewritten by the HTTP client's
// transport: discordgo's endpoint variables are package globals, left
// untouched.
func WithAPIURL(u string) Option {
	return func(c *Connector) {
		if u != "" && !strings.HasSuffix(u, "/") {
			u += "/"
		}
		c.apiURL = u
	}
}

// WithAllowedUsers sets the Discord user IDs that may prompt the agent and
// answer its questions. An empty list allows nobody (but see
// WithAllowedRoles).
func WithAllowedUsers(ids []string) Option { return func(c *Connector) { addIDs(c.allowedIDs, ids) } }

// WithAllowedRoles sets role IDs whose members may prompt and answer
// questions in a server's channels (a DM has no roles).
func WithAllowedRoles(ids []string) Option { return func(c *Connector) { addIDs(c.roles, ids) } }

// WithApprovers sets the user IDs that may decide plan reviews and tool
// approvals (default: whoever is allowed). A list with no IDs leaves the
// default.
func WithApprovers(ids []string) Option {
	return func(c *Connector) {
		m := map[string]bool{}
		addIDs(m, ids)
		if len(m) > 0 {
			c.approvers = m
		}
	}
}

func addIDs(m map[string]bool, ids []string) {
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			m[id] = true
		}
	}
}

// WithCommands sets the chat commands registered as application commands
// at start.
func WithCommands(cmds []connectors.Command) Option {
	return func(c *Connector) { c.commands = cmds }
}

// WithLogger sets the logger. The token is never logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *Connector) {
		if l != nil {
			c.log = l
		}
	}
}

// WithStats counts sent messages and 429s.
func WithStats(s connectors.Stats) Option { return func(c *Connector) { c.stats = s } }

// WithStreamInterval sets the minimum time between edits of the streamed
// agent output in a chat (default 1s).
func WithStreamInterval(d time.Duration) Option { return func(c *Connector) { c.streamGap = d } }

// WithMaxWait bounds the retry_after honoured per attempt (default 5 min).
func WithMaxWait(d time.Duration) Option { return func(c *Connector) { c.maxWait = d } }

// New returns a Discord connector for the bot with this token (without
// "Bot "). It does not touch the network until Run.
func New(token string, opts ...Option) *Connector {
	c := &Connector{
		token:      token,
		allowedIDs: map[string]bool{},
		roles:      map[string]bool{},
		log:        slog.New(slog.DiscardHandler),
		streamGap:  time.Second,
		maxWait:    5 * time.Minute,
		ready:      errors.New("discord: not connected yet"),
		seen:       newDedupe(8192),
		warned:     newDedupe(4096),
		asked:      newDedupe(4096),
		threads:    map[string]string{},
		lastThread: map[string]string{},
		streams:    map[string]*stream{},
		lanes:      map[string]*lane{},
		outLocks:   map[string]*sync.Mutex{},
		refs:       map[string]string{},
	}
	for _, o := range opts {
		o(c)
	}
	c.ownApprovers = c.approvers != nil
	c.log = c.log.With("connector", appName)
	c.s = c.session()
	return c
}

// session is the discordgo session: our HTTP client (pointed at apiURL),
// the intents leashd needs, events handled in order, the library's own
// log silenced (its messages may carry URLs; ours are redacted).
func (c *Connector) session() *discordgo.Session {
	s, _ := discordgo.New("Bot " + c.token) // New never fails
	s.LogLevel = -1
	s.StateEnabled = false
	s.SyncEvents = true // handlers only queue work: order is kept, nothing blocks
	s.Identify.Intents = discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages | discordgo.IntentsMessageContent
	tr := http.DefaultTransport
	if c.apiURL != "" {
		base, _ := url.Parse(c.apiURL)
		tr = rewrite{base: base, next: tr}
	}
	s.Client = &http.Client{Timeout: 30 * time.Second, Transport: tr}
	s.AddHandler(c.onReady)
	s.AddHandler(c.onConnect)
	s.AddHandler(c.onDisconnect)
	s.AddHandler(c.onResumed)
	s.AddHandler(c.onMessage)
	s.AddHandler(c.onInteraction)
	return s
}

// rewrite sends requests for https://discord.com/ to base instead.
type rewrite struct {
	base *url.URL
	next http.RoundTripper
}

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == "discord.com" {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host = r.base.Scheme, r.base.Host
		prefix := strings.TrimSuffix(r.base.Path, "/")
		req.URL.Path = prefix + req.URL.Path
		if req.URL.RawPath != "" {
			req.URL.RawPath = prefix + req.URL.RawPath
		}
		req.Host = r.base.Host
	}
	return r.next.RoundTrip(req)
}

// Name implements connectors.Connector.
func (c *Connector) Name() string { return appName }

// Ready implements connectors.Readier: nil while the Gateway is
// connected.
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

// redact removes the token from s.
func (c *Connector) redact(s string) string {
	if len(c.token) >= 4 {
		s = strings.ReplaceAll(s, c.token, "[redacted]")
	}
	return s
}

// errAttr is an error for the log, the token removed.
func (c *Connector) errAttr(err error) slog.Attr {
	if err == nil {
		return slog.String("err", "")
	}
	return slog.String("err", c.redact(err.Error()))
}

// Run checks the token, connects to the Gateway and registers the chat
// commands, then receives events until ctx is done. discordgo reconnects
// (resuming the session) when the connection drops. It returns nil on a
// clean stop and an error when the token is refused.
func (c *Connector) Run(ctx context.Context, h connectors.Handler) error {
	c.mu.Lock()
	c.h, c.runCtx = h, ctx
	c.mu.Unlock()
	defer c.work.Wait()
	defer c.setReady(errors.New("discord: stopped"))
	var me *discordgo.User
	err := c.call(ctx, func(o ...discordgo.RequestOption) (err error) {
		me, err = c.s.User("@me", o...)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		err = fmt.Errorf("discord: checking the bot token: %s", c.redact(err.Error()))
		c.setReady(err)
		return err
	}
	c.mu.Lock()
	c.botID = me.ID
	c.mu.Unlock()
	if err := c.open(ctx); err != nil {
		c.setReady(err)
		return err
	}
	defer func() { _ = c.s.Close() }()
	c.registerCommands(ctx)
	<-ctx.Done()
	return nil
}

// open connects to the Gateway, retrying with a growing pause until it
// works or ctx ends. A refusal no retry can change — the token, the
// intents — is returned, saying what to do.
func (c *Connector) open(ctx context.Context) error {
	pause := time.Second
	for {
		err := c.s.Open()
		if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			return nil
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			switch ce.Code {
			case 4004:
				return errors.New("discord: the Gateway refused the bot token (4004): check LEASHD_DISCORD_BOT_TOKEN")
			case 4013, 4014:
				return fmt.Errorf("discord: the Gateway refused the intents (%d): enable the Message Content Intent in the Developer Portal (your application → Bot → Privileged Gateway Intents)", ce.Code)
			}
		}
		c.setReady(fmt.Errorf("discord: connecting to the Gateway: %s", c.redact(err.Error())))
		c.log.Warn("connecting to the Gateway failed; retrying", c.errAttr(err), "in", pause)
		if sleepUntil(ctx, time.Now().Add(pause)) != nil {
			return nil
		}
		pause = min(pause*2, time.Minute)
	}
}

func (c *Connector) onReady(_ *discordgo.Session, r *discordgo.Ready) {
	c.mu.Lock()
	if r.User != nil {
		c.botID = r.User.ID
	}
	if r.Application != nil {
		c.appID = r.Application.ID
	}
	c.mu.Unlock()
	c.log.Info("gateway ready", "bot_user", c.botID)
}

func (c *Connector) onConnect(*discordgo.Session, *discordgo.Connect) { c.setReady(nil) }

func (c *Connector) onResumed(*discordgo.Session, *discordgo.Resumed) {
	c.log.Info("gateway session resumed")
}

func (c *Connector) onDisconnect(*discordgo.Session, *discordgo.Disconnect) {
	c.setReady(errors.New("discord: reconnecting to the Gateway"))
	c.log.Warn("gateway disconnected; reconnecting")
}

// registerCommands makes the chat commands Discord application commands
// (a global bulk overwrite), each with an optional text argument.
func (c *Connector) registerCommands(ctx context.Context) {
	c.mu.Lock()
	app := c.appID
	c.mu.Unlock()
	if app == "" || len(c.commands) == 0 {
		return
	}
	cmds := make([]*discordgo.ApplicationCommand, 0, len(c.commands))
	for _, cmd := range c.commands {
		cmds = append(cmds, &discordgo.ApplicationCommand{
			Name: cmd.Name, Description: connectors.Truncate(cmd.Help, 100),
			Options: []*discordgo.ApplicationCommandOption{{Type: discordgo.ApplicationCommandOptionString,
				Name: "text", Description: "What goes after the command, if anything"}},
		})
	}
	err := c.call(ctx, func(o ...discordgo.RequestOption) error {
		_, err := c.s.ApplicationCommandBulkOverwrite(app, "", cmds, o...)
		return err
	})
	if err != nil && ctx.Err() == nil {
		c.log.Warn("registering the chat commands", c.errAttr(err))
	}
}

// call runs one REST request, waiting out 429s (their retry_after, at most
// maxWait each) and trying again until it goes through or ctx ends, so
// nothing is dropped. discordgo's limiter meanwhile holds back the other
// requests of the bucket (or all of them, for the global limit).
func (c *Connector) call(ctx context.Context, f func(...discordgo.RequestOption) error) error {
	for attempt := 1; ; attempt++ {
		err := f(discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false))
		var rl *discordgo.RateLimitError
		if !errors.As(err, &rl) {
			return err
		}
		connectors.CountRateLimited(c.stats, appName)
		wait := min(max(rl.RetryAfter, 10*time.Millisecond), c.maxWait)
		c.log.Warn("rate limited; waiting", "retry_after", wait, "attempt", attempt, "url", c.redact(stripToken(rl.URL)))
		if err := sleepUntil(ctx, time.Now().Add(wait)); err != nil {
			return fmt.Errorf("waiting out a rate limit: %w", err)
		}
	}
}

// stripToken cuts an interaction or webhook token out of a URL path
// (…/interactions/<id>/<token>/callback, …/webhooks/<app>/<token>).
func stripToken(u string) string {
	for _, mark := range []string{"/interactions/", "/webhooks/"} {
		if i := strings.Index(u, mark); i >= 0 {
			return u[:i+len(mark)] + "…"
		}
	}
	return u
}

// sleepUntil waits until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
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

// --- work after the acknowledgement ---

// lane runs one chat's inbound work in order, on its own goroutine, so a
// chat's messages keep their order and no chat waits for another.
type lane struct {
	queue   []func()
	running bool
}

// spawn runs f in order with the other work of key ("" runs it alone).
// It does nothing once Run has stopped.
func (c *Connector) spawn(key string, f func(ctx context.Context)) {
	c.mu.Lock()
	ctx := c.runCtx
	if ctx == nil || ctx.Err() != nil {
		c.mu.Unlock()
		return
	}
	c.work.Add(1)
	if key == "" {
		c.mu.Unlock()
		go func() {
			defer c.work.Done()
			f(ctx)
		}()
		return
	}
	l := c.lanes[key]
	if l == nil {
		l = &lane{}
		c.lanes[key] = l
	}
	l.queue = append(l.queue, func() { f(ctx) })
	if l.running {
		c.mu.Unlock()
		return
	}
	l.running = true
	c.mu.Unlock()
	go c.drain(key, l)
}

func (c *Connector) drain(key string, l *lane) {
	for {
		c.mu.Lock()
		if len(l.queue) == 0 {
			l.running = false
			delete(c.lanes, key)
			c.mu.Unlock()
			return
		}
		next := l.queue[0]
		l.queue = l.queue[1:]
		c.mu.Unlock()
		next()
		c.work.Done()
	}
}

func (c *Connector) handler() connectors.Handler {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

// dedupe remembers the last n keys.
type dedupe struct {
	ring []string
	next int
	m    map[string]bool
}

func newDedupe(n int) *dedupe { return &dedupe{ring: make([]string, n), m: make(map[string]bool, n)} }

// add records key and reports whether it was new. Callers hold c.mu.
func (d *dedupe) add(key string) bool {
	if d.m[key] {
		return false
	}
	if old := d.ring[d.next]; old != "" {
		delete(d.m, old)
	}
	d.ring[d.next] = key
	d.m[key] = true
	d.next = (d.next + 1) % len(d.ring)
	return true
}

func (c *Connector) firstTime(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen.add(key)
}
