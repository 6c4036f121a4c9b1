// Package slack connects leashd to Slack with slack-go: people prompt the
// agent in a direct message or in a channel thread started by mentioning
// the bot, and the agent's questions, plan reviews and tool approvals
// appear as Block Kit messages with buttons.
//
// Chats: a DM is one chat, "slack:<channel>"; in a channel, each thread
// started by a mention is one chat (one agent session),
// "slack:<channel>:<thread_ts>", and everything leashd says for it goes
// into the thread.
//
// It runs in Socket Mode (WithAppToken; no public URL needed) or HTTP mode
// (WithSigningSecret; Mount serves /slack/events, /slack/interactions and
// /slack/commands with every request's signature checked). Every request
// is acknowledged at once and handled afterwards. Access fails closed:
// WithAllowedUsers may prompt and answer questions; WithApprovers
// (default: the allowed users) alone decide plan reviews and tool
// approvals, in DMs as in channels. A 429 waits for Retry-After and
// retries until it goes through or the context ends. Tests run it against
// slackfake.
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// appName is the connector's name and chat ID prefix.
const appName = "slack"

// Paths of the HTTP mode endpoints, served by Mount on the web address.
const (
	eventsPath       = "/slack/events"
	interactionsPath = "/slack/interactions"
	commandsPath     = "/slack/commands"
)

// Connector is the Slack connector. Create it with New.
type Connector struct {
	botToken  string
	appToken  string
	secret    string
	apiURL    string
	allowed   map[string]bool
	approvers map[string]bool
	// ownApprovers: LEASHD_SLACK_APPROVERS was set, so not every allowed
	// user may decide
	ownApprovers bool
	log          *slog.Logger
	stats        connectors.Stats
	streamGap    time.Duration
	maxWait      time.Duration // longest Retry-After honoured per attempt
	maxSkew      time.Duration // oldest request timestamp accepted in HTTP mode

	api *slack.Client

	mu         sync.Mutex
	h          connectors.Handler
	runCtx     context.Context
	ready      error
	botUserID  string
	botID      string
	seen       *dedupe           // event IDs and channel:ts of handled messages
	warned     *dedupe           // user|chat pairs told they may not use the bot
	threads    map[string]bool   // "<channel>:<thread_ts>" of leashd threads
	lastThread map[string]string // channel → its latest leashd thread
	streams    map[string]*stream
	lanes      map[string]*lane // per-chat serialisation of inbound work
	outLocks   map[string]*sync.Mutex
	refs       map[string]string    // interaction ID → its buttons message, for events without a Ref
	pauses     map[string]time.Time // Web API method → when its 429 pause ends
	work       sync.WaitGroup
}

// Option configures a Connector.
type Option func(*Connector)

// WithAppToken sets the app-level token (xapp-…) and selects Socket Mode.
func WithAppToken(token string) Option { return func(c *Connector) { c.appToken = token } }

// WithSigningSecret sets the signing secret for HTTP mode: Mount serves the
// Events API, interactivity and slash-command endpoints, each request's
// signature verified. Socket Mode is used instead when an app token is set.
func WithSigningSecret(secret string) Option { return func(c *Connector) { c.secret = secret } }

// WithAPIURL sets the Web API base URL (LEASHD_SLACK_API_URL), e.g. a
// fake's; a missing trailing "/" is added.
func WithAPIURL(u string) Option {
	return func(c *Connector) {
		if u != "" && !strings.HasSuffix(u, "/") {
			u += "/"
		}
		c.apiURL = u
	}
}

// WithAllowedUsers sets the Slack user IDs that may prompt the agent and
// answer its questions. An empty list allows nobody.
func WithAllowedUsers(ids []string) Option {
	return func(c *Connector) {
		for _, id := range ids {
			if id = strings.TrimSpace(id); id != "" {
				c.allowed[id] = true
			}
		}
	}
}

// WithApprovers sets the Slack user IDs that may decide plan reviews and
// tool approvals, in DMs and channels alike (default: the allowed users).
// An approver need not be an allowed user to decide; only approvers may.
// A list with no IDs leaves the default.
func WithApprovers(ids []string) Option {
	return func(c *Connector) {
		for _, id := range ids {
			if id = strings.TrimSpace(id); id != "" {
				if c.approvers == nil {
					c.approvers = make(map[string]bool)
				}
				c.approvers[id] = true
			}
		}
	}
}

