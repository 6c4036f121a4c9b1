package interactions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// Presenter shows an interaction to people, e.g. by sending a chat message
// with buttons. It returns a reference (such as a message ID) that observers
// receive with later events, to edit what was shown.
//
// The Coordinator has registered the interaction before it calls Present, so
// a tap that arrives before Present returns is not lost. When Present fails
// the interaction stays pending (answerable wherever else it is shown) and
// Present is called again in the background, with backoff, until it
// succeeds or the interaction ends; PresentAttempt tells a retry apart.
//
// *it is the Coordinator's record of the interaction, which does not change
// while it is pending or after: Present must not change it either.
type Presenter interface {
	Present(ctx context.Context, it *Interaction) (ref string, err error)
}

// PresenterFunc adapts a function to Presenter.
type PresenterFunc func(ctx context.Context, it *Interaction) (string, error)

// Present calls f.
func (f PresenterFunc) Present(ctx context.Context, it *Interaction) (string, error) {
	return f(ctx, it)
}

// Journal records interactions durably. Requested is called before the
// interaction is presented, so even a crash between the two loses nothing;
// the persistence layer implements it. Errors are logged, not fatal: a person
// can still answer when the disk cannot record it.
type Journal interface {
	Requested(ctx context.Context, it Interaction) error
	Presented(ctx context.Context, id, ref string) error
	Resolved(ctx context.Context, it Interaction, res Resolution) error
}

// Coordinator tracks pending interactions by ID (for taps) and by chat (for
// typed text), and resolves each exactly once: by a reply, a timeout, a
// cancellation or a shutdown. The zero value is not usable; use New.
type Coordinator struct {
	timeout time.Duration
	journal Journal
	log     *slog.Logger
	now     func() time.Time
	// retryFirst and retryMax bound the backoff between attempts to
	// present an interaction that could not be shown.
	retryFirst, retryMax time.Duration

	mu        sync.Mutex // guards everything below, and every pending's state
	presenter Presenter
	gate      ProgramGate // SetProgramGate; nil: none
	caps      Caps        // WithCaps (caps.go)
	byID      map[string]*pending
	byChat    map[string][]*pending // oldest first; a chat with none has no entry
	gone      tombstones
	late      map[string]*pending // restored ones ended, kept for their agent to join (join.go)
	seq       uint64              // counts registrations, to order those asked at the same time
	closed    bool

	// inflight counts requests whose asker has not yet been told the
	// outcome: Wait waits for them, so that their resolved events are out.
	inflight sync.WaitGroup

	subs subscribers
}

// pending is one interaction waiting for an answer. it does not change once
// registered; the rest is under the coordinator's mu until settled, and
// read-only after done is closed.
type pending struct {
	it        Interaction
	seq       uint64
	done      chan struct{} // closed once res is set
	res       Resolution
	settled   bool
	restored  bool          // asked by an earlier run (Restore)
	joined    chan struct{} // closed when its agent asked again (join.go); restored ones only
	timer     *time.Timer   // expires it; nil without a timeout
	ref       string        // what the Presenter returned; "" until shown
	selected  []bool        // multi-select toggles, by option index
	feedback  bool          // adjust chosen, waiting for text
	approvals []Approver    // counted towards it.Quorum, first first
	// journalMu keeps one interaction's selection and approval records in
	// order (SelectionJournal, ApprovalJournal): the last written is the
	// latest.
	journalMu sync.Mutex
}

func newPending(it *Interaction) *pending {
	p := &pending{it: *it, done: make(chan struct{})}
	if it.MultiSelect {
		p.selected = make([]bool, len(it.Options))
	}
	return p
}

// An Opt configures a Coordinator.
type Opt func(*Coordinator)

// WithTimeout sets how long an interaction waits for an answer before it
// expires; 0 (the default) waits forever.
func WithTimeout(d time.Duration) Opt { return func(c *Coordinator) { c.timeout = d } }

// WithPresenter sets who shows interactions to people.
func WithPresenter(p Presenter) Opt { return func(c *Coordinator) { c.presenter = p } }

