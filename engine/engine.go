// Package engine is where chat connectors and agents meet: it keeps one
// agent session per chat, routes what people type (commands, answers to
// pending interactions, prompts), turns the agent's permission requests into
// interactions, and streams the agent's output back to the chat.
package engine

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Engine runs agent sessions for chats. Create it with New, add connectors,
// then Run it. It implements connectors.Handler.
type Engine struct {
	agent   agent.Agent
	coord   *interactions.Coordinator
	opts    options
	log     *slog.Logger
	store   Store
	metrics Metrics

	mu         sync.Mutex
	runners    Runners // nil: agents run here only (runners.go)
	chats      map[string]*chat
	owners     map[string]connectors.Connector // by Name
	connectors []connectors.Connector
	watchers   []connectors.Connector
	live       int                        // sessions holding a slot, including ones still closing
	closing    map[agent.Session]struct{} // dropped sessions whose slot closeSession frees
	waiters    []*waiter                  // chats queued for a slot, first first
	// agentCtx bounds agent turns; it outlives the connectors' context so
	// that shutdown can interrupt pending interactions first.
	agentCtx    context.Context
	agentCancel context.CancelFunc
	restored    chan struct{}  // closed once Run restored what the last run left pending
	adoptUntil  time.Time      // until then, a chat whose agent the last run let go of waits for it (adopt.go)
	wg          sync.WaitGroup // chat workers

	// events is subscribed at New, so nothing published before Run starts
	// forwarding is missed.
	events      <-chan interactions.Event
	unsubscribe func()

	asks asked    // interactions programs asked (asks.go)
	away awayDesk // chats whose person is away from the desk (away.go)

	held map[string]*gathering // files people sent, by chat, gathered into a prompt (attach.go); guarded by mu

	// Spare sessions (prewarm.go), guarded by mu.
	spares        []*spare
	prewarmFailed bool // a spare did not start: none until a chat's session opens
	running       bool // between Run's start and its shutdown: spares may start
}

// options are the engine's settings with defaults applied, and the
// optional collaborators (nil: not used).
type options struct {
	defaultMode   agent.Mode
	workDir       string
	model         string
	maxConcurrent int
	idleTimeout   time.Duration
	turnTimeout   time.Duration
	closeTimeout  time.Duration
	maxTurnOutput int          // bytes of agent text per turn sent to chats; 0: no limit (outputlimit.go)
	limits        limitOptions // see usagelimit.go
	worktrees     Worktrees    // nil: every chat works in workDir (worktrees.go)
	policy        PolicySource // approval policy (policygate.go); nil: none
	quorum        int          // approvals needed in group chats (quorum.go)
	prewarm       int          // spare sessions to keep (prewarm.go)
	persistent    bool         // a Store was given: restarts recover
	files         fileOptions  // files people send and the agent sends (attach.go)
	adoptWithin   time.Duration
}

// Deps are the engine's collaborators. Agent and Coord are required; the
// rest may be nil.
type Deps struct {
	Agent agent.Agent
	Coord *interactions.Coordinator
	// Store keeps sessions, notices and interrupted interactions across
	// restarts (engine/sqlite). nil keeps sessions in memory and recovers
	// nothing.
	Store Store
	// Policy decides tool requests before anyone is asked
	// (LEASHD_POLICY_FILE).
	Policy PolicySource
	// Worktrees gives each chat its own git worktree.
	Worktrees Worktrees
	// Metrics reports turns and sessions.
	Metrics Metrics
	Log     *slog.Logger
	// Clock schedules the resume after a usage limit (tests); nil: the
	// real clock.
	Clock Clock
	// Transcriber turns voice notes into text (LEASHD_STT_URL); nil:
	// voice notes are answered with how to enable it.
	Transcriber Transcriber
	// SessionTools gives each agent session leashd's MCP server (with
	// send_file) and its credential; nil: none.
	SessionTools SessionTools
}

