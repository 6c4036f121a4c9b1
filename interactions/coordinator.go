package interactions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
// *it is lent for the call: Present must not change it, nor keep the
// pointer after it returns (copy what it keeps). It is a pointer because
// Present runs on the goroutine that asked, which then waits, perhaps for
// hours: an Interaction passed by value takes a few hundred bytes of that
// goroutine's stack, enough to double the stack it keeps while it waits.
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
	timeout   time.Duration
	presenter atomic.Pointer[Presenter] // read on every request without c.mu
	journal   Journal
	log       *slog.Logger
	now       func() time.Time
	realClock bool  // now is the real clock: AskedAt also starts the expiry clock
	clock     clock // the real clock, cheaper (clock.go)
	// retryFirst and retryMax bound the backoff between attempts to
	// present an interaction that could not be shown.
	retryFirst, retryMax time.Duration

	mu     sync.Mutex
	byID   map[string]*pending
	byChat chats
	gone   tombstones
	// expiries time out pending interactions (under mu).
	expiries expiries
	closed   bool

	// inflight counts Request calls that have not returned: each publishes
	// its interaction's resolved event just before it returns (Wait).
	inflight sync.WaitGroup

	subs subscribers
}

type pending struct {
	// it is what was asked: RequestInto's caller's own, which does not
	// change while it is pending (copies leave under c.mu).
	it       *Interaction
	done     chan struct{} // closed once res is set
	res      Resolution
	selected []bool // multi-select toggles, by option index
	feedback bool   // adjust chosen, waiting for text
	// ref is what the Presenter returned ("" until shown): written once,
	// before refSet is set, and read (shownAs) only after refSet is seen
	// set, so without c.mu, which taps contend for.
	ref     string
	refSet  atomic.Bool
	settled bool        // res is set; under c.mu
	exp     expiryLinks // its place among those that time out; under c.mu
	chat    *chatQueue  // its chat's queue while pending; under c.mu
	opts    [4]Option   // room for a plan review's or tool approval's options
	// approvals are the approvals counted towards it.Quorum, first first.
	approvals []Approver
	// selMu orders the journal writes of the selection (SelectionJournal)
	// and of the approvals (ApprovalJournal).
	selMu sync.Mutex
}

// An Opt configures a Coordinator.
type Opt func(*Coordinator)

// WithTimeout sets how long an interaction waits for an answer before it
// expires; 0 (the default) waits forever.
func WithTimeout(d time.Duration) Opt { return func(c *Coordinator) { c.timeout = d } }

// WithPresenter sets who shows interactions to people.
func WithPresenter(p Presenter) Opt { return func(c *Coordinator) { c.SetPresenter(p) } }

// WithJournal sets durable recording of interactions.
func WithJournal(j Journal) Opt { return func(c *Coordinator) { c.journal = j } }

// WithLogger sets the logger; by default nothing is logged.
func WithLogger(l *slog.Logger) Opt { return func(c *Coordinator) { c.log = l } }

// WithClock replaces time.Now for timestamps (tests).
func WithClock(now func() time.Time) Opt {
	return func(c *Coordinator) { c.now, c.realClock = now, false }
}

// New returns a Coordinator.
func New(opts ...Opt) *Coordinator {
	c := &Coordinator{
		log:        slog.New(slog.DiscardHandler),
		realClock:  true,
		retryFirst: 2 * time.Second,
		retryMax:   time.Minute,
		byID:       make(map[string]*pending),
		gone:       newTombstones(),
	}
	c.now = c.clock.now
	for _, o := range opts {
		o(c)
	}
	return c
}

// Timeout is the configured answer timeout (0: none).
func (c *Coordinator) Timeout() time.Duration { return c.timeout }

// SetPresenter sets the presenter after construction (wiring cycles).
func (c *Coordinator) SetPresenter(p Presenter) {
	if p == nil {
		c.presenter.Store(nil)
		return
	}
	c.presenter.Store(&p)
}

