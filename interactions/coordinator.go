package interactions

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
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
type Presenter interface {
	Present(ctx context.Context, it Interaction) (ref string, err error)
}

// PresenterFunc adapts a function to Presenter.
type PresenterFunc func(ctx context.Context, it Interaction) (string, error)

// Present calls f.
func (f PresenterFunc) Present(ctx context.Context, it Interaction) (string, error) {
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
	presenter Presenter
	journal   Journal
	log       *slog.Logger
	now       func() time.Time
	// retryFirst and retryMax bound the backoff between attempts to
	// present an interaction that could not be shown.
	retryFirst, retryMax time.Duration

	mu     sync.Mutex
	byID   map[string]*pending
	byChat map[string][]*pending // oldest first
	gone   tombstones
	closed bool

	// inflight counts Request calls that have not returned: each publishes
	// its interaction's resolved event just before it returns (Wait).
	inflight sync.WaitGroup

	subs subscribers
}

type pending struct {
	it       Interaction
	done     chan struct{} // closed once res is set
	res      Resolution
	selected []bool // multi-select toggles, by option index
	feedback bool   // adjust chosen, waiting for text
	ref      string // what the Presenter returned ("" until shown); under c.mu
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
func WithPresenter(p Presenter) Opt { return func(c *Coordinator) { c.presenter = p } }

// WithJournal sets durable recording of interactions.
func WithJournal(j Journal) Opt { return func(c *Coordinator) { c.journal = j } }

// WithLogger sets the logger; by default nothing is logged.
func WithLogger(l *slog.Logger) Opt { return func(c *Coordinator) { c.log = l } }

// WithClock replaces time.Now for timestamps (tests).
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
		gone:       newTombstones(16384),
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
	c.presenter = p
	c.mu.Unlock()
}

// Request registers it, presents it and blocks until it is resolved: by a
// reply, by the timeout (StatusExpired), by ctx (StatusCancelled), by
// CancelPending or Interrupt. It returns the completed interaction (with its
// ID) and how it ended. The error is non-nil only when it could not be asked
// at all.
func (c *Coordinator) Request(ctx context.Context, it Interaction) (Interaction, Resolution, error) {
	return c.request(ctx, it, c.timeout, nil)
}

// request is Request with its own timeout (0: none); shown, when set, is
// called once the interaction is registered and presented (or presenting
// failed), before the wait.
func (c *Coordinator) request(ctx context.Context, it Interaction, timeout time.Duration, shown func(Interaction)) (Interaction, Resolution, error) {
	if err := validate(&it); err != nil {
		return it, Resolution{}, err
	}
	it.AskedAt = c.now()
	if it.Asker == "" {
		it.Asker = askerOf(ctx)
	}
	start := time.Now() // the timer runs on real time even with WithClock
	if timeout > 0 {
		it.Deadline = it.AskedAt.Add(timeout)
	}
	p := &pending{done: make(chan struct{})}
	if it.MultiSelect {
		p.selected = make([]bool, len(it.Options))
	}

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return it, Resolution{}, ErrClosed
	}
	c.inflight.Add(1) // under the lock: never after Interrupt closed c
	defer c.inflight.Done()
	it.ID = c.newIDLocked()
	p.it = it
	c.byID[it.ID] = p
	c.byChat[it.ChatID] = append(c.byChat[it.ChatID], p)
	presenter := c.presenter
	c.mu.Unlock()

	if c.journal != nil {
		if err := c.journal.Requested(ctx, it); err != nil {
			c.log.Error("recording interaction", "id", it.ID, "chat", it.ChatID, "err", err)
		}
	}
	c.log.Info("interaction asked", "id", it.ID, "chat", it.ChatID, "kind", it.Kind)
	c.subs.publish(Event{Type: EventRequested, Interaction: it})

	if presenter == nil {
		c.resolve(p, Resolution{Status: StatusCancelled, Text: "No chat connector could show this request."})
	} else {
		r, err := presenter.Present(ctx, it) // PresentAttempt: 1
		if err != nil {
			// Never an answer: the interaction stays pending, answerable
			// wherever else it is shown (the web page, the API), and is
			// shown again in the background until it ends.
			c.log.Error("presenting interaction failed; it stays pending and answerable elsewhere, retrying in the background",
				"id", it.ID, "chat", it.ChatID, "kind", it.Kind, "err", err)
			go c.retryPresent(ctx, p, presenter)
		} else {
			c.shown(ctx, p, r)
		}
	}

	if shown != nil {
		shown(it)
	}
	res := c.await(ctx, p, start, timeout)
	if c.journal != nil {
		// The caller's context may be done (that is how it was cancelled);
		// the record must still be written.
		if err := c.journal.Resolved(context.WithoutCancel(ctx), it, res); err != nil {
			c.log.Error("recording resolution", "id", it.ID, "err", err)
		}
	}
	c.log.Info("interaction resolved", "id", it.ID, "chat", it.ChatID, "kind", it.Kind,
		"status", res.Status, "by", res.By, "latency", res.At.Sub(it.AskedAt))
	c.subs.publish(c.resolvedEvent(p))
	return it, res, nil
}