// WithJournal sets durable recording of interactions.
func WithJournal(j Journal) Opt { return func(c *Coordinator) { c.journal = j } }

// WithLogger sets the logger; by default nothing is logged.
func WithLogger(l *slog.Logger) Opt { return func(c *Coordinator) { c.log = l } }

// WithClock replaces time.Now for timestamps (tests). Timeouts still run on
// the real clock.
func WithClock(now func() time.Time) Opt { return func(c *Coordinator) { c.now = now } }

// New returns a Coordinator.
func New(opts ...Opt) *Coordinator {
	c := &Coordinator{
		log:        slog.New(slog.DiscardHandler),
		now:        time.Now,
		retryFirst: 2 * time.Second,
		retryMax:   time.Minute,
		byID:       make(map[string]*pending),
		byChat:     make(map[string][]*pending),
		late:       make(map[string]*pending),
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Timeout is the configured answer timeout (0: none).
func (c *Coordinator) Timeout() time.Duration { return c.timeout }

// SetPresenter sets the presenter after construction (wiring cycles).
func (c *Coordinator) SetPresenter(p Presenter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.presenter = p
}

// Request registers it, presents it and blocks until it is resolved: by a
// reply, by the timeout (StatusExpired), by ctx (StatusCancelled), by
// CancelPending or Interrupt. It returns the completed interaction (with its
// ID) and how it ended. The error is non-nil only when it could not be asked
// at all.
func (c *Coordinator) Request(ctx context.Context, it Interaction) (Interaction, Resolution, error) {
	if it.AgentRef != "" {
		if out := c.requestJoined(ctx, &it); out != nil {
			return out.it, out.res, nil
		}
	}
	if c.programAsks(ctx, &it) {
		out := c.requestGated(ctx, &it)
		return out.it, out.res, out.err
	}
	p, err := c.ask(ctx, &it, c.timeout)
	if err != nil {
		return it, Resolution{}, err
	}
	c.wait(ctx, p) // returns nothing: a Resolution in this frame would weigh on every waiting asker
	return p.it, p.res, nil
}

// requestGated is Request of a program's request: through the program gate
// first. It is apart, and its outcome on the heap, so that the frame of an
// agent's waiting Request stays small: every waiting goroutine keeps the
// deepest stack it reached.
//
//go:noinline
func (c *Coordinator) requestGated(ctx context.Context, it *Interaction) *requested {
	out := &requested{it: *it}
	if res, decided, err := c.gated(ctx, &out.it); err != nil || decided {
		out.res, out.err = res, err
		return out
	}
	p, err := c.ask(ctx, &out.it, c.timeout)
	if err != nil {
		out.err = err
		return out
	}
	c.wait(ctx, p)
	out.it, out.res = p.it, p.res
	return out
}

// requested is how a request ended: what was asked, how it ended, or why
// it could not be asked.
type requested struct {
	it  Interaction
	res Resolution
	err error
}

// ask is the one way an interaction is asked: it completes *it (ID, times,
// asker, options), registers it, records and announces it, and presents it.
// timeout 0 means none. Unless it fails, the caller must then wait (c.wait)
// for the outcome.
func (c *Coordinator) ask(ctx context.Context, it *Interaction, timeout time.Duration) (*pending, error) {
	p, presenter, err := c.open(ctx, it, timeout)
	if err != nil {
		return nil, err
	}
	c.present(ctx, p, presenter)
	return p, nil
}

// open checks *it, makes it pending and announces it (journal, log,
// events); it returns the presenter to show it with.
func (c *Coordinator) open(ctx context.Context, it *Interaction, timeout time.Duration) (*pending, Presenter, error) {
	if it.Asker == "" {
		it.Asker = askerOf(ctx)
	}
	if err := validate(it); err != nil {
		return nil, nil, err
	}
	if err := checkRequest(it); err != nil {
		return nil, nil, err
	}
	it.AskedAt = c.now()
	if timeout > 0 {
		it.Deadline = it.AskedAt.Add(timeout)
	}

	p, presenter, err := c.register(it, timeout)
	if err != nil {
		return nil, nil, err
	}
	c.announce(ctx, p)
	return p, presenter, nil
}

// register gives *it a new ID and makes it pending. It returns the presenter
// to show it with.
func (c *Coordinator) register(it *Interaction, timeout time.Duration) (*pending, Presenter, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, ErrClosed
	}
	if err := c.checkCapsLocked(it); err != nil {
		return nil, nil, err
	}
	it.ID = c.newIDLocked()
	p := newPending(it)
	c.addLocked(p, timeout)
	return p, c.presenter, nil
}

// announce journals, logs and publishes that p was asked. Each part is
// its own function, kept out of line: the asker's goroutine keeps the
// deepest stack it reached while it waits, and one frame holding the
// journal's copy of the interaction, the log's attributes and the event
// pushed it past 4 KiB (see TestPendingInteractionMemoryIsBounded).
func (c *Coordinator) announce(ctx context.Context, p *pending) {
	if c.journal != nil {
		c.journalRequested(ctx, p)
	}
	if c.log.Enabled(ctx, slog.LevelInfo) { // skip building the attributes when they go nowhere
		c.logAsked(p)
	}
	if c.subs.any() { // an event nobody would receive is not built
		c.publishRequested(p)
	}
}

//go:noinline
func (c *Coordinator) journalRequested(ctx context.Context, p *pending) {
	if err := c.journal.Requested(ctx, p.it); err != nil {
		c.log.Error("recording interaction", "id", p.it.ID, "chat", p.it.ChatID, "err", err)
	}
}

//go:noinline
func (c *Coordinator) logAsked(p *pending) {
	c.log.Info("interaction asked", "id", p.it.ID, "chat", p.it.ChatID, "kind", p.it.Kind)
}

//go:noinline
func (c *Coordinator) publishRequested(p *pending) {
	e := new(Event)
	e.Type, e.Interaction = EventRequested, p.it
	c.subs.publish(e)
}

// addLocked makes p pending: findable by ID and by chat, expiring after
// timeout (0: never), waited for by Wait.
func (c *Coordinator) addLocked(p *pending, timeout time.Duration) {
	c.seq++
	p.seq = c.seq
	c.byID[p.it.ID] = p
	c.byChat[p.it.ChatID] = append(c.byChat[p.it.ChatID], p)
	if timeout > 0 {
		p.timer = time.AfterFunc(timeout, func() { c.expire(p, timeout) })
	}
	c.inflight.Add(1) // under mu, so never after Interrupt closed c
}

// expire resolves p as expired, unless something else resolved it first.
func (c *Coordinator) expire(p *pending, timeout time.Duration) {
	text := fmt.Sprintf("No answer came within %s; the user did not respond.", timeout)
	c.resolve(p, Resolution{Status: StatusExpired, Text: text})
}

// present shows p with the Presenter (attempt 1), or cancels p when there
// is none. When presenting fails p stays pending, answerable wherever else
// it is shown (the web page, the API), and is shown again in the background
// until it ends: a failed send is never an answer.
func (c *Coordinator) present(ctx context.Context, p *pending, presenter Presenter) {
	if presenter == nil {
		c.resolve(p, Resolution{Status: StatusCancelled, Text: "No chat connector could show this request."})
		return
	}
	ref, err := presenter.Present(ctx, &p.it)
	if err != nil {
		c.log.Error("presenting interaction failed; it stays pending and answerable elsewhere, retrying in the background",
			"id", p.it.ID, "chat", p.it.ChatID, "kind", p.it.Kind, "err", err)
		go c.retryPresent(ctx, p, presenter)
		return
	}
	c.shown(ctx, p, ref)
}

// shown records what the Presenter returned for p. The first reference
// stays: a restored interaction keeps the message an earlier run showed it
// in.
func (c *Coordinator) shown(ctx context.Context, p *pending, ref string) {
	if ref == "" {
		return
	}
	c.mu.Lock()
	if p.ref == "" {
		p.ref = ref
	}
	c.mu.Unlock()
	if c.journal == nil {
		return
	}
	if err := c.journal.Presented(ctx, p.it.ID, ref); err != nil {
		c.log.Error("recording interaction message", "id", p.it.ID, "err", err)
	}
}

// wait blocks until p is resolved (by a reply, its timer, or ctx ending),
// then records and announces the outcome, which p.res then holds.
func (c *Coordinator) wait(ctx context.Context, p *pending) {
	defer c.inflight.Done()
	select {
	case <-p.done:
	case <-ctx.Done():
		c.cancelWaiting(ctx, p)
	}
	c.finish(ctx, p)
}

// cancelWaiting resolves p as cancelled because the asker's ctx ended,
// and waits for it to end (someone else may have resolved it first). It
// is out of line so that the frame every waiting asker keeps is small.
//
//go:noinline
func (c *Coordinator) cancelWaiting(ctx context.Context, p *pending) {
	c.resolve(p, Resolution{Status: StatusCancelled, Text: cancelledText(ctx)})
	<-p.done
}

// cancelledText says why a request whose context ended was cancelled.
func cancelledText(ctx context.Context) string {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrWithdrawn):
		return WithdrawnText
	case errors.Is(cause, ErrAskerGone):
		return AskerGoneText
	}
	return "The request was cancelled before anyone answered."
}