// Request registers it, presents it and blocks until it is resolved: by a
// reply, by the timeout (StatusExpired), by ctx (StatusCancelled), by
// CancelPending or Interrupt. It returns the completed interaction (with its
// ID) and how it ended. The error is non-nil only when it could not be asked
// at all.
func (c *Coordinator) Request(ctx context.Context, it Interaction) (Interaction, Resolution, error) {
	p, err := c.request(ctx, &it, c.timeout, nil)
	if err != nil {
		return it, Resolution{}, err
	}
	return it, p.res, nil
}

// RequestInto is Request for an interaction the caller holds by pointer: it
// completes *it in place (ID, AskedAt, Deadline, Asker, Options) and returns
// how it ended. The coordinator uses *it itself, not a copy, until
// RequestInto returns: the caller must not change it meanwhile, and may
// reuse it afterwards. It saves the caller's frame the copies of a large
// Interaction in and out (about 0.7 KB of the stack the caller keeps while
// it waits): with a Presenter that does not go deep on the asking
// goroutine, that goroutine keeps the smallest stack Go has (2 KiB).
func (c *Coordinator) RequestInto(ctx context.Context, it *Interaction) (Resolution, error) {
	p, err := c.request(ctx, it, c.timeout, nil)
	if err != nil {
		return Resolution{}, err
	}
	return p.res, nil // written once before done was closed
}

// request is Request with its own timeout (0: none); shown, when set,
// receives the interaction once it is registered and presented (or
// presenting failed), before the wait. It returns p once p.res is final.
//
// The goroutine that asks waits here, for minutes or hours, and keeps its
// stack all that while: a stack grows (2 KiB, 4, 8, …) to the deepest frame
// chain it ever reached, and a waiting goroutine's stack is never shrunk
// back (Go shrinks only stacks less than a quarter used, and the frames of
// any wait use more of a 4 KiB one). So no frame on the way holds an
// Interaction or a Resolution (hence *pending, not a Resolution, comes
// back), and the work that needs large frames (events, logging, the
// journal, error messages) is done in out-of-line helpers; the runtime's
// own deep paths (a mutex's slow path, a map growing, the allocator
// refilling) then still fit in 2 KiB.
func (c *Coordinator) request(ctx context.Context, it *Interaction, timeout time.Duration, shown chan<- Interaction) (*pending, error) {
	p, err := c.register(ctx, it, timeout)
	if err != nil {
		return nil, err
	}
	c.announce(ctx, p)
	if ref, ok := c.present(ctx, p); ok {
		c.shown(ctx, p, it.ID, ref)
	}
	if shown != nil {
		notifyShown(shown, it)
	}
	c.await(ctx, p)
	c.finish(ctx, p)
	c.inflight.Done()
	return p, nil
}

// register validates and completes *it and records it under a new ID. The
// caller must call c.inflight.Done once it returns without error.
//
//go:noinline
func (c *Coordinator) register(ctx context.Context, it *Interaction, timeout time.Duration) (*pending, error) {
	p := &pending{done: make(chan struct{})}
	if err := validate(it, p.opts[:0]); err != nil {
		return nil, err
	}
	it.AskedAt = c.now()
	if it.Asker == "" {
		it.Asker = askerOf(ctx)
	}
	if timeout > 0 {
		it.Deadline = it.AskedAt.Add(timeout)
	}
	if it.MultiSelect {
		p.selected = make([]bool, len(it.Options))
	}
	id := newID() // drawn before the lock, which it then only checks

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.inflight.Add(1) // under the lock: never after Interrupt closed c
	it.ID = c.unusedIDLocked(id)
	p.it = it
	c.byID[it.ID] = p
	c.byChat.add(p)
	if timeout > 0 {
		start := it.AskedAt
		if !c.realClock {
			start = time.Now()
		}
		c.expireLocked(p, timeout, start)
	}
	c.mu.Unlock()
	return p, nil
}