// WithLogger sets the logger. Tokens and the signing secret are never
// logged.
func WithLogger(l *slog.Logger) Option { return func(c *Connector) { c.log = l } }

// WithStats counts sent messages and 429s.
func WithStats(s connectors.Stats) Option { return func(c *Connector) { c.stats = s } }

// WithStreamInterval sets the minimum time between edits of the streamed
// agent output in a chat (default 1s).
func WithStreamInterval(d time.Duration) Option { return func(c *Connector) { c.streamGap = d } }

// New returns a Slack connector for the bot with this token (xoxb-…). It
// does not touch the network until Run.
func New(botToken string, opts ...Option) *Connector {
	c := &Connector{
		botToken:   botToken,
		allowed:    make(map[string]bool),
		log:        slog.New(slog.DiscardHandler),
		streamGap:  time.Second,
		maxWait:    5 * time.Minute,
		maxSkew:    5 * time.Minute,
		ready:      errors.New("slack: not connected yet"),
		seen:       newDedupe(8192),
		warned:     newDedupe(4096),
		threads:    make(map[string]bool),
		lastThread: make(map[string]string),
		streams:    make(map[string]*stream),
		lanes:      make(map[string]*lane),
		outLocks:   make(map[string]*sync.Mutex),
		refs:       make(map[string]string),
		pauses:     make(map[string]time.Time),
	}
	for _, o := range opts {
		o(c)
	}
	c.ownApprovers = c.approvers != nil
	if c.approvers == nil {
		c.approvers = c.allowed
	}
	c.log = c.log.With("connector", appName)
	apiOpts := []slack.Option{slack.OptionHTTPClient(&http.Client{Timeout: 30 * time.Second})}
	if c.apiURL != "" {
		apiOpts = append(apiOpts, slack.OptionAPIURL(c.apiURL))
	}
	if c.appToken != "" {
		apiOpts = append(apiOpts, slack.OptionAppLevelToken(c.appToken))
	}
	c.api = slack.New(botToken, apiOpts...)
	return c
}

// Name implements connectors.Connector.
func (c *Connector) Name() string { return appName }

// Ready implements connectors.Readier: nil once the bot is authenticated
// and (in Socket Mode) connected.
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

