package interactions

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

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
	at := c.now()
	c.mu.Lock()
	p, err := c.lookupLocked(id)
	if err != nil {
		c.mu.Unlock()
		return 0, err
	}
	out, err := c.replyLocked(p, r, at)
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
	at := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	queue := c.byChat[chatID]
	if len(queue) == 0 {
		return Interaction{}, 0, ErrNotFound
	}
	// An adjust waiting for feedback asked for this text; otherwise the
	// oldest gets it.
	p := queue[0]
	if i := slices.IndexFunc(queue, func(q *pending) bool { return q.feedback }); i >= 0 {
		p = queue[i]
	}
	r.Answers = nil
	if p.feedback {
		r.Answers = []string{DecisionAdjust}
	}
	out, err := c.replyLocked(p, r, at) // typed text never approves: nothing to journal
	return p.it, out, err
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
	c.subs.publish(&Event{Type: EventUpdated, Interaction: p.it, Selected: sel, Ref: p.ref})
	return p, sel, nil
}

// Confirm resolves a multi-select question with the options toggled so far.
func (c *Coordinator) Confirm(id string, r Reply) error {
	at := c.now()
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
	_, err = c.replyLocked(p, r, at)
	return err
}

// lookupLocked finds the pending interaction id, or says why there is
// none: settled lately (ErrNotPending, with how it ended) or unknown.
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

// replyLocked applies r to p: it resolves p, or waits for feedback, or
// counts an approval towards p's quorum.
func (c *Coordinator) replyLocked(p *pending, r Reply, at time.Time) (Outcome, error) {
	if err := authorize(p, r); err != nil {
		return 0, err
	}
	res, out, err := evaluate(&p.it, r, at)
	if err != nil {
		return 0, err
	}
	if out == AwaitingFeedback {
		if !p.feedback {
			p.feedback = true
			c.subs.publish(&Event{Type: EventUpdated, Interaction: p.it, AwaitingFeedback: true, Ref: p.ref, Approvals: slices.Clone(p.approvals)})
		}
		return AwaitingFeedback, nil
	}
	if res.Status == StatusAnswered && p.it.NeedsQuorum() && p.it.approves(res) {
		if slices.ContainsFunc(p.approvals, func(a Approver) bool { return a.By == r.By }) {
			return 0, fmt.Errorf("%w (%s)", ErrAlreadyApproved, QuorumText(p.it, p.approvals, nil))
		}
		p.approvals = append(p.approvals, Approver{By: r.By, At: c.now(), Decision: res.Decision})
		if len(p.approvals) < p.it.Quorum {
			c.subs.publish(&Event{Type: EventUpdated, Interaction: p.it, Ref: p.ref, Approvals: slices.Clone(p.approvals)})
			return Counted, nil
		}
	}
	c.resolveLocked(p, res)
	return Resolved, nil
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

// Evaluate decides what a reply means for an interaction, changing nothing:
// the resolution it gives, or AwaitingFeedback for "adjust" without text, or
// ErrInvalidReply saying what was wrong and what is accepted. It does not
// call r.Authorize. The engine uses it for interactions interrupted by a
// restart, which are no longer pending here.
func Evaluate(it Interaction, r Reply) (Resolution, Outcome, error) {
	return evaluate(&it, r, time.Time{})
}

// evaluate is Evaluate with at, when not zero, as the resolution's time.
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
		return answerQuestion(it, r.Answers, text, res)
	case KindPlanReview:
		return decide(res, "a plan review", r.Answers, DecisionAdjust, text)
	case KindToolApproval:
		if it.OwnOptions() {
			return decideOwn(it, res, r.Answers, text)
		}
		return decide(res, "a tool approval", r.Answers, DecisionDeny, text)
	default:
		return res, 0, fmt.Errorf("%w: unknown interaction kind %q", ErrInvalidReply, it.Kind)
	}
}

// answerQuestion is a question's answer: its option (options, for
// multi-select, in option order) or the typed text.
func answerQuestion(it *Interaction, answers []string, text string, res Resolution) (Resolution, Outcome, error) {
	switch {
	case len(answers) > 1 && !it.MultiSelect:
		return res, 0, fmt.Errorf("%w: %q takes one option, got %d", ErrInvalidReply, it.Question, len(answers))
	case len(answers) > 0:
		res.Answer = strings.Join(inOptionOrder(it.Options, answers), ", ")
	default:
		res.Answer = text
	}
	res.Status = StatusAnswered
	return res, Resolved, nil
}

// decide is a plan review's or tool approval's decision: the option chosen,
// or refuse (adjust, deny) when only text came. Refusing rejects it, with
// the text as the reason: an adjust needs one (it waits for feedback), a
// deny has a default.
func decide(res Resolution, what string, answers []string, refuse, text string) (Resolution, Outcome, error) {
	if len(answers) > 1 {
		return res, 0, fmt.Errorf("%w: %s takes one decision, got %d", ErrInvalidReply, what, len(answers))
	}
	res.Decision = refuse
	if len(answers) == 1 {
		res.Decision = answers[0]
	}
	if res.Decision != refuse {
		res.Status = StatusAnswered
		return res, Resolved, nil
	}
	if text == "" && refuse == DecisionAdjust {
		return res, AwaitingFeedback, nil
	}
	if text == "" {
		text = "The user denied this tool call."
	}
	res.Status, res.Text = StatusRejected, text
	return res, Resolved, nil
}

// decideOwn is the decision on a tool approval with the agent's own
// options (OwnOptions): an approve option allows (Answer: its label), a
// deny option or typed text denies (Answer: the option's label, none for
// text; Text: the reason).
func decideOwn(it *Interaction, res Resolution, answers []string, text string) (Resolution, Outcome, error) {
	if len(answers) > 1 {
		return res, 0, fmt.Errorf("%w: a tool approval takes one decision, got %d", ErrInvalidReply, len(answers))
	}
	if len(answers) == 1 {
		res.Answer = answers[0]
		if it.StyleOf(res.Answer) != StyleDeny {
			res.Status, res.Decision = StatusAnswered, DecisionAllow
			return res, Resolved, nil
		}
	}
	if text == "" {
		text = "The user denied this tool call."
	}
	res.Status, res.Decision, res.Text = StatusRejected, DecisionDeny, text
	return res, Resolved, nil
}

func optionIndex(it Interaction, label string) int {
	return slices.IndexFunc(it.Options, func(o Choice) bool { return o.Label == label })
}

func inOptionOrder(opts []Choice, labels []string) []string {
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