// announce journals, logs and publishes that p was asked.
//
//go:noinline
func (c *Coordinator) announce(ctx context.Context, p *pending) {
	if c.journal != nil {
		c.journalRequested(ctx, p)
	}
	if c.log.Enabled(ctx, slog.LevelInfo) {
		c.logAsked(p)
	}
	c.publish(EventRequested, p, "", nil)
}

// The helpers below that take an Interaction by value or log are kept out
// of line (noinline), so that their large frames are not part of the
// frames they are called from.

//go:noinline
func (c *Coordinator) journalRequested(ctx context.Context, p *pending) {
	if err := c.journal.Requested(ctx, *p.it); err != nil {
		c.log.Error("recording interaction", "id", p.it.ID, "chat", p.it.ChatID, "err", err)
	}
}

//go:noinline
func (c *Coordinator) logAsked(p *pending) {
	c.log.Info("interaction asked", "id", p.it.ID, "chat", p.it.ChatID, "kind", p.it.Kind)
}

// present shows p with the Presenter (attempt 1) and returns what it
// returned, or cancels p when there is none. When presenting fails p stays
// pending, answerable wherever else it is shown (the web page, the API),
// and is shown again in the background until it ends: never an answer.
//
//go:noinline
func (c *Coordinator) present(ctx context.Context, p *pending) (ref string, ok bool) {
	presenter := c.presenter.Load()
	if presenter == nil {
		c.noPresenter(p)
		return "", false
	}
	ref, err := (*presenter).Present(ctx, p.it) // PresentAttempt: 1
	if err != nil {
		c.presentFailed(ctx, p, *presenter, err)
		return "", false
	}
	return ref, true
}

//go:noinline
func (c *Coordinator) noPresenter(p *pending) {
	c.resolve(p, Resolution{Status: StatusCancelled, Text: "No chat connector could show this request."})
}

//go:noinline
func (c *Coordinator) presentFailed(ctx context.Context, p *pending, presenter Presenter, err error) {
	c.log.Error("presenting interaction failed; it stays pending and answerable elsewhere, retrying in the background",
		"id", p.it.ID, "chat", p.it.ChatID, "kind", p.it.Kind, "err", err)
	it := *p.it // its own copy: *p.it is the asker's again once p ends
	go c.retryPresent(ctx, p, &it, presenter)
}

//go:noinline
func notifyShown(shown chan<- Interaction, it *Interaction) { shown <- *it }

// finish journals, logs and announces how p ended.
//
//go:noinline
func (c *Coordinator) finish(ctx context.Context, p *pending) {
	if c.journal != nil {
		c.journalResolved(ctx, p)
	}
	if c.log.Enabled(ctx, slog.LevelInfo) {
		c.logResolved(p)
	}
	c.publishResolved(p)
}

//go:noinline
func (c *Coordinator) journalResolved(ctx context.Context, p *pending) {
	// The caller's context may be done (that is how it was cancelled);
	// the record must still be written.
	if err := c.journal.Resolved(context.WithoutCancel(ctx), *p.it, p.res); err != nil {
		c.log.Error("recording resolution", "id", p.it.ID, "err", err)
	}
}

//go:noinline
func (c *Coordinator) logResolved(p *pending) {
	c.log.Info("interaction resolved", "id", p.it.ID, "chat", p.it.ChatID, "kind", p.it.Kind,
		"status", p.res.Status, "by", p.res.By, "latency", p.res.At.Sub(p.it.AskedAt))
}

// shown records what the Presenter returned for p (id: its ID; not read
// from p.it, which is its asker's again once p ends).
//
//go:noinline
func (c *Coordinator) shown(ctx context.Context, p *pending, id, ref string) {
	if ref == "" {
		return
	}
	p.setRef(ref)
	if c.journal != nil {
		c.journalPresented(ctx, id, ref)
	}
}

//go:noinline
func (c *Coordinator) journalPresented(ctx context.Context, id, ref string) {
	if err := c.journal.Presented(ctx, id, ref); err != nil {
		c.log.Error("recording interaction message", "id", id, "err", err)
	}
}