// finish journals, logs and announces how p ended.
func (c *Coordinator) finish(ctx context.Context, p *pending) {
	if c.journal != nil && !p.restored {
		c.journalResolved(ctx, p)
	}
	if c.log.Enabled(ctx, slog.LevelInfo) {
		c.logResolved(p)
	}
	if c.subs.any() {
		c.publishResolved(p)
	}
}

// journalResolved records how p ended. A restored interaction's outcome is
// not journaled here: the journal holds it as interrupted, and Restore's
// caller records what came of it.
func (c *Coordinator) journalResolved(ctx context.Context, p *pending) {
	// The caller's context may be done (that is how it was cancelled);
	// the record must still be written.
	if err := c.journal.Resolved(context.WithoutCancel(ctx), p.it, p.res); err != nil {
		c.log.Error("recording resolution", "id", p.it.ID, "err", err)
	}
}

func (c *Coordinator) logResolved(p *pending) {
	if p.restored {
		c.log.Info("interaction resolved", "id", p.it.ID, "chat", p.it.ChatID, "kind", p.it.Kind,
			"status", p.res.Status, "by", p.res.By, "restored", true)
		return
	}
	c.log.Info("interaction resolved", "id", p.it.ID, "chat", p.it.ChatID, "kind", p.it.Kind,
		"status", p.res.Status, "by", p.res.By, "latency", p.res.At.Sub(p.it.AskedAt))
}