// shown records what the Presenter returned for p.
func (c *Coordinator) shown(ctx context.Context, p *pending, ref string) {
	if ref == "" {
		return
	}
	c.mu.Lock()
	p.ref = ref
	c.mu.Unlock()
	if c.journal != nil {
		if err := c.journal.Presented(ctx, p.it.ID, ref); err != nil {
			c.log.Error("recording interaction message", "id", p.it.ID, "err", err)
		}
	}
}

// await blocks until p is resolved: by a reply, the timeout (counted from
// start; 0: none), or ctx.
func (c *Coordinator) await(ctx context.Context, p *pending, start time.Time, timeout time.Duration) Resolution {
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout - time.Since(start))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-p.done:
	case <-timer:
		c.resolve(p, Resolution{Status: StatusExpired, Text: fmt.Sprintf("No answer came within %s; the user did not respond.", timeout)})
	case <-ctx.Done():
		text := "The request was cancelled before anyone answered."
		if errors.Is(context.Cause(ctx), ErrWithdrawn) {
			text = WithdrawnText
		}
		c.resolve(p, Resolution{Status: StatusCancelled, Text: text})
	}
	<-p.done
	return p.res // safe: written once before done was closed
}

// resolvedEvent is p's EventResolved, once p is resolved.
func (c *Coordinator) resolvedEvent(p *pending) Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Event{Type: EventResolved, Interaction: p.it, Resolution: p.res, Ref: p.ref, Selected: p.selectedLabels(), Approvals: p.res.Approvals}
}

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
	case KindPlanReview:
		it.Options = slices.Clone(PlanOptions)
		it.MultiSelect = false
	case KindToolApproval:
		it.Options = ToolOptionsFor(*it)
		it.MultiSelect = false
	default:
		return fmt.Errorf("unknown interaction kind %q (accepted: question, plan_review, tool_approval)", it.Kind)
	}
	if it.Options == nil {
		it.Options = []Option{}
	}
	return nil
}

// newIDLocked returns a short random ID (8 URL-safe characters) not in use.
func (c *Coordinator) newIDLocked() string {
	var b [6]byte
	for {
		_, _ = rand.Read(b[:]) // never fails on supported platforms
		id := base64.RawURLEncoding.EncodeToString(b[:])
		if _, taken := c.byID[id]; !taken && c.gone.status(id) == "" {
			return id
		}
	}
}

// resolve settles p once; later calls do nothing. It reports whether this
// call settled it.
func (c *Coordinator) resolve(p *pending, res Resolution) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resolveLocked(p, res)
}

func (c *Coordinator) resolveLocked(p *pending, res Resolution) bool {
	if _, ok := c.byID[p.it.ID]; !ok {
		return false
	}
	if res.At.IsZero() {
		res.At = c.now()
	}
	if len(p.approvals) > 0 {
		res.Approvals = slices.Clone(p.approvals)
	}
	p.res = res
	delete(c.byID, p.it.ID)
	list := c.byChat[p.it.ChatID]
	if i := slices.Index(list, p); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(c.byChat, p.it.ChatID)
	} else {
		c.byChat[p.it.ChatID] = list
	}
	c.gone.add(p.it.ID, res.Status)
	close(p.done)
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
	c.mu.Lock()
	p, err := c.lookupLocked(id)
	if err != nil {
		c.mu.Unlock()
		return 0, err
	}
	out, err := c.replyLocked(p, r)
	c.mu.Unlock()
	if out == Counted {
		c.journalApprovals(p)
	}
	return out, err
}