// await blocks until p is resolved (p.res is set): by a reply, its
// timeout (its expiry list, joined when it was registered, resolves p
// itself), or ctx; so the wait is a receive on one or two channels, in a
// small frame.
func (c *Coordinator) await(ctx context.Context, p *pending) {
	if done := ctx.Done(); done != nil {
		select {
		case <-p.done:
		case <-done:
			c.cancelled(ctx, p)
		}
	}
	<-p.done
}

// cancelled resolves p because ctx ended.
//
//go:noinline
func (c *Coordinator) cancelled(ctx context.Context, p *pending) {
	text := "The request was cancelled before anyone answered."
	if errors.Is(context.Cause(ctx), ErrWithdrawn) {
		text = WithdrawnText
	}
	c.resolve(p, Resolution{Status: StatusCancelled, Text: text})
}

// publish announces an event about p to the subscribers, if any. ref and
// sel are the ones to announce (p's own are under c.mu).
func (c *Coordinator) publish(typ EventType, p *pending, ref string, sel []string) {
	if !c.subs.any() {
		return
	}
	c.subs.publish(&Event{Type: typ, Interaction: *p.it, Ref: ref, Selected: sel})
}

// publishResolved announces p's EventResolved, once p is resolved.
//
//go:noinline
func (c *Coordinator) publishResolved(p *pending) {
	if e := c.resolvedEvent(p); e != nil {
		c.subs.publish(e)
	}
}

// resolvedEvent is p's EventResolved, once p is resolved and p.done
// closed, or nil when nobody subscribes. No c.mu: nothing of p changes
// once it is settled, and the close of p.done orders the last writes
// before this read.
func (c *Coordinator) resolvedEvent(p *pending) *Event {
	if !c.subs.any() {
		return nil
	}
	return &Event{Type: EventResolved, Interaction: *p.it, Resolution: p.res, Ref: p.shownAs(), Selected: p.selectedLabels(), Approvals: p.res.Approvals}
}

// validate checks and completes *it. Runs on the asking goroutine: its
// errors are built out of line, so that its frame stays small.
//
// A plan review's or tool approval's options are built in buf when it has
// room (a pending interaction's own array: one allocation fewer), clipped
// so that an append by a later user copies them.
func validate(it *Interaction, buf []Option) error {
	if it.ChatID == "" {
		return errNoChat()
	}
	switch it.Kind {
	case KindQuestion:
		if strings.TrimSpace(it.Question) == "" {
			return errEmptyQuestion
		}
		if it.MultiSelect && len(it.Options) == 0 {
			it.MultiSelect = false
		}
	case KindPlanReview:
		it.Options = slices.Clip(append(buf, PlanOptions...))
		it.MultiSelect = false
	case KindToolApproval:
		it.Options = slices.Clip(toolOptions(buf, it.NoSessionAllow, it.DefaultToNo))
		it.MultiSelect = false
	default:
		return errUnknownKind(it.Kind)
	}
	if it.Options == nil {
		it.Options = []Option{}
	}
	return nil
}

//go:noinline
func errNoChat() error { return fmt.Errorf("%w: the interaction has no chat ID", ErrInvalidReply) }

//go:noinline
func errUnknownKind(k Kind) error {
	return fmt.Errorf("unknown interaction kind %q (accepted: question, plan_review, tool_approval)", k)
}

// newID returns a short random ID: 8 URL-safe characters, 48 random bits
// from math/rand/v2's global generator, which is ChaCha8 (a CSPRNG) seeded
// by the runtime from the system's entropy, per thread: as unguessable as
// crypto/rand, without a system call or a lock per ID.
func newID() string {
	var b [8]byte
	v := mrand.Uint64()
	for i := range b {
		b[i] = idAlphabet[v&63]
		v >>= 6
	}
	return string(b[:])
}