// Config are the engine's settings. The zero value of each means its
// default, given in its comment.
type Config struct {
	DefaultMode agent.Mode // a new chat's permission mode (default: default)
	WorkDir     string     // the agent's working directory
	Model       string     // the agent's model ("" for its default)
	// MaxConcurrent bounds the agent sessions running at once (default 4);
	// further chats wait in a queue and are told their position.
	MaxConcurrent int
	// IdleTimeout closes a session idle this long (0: never); the next
	// prompt resumes it.
	IdleTimeout time.Duration
	// TurnTimeout bounds a turn, not counting time spent waiting for a
	// person (0: no limit).
	TurnTimeout time.Duration
	// CloseTimeout bounds closing agent sessions at shutdown (default 15s).
	CloseTimeout time.Duration
	// MaxTurnOutput bounds the agent text of one turn sent to the chats,
	// in bytes (0: no limit); the rest is left out with a note.
	MaxTurnOutput int
	// ResumeAfterLimit resumes a turn a usage limit stopped by itself once
	// the limit resets (LEASHD_RESUME_AFTER_LIMIT=on).
	ResumeAfterLimit bool
	// Prewarm keeps this many initialized spare sessions for new chats,
	// when the agent is an agent.Prewarmer (prewarm.go).
	Prewarm int
	// ApprovalQuorum is how many approvers must approve a plan review or
	// tool approval in a group chat (default 1).
	ApprovalQuorum int
	// MaxUploadBytes bounds each file a person sends and the agent sends
	// (default 20 MiB).
	MaxUploadBytes int64
	// FileWindow is how long after a file more files and text are taken
	// into the same prompt (default 1.5s): an album is one prompt.
	FileWindow time.Duration
	// AwayAfter treats a chat's person as away from the desk once their
	// terminal session had no input for this long (away.go; 0: never).
	AwayAfter time.Duration
	// AdoptWithin is how long after a restart an answer to a request
	// restored from the journal waits for the agent that asked — still
	// running on its runner — to be adopted and ask again (adopt.go),
	// before it is sent to a resumed session as a prompt. 0: at once.
	AdoptWithin time.Duration
}

// New returns an Engine running d.Agent, asking people through d.Coord.
func New(d Deps, cfg Config) *Engine {
	o := options{
		defaultMode: cmp.Or(cfg.DefaultMode, agent.ModeDefault), workDir: cfg.WorkDir, model: cfg.Model,
		maxConcurrent: cmp.Or(max(cfg.MaxConcurrent, 0), 4), idleTimeout: cfg.IdleTimeout, turnTimeout: cfg.TurnTimeout,
		closeTimeout: cmp.Or(cfg.CloseTimeout, 15*time.Second), maxTurnOutput: max(cfg.MaxTurnOutput, 0),
		limits:    limitOptions{resume: cfg.ResumeAfterLimit, clock: d.Clock},
		worktrees: d.Worktrees, policy: d.Policy, quorum: cfg.ApprovalQuorum, prewarm: max(cfg.Prewarm, 0),
		persistent:  d.Store != nil,
		files:       newFileOptions(cfg, d),
		adoptWithin: max(cfg.AdoptWithin, 0),
	}
	log := cmp.Or(d.Log, slog.New(slog.DiscardHandler))
	store := d.Store
	if store == nil {
		store = NewMemStore()
	}
	e := &Engine{
		agent:    d.Agent,
		coord:    d.Coord,
		opts:     o,
		log:      log,
		store:    store,
		metrics:  d.Metrics,
		chats:    make(map[string]*chat),
		closing:  make(map[agent.Session]struct{}),
		owners:   make(map[string]connectors.Connector),
		held:     make(map[string]*gathering),
		away:     awayDesk{after: max(cfg.AwayAfter, 0)},
		restored: make(chan struct{}),
	}
	e.agentCtx, e.agentCancel = context.WithCancel(context.Background())
	e.events, e.unsubscribe = d.Coord.Subscribe()
	d.Coord.SetPresenter(interactions.PresenterFunc(e.present))
	// Programs' requests meet the policy and quorum agents' requests do.
	d.Coord.SetProgramGate(e.programGate)
	return e
}