// ReplyText routes typed text from a chat to its oldest pending interaction:
// a question's free-text answer, a plan review's adjust feedback, or a tool
// approval's deny reason. It returns ErrNotFound when nothing is pending in
// the chat, so the caller can treat the text as a prompt instead.
func (c *Coordinator) ReplyText(chatID string, r Reply) (Interaction, Outcome, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.byChat[chatID]
	if len(list) == 0 {
		return Interaction{}, 0, ErrNotFound
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
	out, err := c.replyLocked(p, r)
	return p.it, out, err // typed text never approves: nothing to journal
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
	i := optionIndex(p.it, label)
	if i < 0 {
		return nil, nil, invalidOption(p.it, label)
	}
	p.selected[i] = !p.selected[i]
	sel := p.selectedLabels()
	c.subs.publish(Event{Type: EventUpdated, Interaction: p.it, Selected: sel, Ref: p.ref})
	return p, sel, nil
}

// Confirm resolves a multi-select question with the options toggled so far.
func (c *Coordinator) Confirm(id string, r Reply) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, err := c.lookupLocked(id)
	if err != nil {
		return err
	}
	if !p.it.MultiSelect {
		return fmt.Errorf("%w: only multi-select questions are confirmed", ErrInvalidReply)
	}
	sel := p.selectedLabels()
	if len(sel) == 0 {
		return fmt.Errorf("%w: select at least one option before confirming", ErrInvalidReply)
	}
	r.Answers, r.Text, r.Reject = sel, "", false
	_, err = c.replyLocked(p, r)
	return err
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
	if err := r.Authorize(p.it); err != nil {
		return fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	return nil
}

func (c *Coordinator) replyLocked(p *pending, r Reply) (Outcome, error) {
	if err := authorize(p, r); err != nil {
		return 0, err
	}
	res, out, err := Evaluate(p.it, r)
	if err != nil {
		return 0, err
	}
	if out == AwaitingFeedback {
		if !p.feedback {
			p.feedback = true
			c.subs.publish(Event{Type: EventUpdated, Interaction: p.it, AwaitingFeedback: true, Ref: p.ref, Approvals: slices.Clone(p.approvals)})
		}
		return AwaitingFeedback, nil
	}
	if res.Status == StatusAnswered && p.it.NeedsQuorum() {
		if slices.ContainsFunc(p.approvals, func(a Approver) bool { return a.By == r.By }) {
			return 0, fmt.Errorf("%w (%s)", ErrAlreadyApproved, QuorumText(p.it, p.approvals, nil))
		}
		p.approvals = append(p.approvals, Approver{By: r.By, At: c.now(), Decision: res.Decision})
		if len(p.approvals) < p.it.Quorum {
			c.subs.publish(Event{Type: EventUpdated, Interaction: p.it, Ref: p.ref, Approvals: slices.Clone(p.approvals)})
			return Counted, nil
		}
	}
	c.resolveLocked(p, res)
	return Resolved, nil
}

// Evaluate decides what a reply means for an interaction, changing nothing:
// the resolution it gives, or AwaitingFeedback for "adjust" without text, or
// ErrInvalidReply saying what was wrong and what is accepted. It does not
// call r.Authorize. The engine uses it for interactions interrupted by a
// restart, which are no longer pending here.
func Evaluate(it Interaction, r Reply) (Resolution, Outcome, error) {
	text := strings.TrimSpace(r.Text)
	res := Resolution{By: r.By}
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
		if !it.HasOption(a) {
			return res, 0, invalidOption(it, a)
		}
	}
	switch it.Kind {
	case KindQuestion:
		switch {
		case len(r.Answers) > 1 && !it.MultiSelect:
			return res, 0, fmt.Errorf("%w: %q takes one option, got %d", ErrInvalidReply, it.Question, len(r.Answers))
		case len(r.Answers) > 0:
			res.Answer = strings.Join(inOptionOrder(it, r.Answers), ", ")
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

func inOptionOrder(it Interaction, labels []string) []string {
	out := make([]string, 0, len(labels))
	for _, o := range it.Options {
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
	return c.settleLocked(slices.Clone(c.byChat[chatID]), Resolution{Status: StatusCancelled, Text: reason})
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
		if c.resolveLocked(p, res) {
			out = append(out, p.it)
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
	return p.it, true
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
		for _, p := range c.byChat[chatID] {
			out = append(out, p.it)
		}
		return out
	}
	for _, p := range c.byID {
		out = append(out, p.it)
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

// tombstones remembers how recently settled interactions ended, so a late
// tap gets "expired" rather than "unknown". A fixed ring bounds its memory.
type tombstones struct {
	ring []string
	next int
	m    map[string]Status
}

func newTombstones(n int) tombstones {
	return tombstones{ring: make([]string, n), m: make(map[string]Status, n)}
}

func (t *tombstones) add(id string, st Status) {
	if old := t.ring[t.next]; old != "" {
		delete(t.m, old)
	}
	t.ring[t.next] = id
	t.m[id] = st
	t.next = (t.next + 1) % len(t.ring)
}

func (t *tombstones) status(id string) Status { return t.m[id] }

// IsStale reports whether err means the interaction is gone (unknown, or no
// longer pending), as opposed to a bad or unauthorized reply.
func IsStale(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotPending)
}