// unusedIDLocked returns id, or another new ID if id is pending (a chance
// of one in 2^48 per interaction pending). It does not look among the
// recently ended (tombstones): that lookup, a cache miss in a table of
// hundreds of KiB, cost more than the rest of registering, for a chance of 1 in 8·10^9 per
// interaction (32,768 remembered of 2^48) that a tap on a long-gone message
// would reach a new interaction with the same ID.
func (c *Coordinator) unusedIDLocked(id string) string {
	for {
		if _, taken := c.byID[id]; !taken {
			return id
		}
		id = newID()
	}
}

// idAlphabet is base64's URL-safe alphabet.
const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// resolve settles p once; later calls do nothing. It reports whether this
// call settled it.
func (c *Coordinator) resolve(p *pending, res Resolution) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resolveLocked(p, res)
}

func (c *Coordinator) resolveLocked(p *pending, res Resolution) bool {
	if !c.settleOneLocked(p, res) {
		return false
	}
	close(p.done)
	return true
}

// settleOneLocked is resolveLocked without waking the asker: the caller
// closes p.done once it has let go of c.mu (when it reports true), so that
// the asker, woken, does not wait for the lock its waker still holds.
func (c *Coordinator) settleOneLocked(p *pending, res Resolution) bool {
	// Not by p.it.ID: once p is settled its asker may have *p.it back (a
	// late timer comes here then). Nothing reads *p.it after p.done is
	// closed: callers copy what they return before they resolve.
	if p.settled {
		return false
	}
	p.settled = true
	c.unexpireLocked(p)
	if res.At.IsZero() {
		res.At = c.now()
	}
	if len(p.approvals) > 0 {
		res.Approvals = slices.Clone(p.approvals)
	}
	p.res = res
	delete(c.byID, p.it.ID)
	c.byChat.remove(p)
	c.gone.add(p.it.ID, res.Status)
	return true
}

// Reply answers the pending interaction id. Errors: ErrNotFound (unknown ID),
// ErrNotPending (already resolved, expired or cancelled), ErrUnauthorized,
// ErrInvalidReply (an option that does not exist, an empty reply, …).
//
// A plan review or tool approval that needs a quorum (Interaction.Quorum)
// counts an approve option from a person not counted yet (Counted, until
// the last one needed resolves it with that person's decision); a repeat
// from someone already counted returns ErrAlreadyApproved and changes
// nothing. A deny, adjust or reject from anyone resolves it at once. With
// an ApprovalJournal every counted approval is recorded before Reply
// returns.
func (c *Coordinator) Reply(id string, r Reply) (Outcome, error) {
	at := c.now() // read before the lock, not while taps wait for it
	c.mu.Lock()
	p, err := c.lookupLocked(id)
	if err != nil {
		c.mu.Unlock()
		return 0, err
	}
	out, err := c.replyLocked(p, r, at)
	c.mu.Unlock()
	switch out {
	case Resolved:
		close(p.done)
	case Counted:
		c.journalApprovals(p)
	}
	return out, err
}

// ReplyText routes typed text from a chat to its oldest pending interaction:
// a question's free-text answer, a plan review's adjust feedback, or a tool
// approval's deny reason. It returns ErrNotFound when nothing is pending in
// the chat, so the caller can treat the text as a prompt instead.
func (c *Coordinator) ReplyText(chatID string, r Reply) (Interaction, Outcome, error) {
	at := c.now()
	c.mu.Lock()
	it, p, out, err := c.replyTextLocked(chatID, r, at)
	c.mu.Unlock()
	if out == Resolved {
		close(p.done)
	}
	return it, out, err
}

func (c *Coordinator) replyTextLocked(chatID string, r Reply, at time.Time) (Interaction, *pending, Outcome, error) {
	list := c.byChat.pending(chatID)
	if len(list) == 0 {
		return Interaction{}, nil, 0, ErrNotFound
	}
	p := list[0]
	for _, q := range list { // an adjust waiting for feedback asked for this text
		if q.feedback {
			p = q
			break
		}
	}
	r.Answers = nil
	if p.feedback {
		r.Answers = []string{DecisionAdjust}
	}
	it := *p.it // before: once settled, *p.it is its asker's again
	out, err := c.replyLocked(p, r, at)
	return it, p, out, err // typed text never approves: nothing to journal
}