// redact removes every secret from s.
func (c *Connector) redact(s string) string {
	for _, secret := range []string{c.botToken, c.appToken, c.secret} {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}

// errAttr is an error for the log, secrets removed.
func (c *Connector) errAttr(err error) slog.Attr {
	if err == nil {
		return slog.String("err", "")
	}
	return slog.String("err", c.redact(err.Error()))
}

// Run authenticates the bot, then receives events until ctx is done: over
// Socket Mode when an app token is set, otherwise through Mount's
// endpoints (HTTP mode). It returns nil on a clean stop and an error when
// the tokens are refused.
func (c *Connector) Run(ctx context.Context, h connectors.Handler) error {
	if c.appToken == "" && c.secret == "" {
		return errors.New("slack: set an app token (Socket Mode) or a signing secret (HTTP mode)")
	}
	c.mu.Lock()
	c.h, c.runCtx = h, ctx
	c.mu.Unlock()
	defer c.work.Wait()
	defer c.setReady(errors.New("slack: stopped"))

	var auth *slack.AuthTestResponse
	err := c.retry(ctx, "auth.test", func(ctx context.Context) error {
		var err error
		auth, err = c.api.AuthTestContext(ctx)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		err = fmt.Errorf("slack: auth.test with the bot token: %s", c.redact(err.Error()))
		c.setReady(err)
		return err
	}
	c.mu.Lock()
	c.botUserID, c.botID = auth.UserID, auth.BotID
	c.mu.Unlock()
	c.log.Info("authenticated", "bot_user", auth.UserID, "team", auth.TeamID, "socket_mode", c.appToken != "")

	if c.appToken == "" { // HTTP mode: Mount's handlers do the work
		c.setReady(nil)
		<-ctx.Done()
		return nil
	}
	return c.runSocket(ctx)
}

func (c *Connector) runSocket(ctx context.Context) error {
	smc := socketmode.New(c.api, socketmode.OptionLog(discardLogger{}))
	runErr := make(chan error, 1)
	go func() { runErr <- smc.RunContext(ctx) }()
	for {
		select {
		case <-ctx.Done():
			<-runErr
			return nil
		case err := <-runErr:
			if ctx.Err() != nil {
				return nil
			}
			err = fmt.Errorf("slack: socket mode: %s", c.redact(fmt.Sprint(err)))
			c.setReady(err)
			return err
		case ev := <-smc.Events:
			c.socketEvent(ctx, smc, ev)
		}
	}
}

func (c *Connector) socketEvent(ctx context.Context, smc *socketmode.Client, ev socketmode.Event) {
	switch ev.Type {
	case socketmode.EventTypeConnected:
		c.setReady(nil)
		c.log.Info("socket mode connected")
	case socketmode.EventTypeConnectionError:
		if e, ok := ev.Data.(*slack.ConnectionErrorEvent); ok {
			c.setReady(fmt.Errorf("slack: socket mode connection: %s", c.redact(fmt.Sprint(e.ErrorObj))))
			c.log.Warn("socket mode connection failed; retrying", c.errAttr(e.ErrorObj))
		}
	case socketmode.EventTypeInvalidAuth:
		c.setReady(errors.New("slack: the app token was refused"))
	case socketmode.EventTypeDisconnect:
		c.setReady(errors.New("slack: reconnecting"))
	case socketmode.EventTypeEventsAPI:
		if ev.Request == nil {
			return
		}
		c.ack(ctx, smc, ev.Request)
		api, ok := ev.Data.(slackevents.EventsAPIEvent)
		if !ok {
			return
		}
		eventID := ""
		if cb, ok := api.Data.(*slackevents.EventsAPICallbackEvent); ok {
			eventID = cb.EventID
		}
		c.onEvent(eventID, api)
	case socketmode.EventTypeInteractive:
		if ev.Request == nil {
			return
		}
		c.ack(ctx, smc, ev.Request)
		if cb, ok := ev.Data.(slack.InteractionCallback); ok {
			c.onInteraction(cb)
		}
	case socketmode.EventTypeSlashCommand:
		if ev.Request == nil {
			return
		}
		c.ack(ctx, smc, ev.Request)
		if cmd, ok := ev.Data.(slack.SlashCommand); ok {
			c.onCommand(cmd)
		}
	}
}

// ack acknowledges a Socket Mode request before any work happens.
func (c *Connector) ack(ctx context.Context, smc *socketmode.Client, req *socketmode.Request) {
	if err := smc.AckCtx(ctx, req.EnvelopeID, nil); err != nil && ctx.Err() == nil {
		c.log.Warn("acknowledging a socket mode request", c.errAttr(err))
	}
}

type discardLogger struct{}

func (discardLogger) Output(int, string) error { return nil }

// --- work after the acknowledgement ---

// lane runs one chat's inbound work in order, on its own goroutine, so a
// chat's messages keep their order and no chat waits for another.
type lane struct {
	queue   []func()
	running bool
}

// spawn runs f after the acknowledgement, in order with the other work
// of key ("" runs it alone). It does nothing once Run has stopped.
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
	go func() {
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
	}()
}

func (c *Connector) handler() connectors.Handler {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

// --- who may do what ---

// Why people are refused.
const (
	notAllowedText  = "You are not allowed to use this bot. Ask an admin to add your Slack user ID to LEASHD_SLACK_ALLOWED_USERS."
	approverOnlyMsg = "You can decide plan reviews, tool approvals and approvals here, but not prompt the agent or run commands: that needs LEASHD_SLACK_ALLOWED_USERS."
	expiredText     = "This question has expired."
	errOnlyApprover = "only approvers can decide plan reviews, tool approvals and approvals"
	errOnlyAllowed  = "only allowed users can answer the agent's questions"
)

// IsGroupChat implements connectors.GroupTeller: a chat in a channel (a
// thread) is a group chat; a direct message is not.
func (c *Connector) IsGroupChat(chatID string) bool {
	ref, err := parseChat(chatID)
	return err == nil && ref.thread != ""
}

// authorizer decides, under the coordinator's lock, whether user may
// answer an interaction: questions need an allowed user; plan reviews and
// tool approvals need an approver, in a DM as in a channel (approvers
// default to the allowed users, so a solo user decides their own).
func (c *Connector) authorizer(user string) func(interactions.Interaction) error {
	return func(it interactions.Interaction) error {
		if !it.Decides() {
			if c.allowed[user] {
				return nil
			}
			return errors.New(errOnlyAllowed)
		}
		if c.approvers[user] {
			return nil
		}
		return errors.New(errOnlyApprover)
	}
}

// --- dedupe ---

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