// AgentName is the running agent's name ("claude" or "demo").
func (e *Engine) AgentName() string { return e.agent.Name() }

// AddConnector registers a connector; call before Run.
func (e *Engine) AddConnector(c connectors.Connector) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.connectors = append(e.connectors, c)
	e.owners[c.Name()] = c
	if w, ok := c.(connectors.Watcher); ok && w.WatchesAll() {
		e.watchers = append(e.watchers, c)
	}
}

// Run runs every connector and forwards interaction events to them until
// ctx is done, then shuts down gracefully: pending interactions are
// interrupted (their messages say interactions.InterruptedNotice), agent sessions
// are closed cleanly, and Run returns. A connector that fails stops
// everything with its error.
func (e *Engine) Run(ctx context.Context) error {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	e.mu.Lock()
	conns := slices.Clone(e.connectors)
	e.mu.Unlock()

	// Updates already under way when shutdown's time is up are given up
	// (fwdCtx), so one chat app pausing for a 429 cannot hold the exit.
	fwdCtx, stopFwd := context.WithCancel(context.Background())
	defer stopFwd()
	fwdDone := make(chan struct{})
	go func() {
		defer close(fwdDone)
		e.forward(fwdCtx, e.events)
	}()

	// Before any connector takes an update: a tap on an interaction the
	// last run left pending finds it pending again.
	crashed, stopped, gone := e.restore(runCtx)
	e.awaitAdoptions()
	close(e.restored)
	e.mu.Lock()
	e.running = true
	e.refillLocked() // spare agent sessions (prewarm.go)
	e.mu.Unlock()

	var wg sync.WaitGroup
	errs := make(chan error, len(conns))
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Run(runCtx, e); err != nil && runCtx.Err() == nil {
				err = fmt.Errorf("connector %s: %w", c.Name(), err)
				errs <- err
				cancel(err)
			}
		}()
	}
	recovered := make(chan struct{})
	go func() {
		defer close(recovered)
		e.relistUnanswered(runCtx, stopped)
		e.markInterrupted(runCtx, crashed)
		e.showAbandoned(runCtx, gone)
		e.recoverMerge(runCtx)
	}()
	<-runCtx.Done()
	wg.Wait() // connectors stop taking updates first
	<-recovered

	// Closing sessions, telling chats and flushing share one bound.
	deadline := time.Now().Add(e.opts.closeTimeout)
	giveUp := time.AfterFunc(e.opts.closeTimeout, stopFwd)
	defer giveUp.Stop()
	e.shutdown()
	tailCtx, cancelTail := context.WithDeadline(context.Background(), deadline)
	defer cancelTail()
	// Each interrupted request publishes its resolved event as its Request
	// returns: wait for them, or the unsubscribe below could drop the
	// "leashd restarted" edits of chats whose agents are slow to let go.
	if err := e.coord.Wait(tailCtx); err != nil {
		e.log.Warn("not every interrupted request was shown as interrupted", "err", err)
	}
	e.unsubscribe() // what shutdown published is still forwarded
	<-fwdDone
	e.flush(tailCtx, conns)
	close(errs)
	return <-errs // nil when none failed
}

// flush waits, until ctx is done, for connectors that send in the
// background (connectors.Flusher), so that the edits shutdown caused reach
// the chats before the process exits.
func (e *Engine) flush(ctx context.Context, conns []connectors.Connector) {
	var wg sync.WaitGroup
	for _, c := range conns {
		if f, ok := c.(connectors.Flusher); ok {
			wg.Go(func() {
				if err := f.Flush(ctx); err != nil {
					e.log.Warn("output not sent before shutdown", "connector", c.Name(), "err", err)
				}
			})
		}
	}
	wg.Wait()
}