// Toggle flips a multi-select option and returns the selected labels in
// option order. With a SelectionJournal the selection is recorded before
// Toggle returns, so that it survives a restart.
func (c *Coordinator) Toggle(id, label string, r Reply) ([]string, error) {
	c.mu.Lock()
	p, sel, err := c.toggleLocked(id, label, r)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	c.journalSelection(p)
	return sel, nil
}

func (c *Coordinator) toggleLocked(id, label string, r Reply) (*pending, []string, error) {
	p, err := c.lookupLocked(id)
	if err != nil {
		return nil, nil, err
	}
	if err := authorize(p, r); err != nil {
		return nil, nil, err
	}
	if !p.it.MultiSelect {
		return nil, nil, fmt.Errorf("%w: %q is not a multi-select question; answer with one option", ErrInvalidReply, p.it.Question)
	}
	i := optionIndex(*p.it, label)
	if i < 0 {
		return nil, nil, invalidOption(*p.it, label)
	}
	p.selected[i] = !p.selected[i]
	sel := p.selectedLabels()
	c.subs.publish(&Event{Type: EventUpdated, Interaction: *p.it, Selected: sel, Ref: p.shownAs()})
	return p, sel, nil
}

// Confirm resolves a multi-select question with the options toggled so far.
func (c *Coordinator) Confirm(id string, r Reply) error {
	at := c.now()
	c.mu.Lock()
	p, out, err := c.confirmLocked(id, r, at)
	c.mu.Unlock()
	if out == Resolved {
		close(p.done)
	}
	return err
}

func (c *Coordinator) confirmLocked(id string, r Reply, at time.Time) (*pending, Outcome, error) {
	p, err := c.lookupLocked(id)
	if err != nil {
		return nil, 0, err
	}
	if !p.it.MultiSelect {
		return nil, 0, fmt.Errorf("%w: only multi-select questions are confirmed", ErrInvalidReply)
	}
	sel := p.selectedLabels()
	if len(sel) == 0 {
		return nil, 0, fmt.Errorf("%w: select at least one option before confirming", ErrInvalidReply)
	}
	r.Answers, r.Text, r.Reject = sel, "", false
	out, err := c.replyLocked(p, r, at)
	return p, out, err
}

// shownAs is what the Presenter returned for p ("" until it returned).
func (p *pending) shownAs() string {
	if p.refSet.Load() {
		return p.ref
	}
	return ""
}

// setRef records what the Presenter returned, once: the first Present that
// succeeded (attempt 1, or a retry after it failed) or, restored, the
// message an earlier run showed it in.
func (p *pending) setRef(ref string) {
	if p.refSet.Load() {
		return
	}
	p.ref = ref
	p.refSet.Store(true)
}

func (p *pending) selectedLabels() []string {
	var out []string
	for i, on := range p.selected {
		if on {
			out = append(out, p.it.Options[i].Label)
		}
	}
	return out
}

func (c *Coordinator) lookupLocked(id string) (*pending, error) {
	if p, ok := c.byID[id]; ok {
		return p, nil
	}
	if st := c.gone.status(id); st != "" {
		return nil, fmt.Errorf("%w: it was %s", ErrNotPending, st)
	}
	return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
}