func (c *Coordinator) publishResolved(p *pending) {
	c.mu.Lock()
	ref := p.ref // a retried Present may still set it
	c.mu.Unlock()
	c.subs.publish(&Event{Type: EventResolved, Interaction: p.it, Resolution: p.res, Ref: ref,
		Selected: p.selectedLabels(), Approvals: p.res.Approvals})
}

// validate checks *it and completes it: the options of a plan review or
// tool approval, no nil Options.
func validate(it *Interaction) error {
	if it.ChatID == "" {
		return fmt.Errorf("%w: the interaction has no chat ID", ErrInvalidReply)
	}
	switch it.Kind {
	case KindQuestion:
		if strings.TrimSpace(it.Question) == "" {
			return errEmptyQuestion
		}
		if it.MultiSelect && len(it.Options) == 0 {
			it.MultiSelect = false
		}
		styleYesNo(it)
	case KindPlanReview:
		it.Options = slices.Clone(PlanOptions)
		it.MultiSelect = false
	case KindToolApproval:
		it.MultiSelect = false
		if it.OwnOptions() {
			return checkOwnOptions(it.Options)
		}
		it.Options = toolOptions(it.NoSessionAllow, it.DefaultToNo)
	default:
		return fmt.Errorf("unknown interaction kind %q (accepted: question, plan_review, tool_approval)", it.Kind)
	}
	if it.Options == nil {
		it.Options = []Choice{}
	}
	return nil
}