// shutdown interrupts pending interactions, tells their chats, and closes
// every agent session within the close timeout.
func (e *Engine) shutdown() {
	// First: an agent let go of to run on must not hear the denials that
	// interrupting its requests would send; closing it lets it go.
	e.detachSessions()
	interrupted := e.coord.Interrupt(interactions.InterruptedNotice) // the buttons keep working after the restart
	e.log.Info("shutting down", "interrupted_interactions", len(interrupted))

	e.mu.Lock()
	e.running = false
	sessions := e.closeSparesLocked()
	for _, c := range e.chats {
		c.queue = nil
		if c.cancel != nil {
			c.cancel()
		}
		if c.sess != nil {
			sessions = append(sessions, c.sess)
		}
	}
	e.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), e.opts.closeTimeout)
	defer cancel()
	defer e.agentCancel()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Close(ctx); err != nil {
				e.log.Warn("closing agent session", "err", err)
			}
		}()
	}
	wg.Wait()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		e.log.Warn("chat workers still running at shutdown timeout")
	}
}

// forward delivers coordinator events to the chats' connectors: in order
// within a chat, and each chat on its own, so that a chat app that is slow
// or rate-limited (a Slack chat.update waiting out a 429) delays only its
// own chat's updates, never another chat's. It returns when events is
// closed and every chat's updates are delivered, or given up once ctx is
// done.
func (e *Engine) forward(ctx context.Context, events <-chan interactions.Event) {
	var (
		mu sync.Mutex
		// queued holds the events waiting behind a chat's running
		// delivery; a chat is in the map while its worker runs.
		queued  = map[string][]interactions.Event{}
		workers sync.WaitGroup
	)
	deliver := func(ev interactions.Event) {
		uctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for _, o := range e.outputs(ev.Interaction.ChatID) {
			if err := o.Update(uctx, ev); err != nil {
				e.log.Warn("updating interaction message", "chat", ev.Interaction.ChatID, "id", ev.Interaction.ID, "err", err)
			}
		}
	}
	for ev := range events {
		if ev.Type == interactions.EventRequested {
			continue // shown by Present
		}
		chat := ev.Interaction.ChatID
		mu.Lock()
		if q, busy := queued[chat]; busy {
			queued[chat] = append(q, ev)
			mu.Unlock()
			continue
		}
		queued[chat] = nil
		mu.Unlock()
		workers.Go(func() {
			for {
				deliver(ev)
				mu.Lock()
				q := queued[chat]
				if len(q) == 0 {
					delete(queued, chat)
					mu.Unlock()
					return
				}
				ev, queued[chat] = q[0], q[1:]
				mu.Unlock()
			}
		})
	}
	workers.Wait()
}

// owner returns the connector that owns a chat, or nil.
func (e *Engine) owner(chatID string) connectors.Connector {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ownerLocked(chatID)
}

func (e *Engine) ownerLocked(chatID string) connectors.Connector {
	if c, ok := e.owners[connectors.ChatPrefix(chatID)]; ok {
		return c
	}
	return e.owners["web"]
}

// outputs are the owner of a chat followed by every watcher that is not
// the owner.
func (e *Engine) outputs(chatID string) []connectors.Output {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []connectors.Output
	own := e.ownerLocked(chatID)
	if own != nil {
		out = append(out, own)
	}
	for _, w := range e.watchers {
		if w != own {
			out = append(out, w)
		}
	}
	return out
}

// present shows an interaction: the owner's reference is what counts;
// watchers are shown it too. When the owner failed, the coordinator keeps
// it pending (answerable on the watchers, e.g. the web page) and calls
// present again: a retry shows it to the owner only.
func (e *Engine) present(ctx context.Context, it *interactions.Interaction) (string, error) {
	own := e.owner(it.ChatID)
	var ref string
	var err error
	if own == nil {
		e.mu.Lock()
		err = e.noChatErrLocked(it.ChatID)
		e.mu.Unlock()
	} else {
		ref, err = own.Present(ctx, it)
		if err != nil && ctx.Err() == nil {
			// The operator's signal: the request stays pending (answerable
			// on the web page and the API) and is shown again later.
			lvl := slog.LevelError
			if interactions.PresentAttempt(ctx) > 1 {
				lvl = slog.LevelWarn
			}
			e.log.Log(ctx, lvl, "presenting interaction failed; it stays pending and answerable elsewhere, retrying",
				"connector", own.Name(), "id", it.ID, "chat", it.ChatID, "kind", it.Kind,
				"attempt", interactions.PresentAttempt(ctx), "err", err)
		}
	}
	for _, o := range e.outputs(it.ChatID) {
		if o == connectors.Output(own) || interactions.PresentAttempt(ctx) > 1 {
			continue
		}
		if _, werr := o.Present(ctx, it); werr != nil {
			e.log.Warn("showing interaction to watcher", "id", it.ID, "err", werr)
		}
	}
	return ref, err
}