func authorize(p *pending, r Reply) error {
	if r.Authorize == nil {
		return nil
	}
	if err := r.Authorize(*p.it); err != nil {
		return fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	return nil
}

func (c *Coordinator) replyLocked(p *pending, r Reply, at time.Time) (Outcome, error) {
	if err := authorize(p, r); err != nil {
		return 0, err
	}
	res, out, err := evaluate(p.it, r, at)
	if err != nil {
		return 0, err
	}
	if out == AwaitingFeedback {
		if !p.feedback {
			p.feedback = true
			c.subs.publish(&Event{Type: EventUpdated, Interaction: *p.it, AwaitingFeedback: true, Ref: p.shownAs(), Approvals: slices.Clone(p.approvals)})
		}
		return AwaitingFeedback, nil
	}
	if res.Status == StatusAnswered && p.it.NeedsQuorum() {
		if slices.ContainsFunc(p.approvals, func(a Approver) bool { return a.By == r.By }) {
			return 0, fmt.Errorf("%w (%s)", ErrAlreadyApproved, QuorumText(*p.it, p.approvals, nil))
		}
		p.approvals = append(p.approvals, Approver{By: r.By, At: c.now(), Decision: res.Decision})
		if len(p.approvals) < p.it.Quorum {
			c.subs.publish(&Event{Type: EventUpdated, Interaction: *p.it, Ref: p.shownAs(), Approvals: slices.Clone(p.approvals)})
			return Counted, nil
		}
	}
	c.settleOneLocked(p, res) // the caller wakes the asker once it let go of c.mu
	return Resolved, nil
}

// Evaluate decides what a reply means for an interaction, changing nothing:
// the resolution it gives, or AwaitingFeedback for "adjust" without text, or
// ErrInvalidReply saying what was wrong and what is accepted. It does not
// call r.Authorize. The engine uses it for interactions interrupted by a
// restart, which are no longer pending here.
func Evaluate(it Interaction, r Reply) (Resolution, Outcome, error) {
	return evaluate(&it, r, time.Time{})
}

// evaluate is Evaluate for *it, under c.mu: no copy of it; at, when not
// zero, is the resolution's time.
func evaluate(it *Interaction, r Reply, at time.Time) (Resolution, Outcome, error) {
	text := strings.TrimSpace(r.Text)
	res := Resolution{By: r.By, At: at}
	if r.Reject {
		res.Status, res.Decision = StatusRejected, DecisionReject
		res.Text = text
		if res.Text == "" {
			res.Text = RejectedText
		}
		return res, Resolved, nil
	}
	if len(r.Answers) == 0 && text == "" {
		return res, 0, fmt.Errorf("%w: give an option, text, or reject", ErrInvalidReply)
	}
	for _, a := range r.Answers {
		if !hasOption(it.Options, a) {
			return res, 0, invalidOption(*it, a)
		}
	}
	switch it.Kind {
	case KindQuestion:
		switch {
		case len(r.Answers) > 1 && !it.MultiSelect:
			return res, 0, fmt.Errorf("%w: %q takes one option, got %d", ErrInvalidReply, it.Question, len(r.Answers))
		case len(r.Answers) > 0:
			res.Answer = strings.Join(inOptionOrder(it.Options, r.Answers), ", ")
		default:
			res.Answer = text
		}
		res.Status = StatusAnswered
	case KindPlanReview:
		decision := DecisionAdjust
		if len(r.Answers) > 1 {
			return res, 0, fmt.Errorf("%w: a plan review takes one decision, got %d", ErrInvalidReply, len(r.Answers))
		} else if len(r.Answers) == 1 {
			decision = r.Answers[0]
		}
		res.Decision = decision
		if decision == DecisionAdjust {
			if text == "" {
				return res, AwaitingFeedback, nil
			}
			res.Status, res.Text = StatusRejected, text
		} else {
			res.Status = StatusAnswered
		}
	case KindToolApproval:
		decision := DecisionDeny
		if len(r.Answers) > 1 {
			return res, 0, fmt.Errorf("%w: a tool approval takes one decision, got %d", ErrInvalidReply, len(r.Answers))
		} else if len(r.Answers) == 1 {
			decision = r.Answers[0]
		}
		res.Decision = decision
		if decision == DecisionDeny {
			res.Status, res.Text = StatusRejected, text
			if res.Text == "" {
				res.Text = "The user denied this tool call."
			}
		} else {
			res.Status = StatusAnswered
		}
	default:
		return res, 0, fmt.Errorf("%w: unknown interaction kind %q", ErrInvalidReply, it.Kind)
	}
	return res, Resolved, nil
}

func optionIndex(it Interaction, label string) int {
	for i, o := range it.Options {
		if o.Label == label {
			return i
		}
	}
	return -1
}

func inOptionOrder(opts []Option, labels []string) []string {
	out := make([]string, 0, len(labels))
	for _, o := range opts {
		if slices.Contains(labels, o.Label) {
			out = append(out, o.Label)
		}
	}
	return out
}

func invalidOption(it Interaction, label string) error {
	accepted := make([]string, len(it.Options))
	for i, o := range it.Options {
		accepted[i] = fmt.Sprintf("%q", o.Label)
	}
	return fmt.Errorf("%w: %q is not an option (accepted: %s)", ErrInvalidReply, label, strings.Join(accepted, ", "))
}

// CancelPending cancels everything pending for a chat (/clear, /stop, agent
// errors) with the given reason, and returns what it cancelled.
func (c *Coordinator) CancelPending(chatID, reason string) []Interaction {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.settleLocked(slices.Clone(c.byChat.pending(chatID)), Resolution{Status: StatusCancelled, Text: reason})
}

// Cancel cancels one pending interaction (the agent withdrew the request).
func (c *Coordinator) Cancel(id, reason string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.byID[id]
	if !ok {
		return false
	}
	return c.resolveLocked(p, Resolution{Status: StatusCancelled, Text: reason})
}

// Interrupt resolves every pending interaction with StatusInterrupted
// (leashd is shutting down), refuses new requests from then on, and returns
// what it interrupted.
func (c *Coordinator) Interrupt(reason string) []Interaction {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	ps := make([]*pending, 0, len(c.byID))
	for _, p := range c.byID {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *pending) int { return a.it.AskedAt.Compare(b.it.AskedAt) })
	return c.settleLocked(ps, Resolution{Status: StatusInterrupted, Text: reason})
}