// styleYesNo marks a yes/no approval's options (IsYesNo) as approve and
// deny when the asker did not: every door a program asks through (HTTP,
// leashd ask, MCP, the Go client) gets an approval card, not a question.
func styleYesNo(it *Interaction) {
	if !it.IsYesNo() || it.Styled() {
		return
	}
	it.Options = slices.Clone(it.Options)
	it.Options[0].Style, it.Options[1].Style = StyleApprove, StyleDeny
}

// checkOwnOptions checks a tool approval's own options (OwnOptions): as a
// question's (how many, labels given once, lengths), and each approves or
// refuses.
func checkOwnOptions(opts []Choice) error {
	if err := checkOptions(opts); err != nil {
		return err
	}
	for i, o := range opts {
		if o.Style != StyleApprove && o.Style != StyleDeny {
			return fmt.Errorf("%w: options[%d].style of the tool approval is %q (accepted: %q, %q)", ErrInvalidReply, i, o.Style, StyleApprove, StyleDeny)
		}
	}
	return nil
}

// newIDLocked returns a new ID that is neither pending nor remembered as
// recently settled, so a tap on an old message never reaches a new
// interaction.
func (c *Coordinator) newIDLocked() string {
	for {
		id := newID()
		if _, taken := c.byID[id]; !taken && c.gone.status(id) == "" {
			return id
		}
	}
}

// newID returns a short random ID: 8 URL-safe characters, 48 random bits.
// math/rand/v2's global generator is ChaCha8, seeded from the system's
// entropy, so IDs are unguessable: a tap cannot name someone else's
// interaction by guessing.
func newID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var b [8]byte
	v := rand.Uint64()
	for i := range b {
		b[i] = alphabet[v&63]
		v >>= 6
	}
	return string(b[:])
}

// resolve settles p once; later calls do nothing. It reports whether this
// call settled it.
func (c *Coordinator) resolve(p *pending, res Resolution) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resolveLocked(p, res)
}

// resolveLocked settles p with res, unless it is settled already, and wakes
// its asker. It stops being pending: a later tap on it finds its tombstone.
func (c *Coordinator) resolveLocked(p *pending, res Resolution) bool {
	if p.settled {
		return false
	}
	p.settled = true
	if p.timer != nil {
		p.timer.Stop()
	}
	if res.At.IsZero() {
		res.At = c.now()
	}
	if len(p.approvals) > 0 {
		res.Approvals = slices.Clone(p.approvals)
	}
	p.res = res
	delete(c.byID, p.it.ID)
	c.removeFromChatLocked(p)
	c.keepForJoinLocked(p)
	c.gone.add(p.it.ID, res.Status)
	close(p.done)
	return true
}

func (c *Coordinator) removeFromChatLocked(p *pending) {
	q := c.byChat[p.it.ChatID]
	i := slices.Index(q, p)
	if i < 0 {
		return
	}
	q = slices.Delete(q, i, i+1)
	if len(q) == 0 {
		delete(c.byChat, p.it.ChatID) // chats that asked once do not pile up
		return
	}
	c.byChat[p.it.ChatID] = q
}

// resolveAllLocked settles each of ps with res and returns the interactions
// it settled.
func (c *Coordinator) resolveAllLocked(ps []*pending, res Resolution) []Interaction {
	out := make([]Interaction, 0, len(ps))
	for _, p := range ps {
		if c.resolveLocked(p, res) {
			out = append(out, p.it)
		}
	}
	return out
}

// IsStale reports whether err means the interaction is gone (unknown, or no
// longer pending), as opposed to a bad or unauthorized reply.
func IsStale(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotPending)
}