// say posts a message to a chat's connectors; failures are logged.
func (e *Engine) say(ctx context.Context, chatID, text string) {
	for _, o := range e.outputs(chatID) {
		if err := o.Say(ctx, chatID, text); err != nil {
			e.log.Warn("sending message", "chat", chatID, "err", err)
		}
	}
}

func (e *Engine) stream(ctx context.Context, chatID, text string) {
	for _, o := range e.outputs(chatID) {
		if err := o.StreamText(ctx, chatID, text); err != nil {
			e.log.Warn("streaming agent text", "chat", chatID, "err", err)
		}
	}
}

func (e *Engine) done(ctx context.Context, chatID string, s connectors.Summary) {
	for _, o := range e.outputs(chatID) {
		if err := o.Done(ctx, chatID, s); err != nil {
			e.log.Warn("sending turn summary", "chat", chatID, "err", err)
		}
	}
}

// Interaction implements connectors.Handler.
func (e *Engine) Interaction(id string) (interactions.Interaction, bool) { return e.coord.Get(id) }

// Pending implements connectors.Handler.
func (e *Engine) Pending(chatID string) []interactions.Interaction { return e.coord.Pending(chatID) }

// Selected is a pending multi-select question's selection so far (nil when
// it is not pending).
func (e *Engine) Selected(id string) []string { return e.coord.Selected(id) }

// Toggle implements connectors.Handler.
func (e *Engine) Toggle(_ context.Context, id, label string, r interactions.Reply) ([]string, error) {
	return e.coord.Toggle(id, label, r)
}

// Confirm implements connectors.Handler.
func (e *Engine) Confirm(_ context.Context, id string, r interactions.Reply) error {
	return e.coord.Confirm(id, r)
}

// Reply implements connectors.Handler. An interaction a restart
// interrupted is pending again (restore), so it is answered here too.
func (e *Engine) Reply(_ context.Context, id string, r interactions.Reply) (interactions.Outcome, error) {
	return e.coord.Reply(id, r)
}

// memStore keeps sessions in memory for an engine without a Store: it
// recovers nothing across restarts and keeps no notices.
type memStore struct {
	mu    sync.Mutex
	m     map[string]SessionRecord
	turns []TurnUsage // History (history.go)
}

// NewMemStore returns a Store that keeps chats' sessions in memory only;
// tests embed it to fake the parts of a Store they need.
func NewMemStore() Store { return &memStore{m: make(map[string]SessionRecord)} }

func (s *memStore) LoadSession(_ context.Context, chatID string) (SessionRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.m[chatID]
	return r, ok, nil
}

func (s *memStore) SaveSession(_ context.Context, rec SessionRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[rec.ChatID] = rec
	return nil
}

func (s *memStore) Interrupt(context.Context) ([]Interrupted, error) { return nil, nil }

func (s *memStore) Unanswered(context.Context, time.Time) ([]Interrupted, error) { return nil, nil }

func (s *memStore) Recovered(context.Context, string, interactions.Resolution) (bool, error) {
	return true, nil
}

func (s *memStore) AllowedAgain(context.Context, interactions.Interaction, interactions.Resolution, string) error {
	return nil
}

func (s *memStore) RecordNotice(context.Context, string, string, string, time.Time) error {
	return nil
}

func (s *memStore) Outcome(context.Context, string) (interactions.Interaction, interactions.Resolution, bool, error) {
	return interactions.Interaction{}, interactions.Resolution{}, false, nil
}

func (s *memStore) AskedBy(context.Context, string) (string, error) { return "", nil }