func (c *Coordinator) settleLocked(ps []*pending, res Resolution) []Interaction {
	out := make([]Interaction, 0, len(ps))
	for _, p := range ps {
		it := *p.it // before: once settled, *p.it is its asker's again
		if c.resolveLocked(p, res) {
			out = append(out, it)
		}
	}
	return out
}

// Wait waits, until ctx is done, for every Request call to return. After
// Interrupt (which refuses new requests) that means every interrupted
// interaction's resolved event has been published, so a subscriber that
// stops after Wait misses none of them.
func (c *Coordinator) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		c.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("interactions still being resolved: %w", context.Cause(ctx))
	}
}

// Get returns a pending interaction by ID.
func (c *Coordinator) Get(id string) (Interaction, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.byID[id]
	if !ok {
		return Interaction{}, false
	}
	return *p.it, true
}

// Selected returns a pending multi-select question's current selection.
func (c *Coordinator) Selected(id string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.byID[id]; ok {
		return p.selectedLabels()
	}
	return nil
}

// Pending lists what is pending in a chat, oldest first; chatID "" lists
// every chat's.
func (c *Coordinator) Pending(chatID string) []Interaction {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Interaction
	if chatID != "" {
		for _, p := range c.byChat.pending(chatID) {
			out = append(out, *p.it)
		}
		return out
	}
	for _, p := range c.byID {
		out = append(out, *p.it)
	}
	slices.SortFunc(out, func(a, b Interaction) int { return a.AskedAt.Compare(b.AskedAt) })
	return out
}

// PendingCount is the number of pending interactions in all chats.
func (c *Coordinator) PendingCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byID)
}

// Subscribe delivers every event from now on, in order, without ever
// blocking the coordinator (a slow subscriber's events queue up). Call the
// returned function to stop: events published before that are still
// delivered, then the channel is closed, so read it until it is.
func (c *Coordinator) Subscribe() (<-chan Event, func()) { return c.subs.subscribe() }

// IsStale reports whether err means the interaction is gone (unknown, or no
// longer pending), as opposed to a bad or unauthorized reply.
func IsStale(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotPending)
}
