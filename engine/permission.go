package engine

import (
	"context"

	"github.com/leashd/leashd/engine/approval"

	"github.com/leashd/leashd/engine/agent"

	"github.com/leashd/leashd/interactions"
)

// cleanPlanMessage is what the old session reads when its plan was
// approved to continue in a fresh session.
const cleanPlanMessage = "The plan was approved; it continues in a fresh session."

// Permission implements TurnHandler: AskUserQuestion becomes questions,
// ExitPlanMode a plan review, every other tool a tool approval. While a
// person decides, the turn's time limit is paused.
func (t *turn) Permission(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	t.mu.Lock()
	stopping := t.cleanPlan != nil
	t.mu.Unlock()
	if stopping {
		return agent.PermissionResponse{Message: cleanPlanMessage, Interrupt: true}
	}
	t.rememberSessionID() // before anything is put to a person
	// An agent that may outlive a restart asks with its own request ID,
	// so that after the restart it joins what people already see.
	ctx = interactions.WithAgentRef(ctx, req.Ref)
	t.budget.pause()
	defer t.budget.resume()
	resp := t.decide(ctx, req)
	if resp.NoAnswer {
		t.mu.Lock()
		resp.StopFollows = t.stopping
		t.mu.Unlock()
	}
	return resp
}

// decide puts the request to the policy and to people.
func (t *turn) decide(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	switch {
	case req.ToolName == agent.ToolExitPlanMode:
		return t.reviewPlan(ctx, req)
	case len(req.Options) > 0:
		// The agent's own options (ACP): a tool approval like any other,
		// whose buttons are those options.
		return t.approveTool(ctx, req)
	case req.ToolName == agent.ToolAskUserQuestion:
		return t.askQuestions(ctx, req)
	default:
		return t.approveTool(ctx, req)
	}
}

func (t *turn) askQuestions(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	resp, unreadable := approval.Questions(ctx, t.e.coord, t.c.id, req)
	if unreadable != "" {
		t.e.log.Warn("unreadable AskUserQuestion input", "chat", t.c.id, "err", unreadable)
		t.e.say(ctx, t.c.id, "The agent asked a question leashd could not read ("+unreadable+"); it was told so.")
	}
	return resp
}

func (t *turn) reviewPlan(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	plan, shown, refusal, notice := approval.PlanOf(req.Input, req.PlanDir)
	if refusal != "" {
		if notice != "" {
			t.e.say(ctx, t.c.id, notice)
		}
		return approval.Deny(refusal)
	}
	_, res, err := t.e.coord.Request(ctx, interactions.Interaction{ChatID: t.c.id, Kind: interactions.KindPlanReview, Plan: shown, Quorum: t.e.quorumFor(t.c.id), AgentRef: req.Ref})
	if err != nil {
		return approval.Deny("The plan could not be shown: " + err.Error())
	}
	if res.Status != interactions.StatusAnswered {
		if res.Decision == interactions.DecisionAdjust {
			r := approval.Rejected(res.Text) // the feedback, as the person wrote it
			r.Reason = res.Text
			return r
		}
		return approval.NotAnswered(res)
	}
	switch res.Decision {
	case interactions.DecisionCleanEdit:
		// The plan continues in a fresh session; this one must not act on
		// the approval. Were it told "approved", it would go on to a model
		// call (and, out of plan mode, to edits) before the interrupt
		// reached it. So the turn is stopped as /stop stops it: the answer
		// waits for the interrupt and says nobody decided here.
		t.mu.Lock()
		t.cleanPlan = &plan
		t.stopping = true
		t.mu.Unlock()
		go func() {
			if err := t.sess.Interrupt(context.WithoutCancel(ctx)); err != nil {
				t.e.log.Warn("interrupting after clean plan approval", "chat", t.c.id, "err", err)
			}
		}()
		return agent.PermissionResponse{Message: cleanPlanMessage, Interrupt: true, NoAnswer: true}
	case interactions.DecisionEdit:
		t.setMode(agent.ModeAcceptEdits)
		t.e.say(ctx, t.c.id, "Plan approved. Mode: acceptEdits — edits are applied without asking.")
		return approval.AllowedBy(agent.ClassUserTemporary, req, agent.PermissionUpdate{Type: "setMode", Mode: agent.ModeAcceptEdits, Destination: "session"})
	default:
		t.setMode(agent.ModeDefault)
		t.e.say(ctx, t.c.id, "Plan approved. Mode: default — each edit asks for approval.")
		return approval.AllowedBy(agent.ClassUserTemporary, req, agent.PermissionUpdate{Type: "setMode", Mode: agent.ModeDefault, Destination: "session"})
	}
}

func (t *turn) setMode(m agent.Mode) {
	t.e.mu.Lock()
	t.c.mode = m
	t.e.mu.Unlock()
	t.e.save(t.c)
}

func (t *turn) approveTool(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	// The policy, and who must approve: as for a program's request
	// (programGate).
	pol, decides, quorum := t.e.toolPolicy(t.c.id, t.workDir(), req)
	if decides {
		r := t.policyDecided(ctx, req, pol)
		if len(req.Options) > 0 { // the agent's option that says the same
			r.OptionID = approval.PickOption(req.Options, r.Allow)
		}
		return r
	}
	if len(req.Options) > 0 {
		// The agent's own options: it keeps its own modes and "always"
		// rules, and asked because they do not cover this call, so
		// leashd's mode and session rules do not answer for it.
		it := approval.ToolInteraction(t.c.id, req)
		it.Quorum = quorum
		it.Diff = approval.ToolDiff(t.diffDir(), req.ToolName, req.Input)
		return t.chooseOption(ctx, req, it)
	}
	// An ask or quorum rule, or the agent's own word that a person must
	// decide, puts the call to people even where the mode or a session
	// rule would allow it.
	mustAsk := pol.Rule != nil || req.MustAsk()
	if pol.Overridden {
		t.e.log.Info("policy allow overridden: the agent says a person must decide", "chat", t.c.id, "tool", req.ToolName, "rule", pol.Rule.Ref())
	}
	t.e.mu.Lock()
	mode := t.c.mode
	t.e.mu.Unlock()
	if !mustAsk && ((mode == agent.ModeAcceptEdits && approval.EditTools[req.ToolName]) || mode == agent.ModeBypass) {
		return approval.Allow(req)
	}
	if !mustAsk && t.e.engineRules() && t.rules.Allows(req.ToolName, req.Input) {
		return approval.AllowedBy(agent.ClassUserPermanent, req)
	}
	if quorum <= 1 { // one person's late answer is not a quorum
		if res, ok := t.allowedAgain(ctx, req); ok {
			return res
		}
	}
	it := approval.ToolInteraction(t.c.id, req)
	it.Quorum = quorum
	it.Diff = approval.ToolDiff(t.diffDir(), req.ToolName, req.Input)
	it.AgentRef = req.Ref // joins its restored self after a restart (adopt.go)
	_, res, err := t.e.coord.Request(ctx, it)
	if err != nil {
		return approval.Deny("The approval could not be asked: " + err.Error())
	}
	if res.Status != interactions.StatusAnswered {
		return approval.NotAnswered(res)
	}
	if res.Decision == interactions.DecisionAllowSession {
		if pol.Rule != nil {
			// A session rule would let the agent stop asking about such
			// calls, and the policy rule would no longer be consulted.
			t.e.say(ctx, t.c.id, "Allowed this call only: policy "+pol.Rule.Ref()+" puts each such call to people.")
			return approval.AllowedBy(agent.ClassUserTemporary, req)
		}
		rules := approval.SessionRules(req)
		t.rules.Add(rules)
		return approval.AllowedBy(agent.ClassUserPermanent, req, agent.PermissionUpdate{Type: "addRules", Rules: rules, Behavior: "allow", Destination: "session"})
	}
	return approval.AllowedBy(agent.ClassUserTemporary, req)
}

// engineRules says whether the engine applies "allow for the session"
// rules itself: only for agents that ask for it (SessionRulesByEngine).
// An agent that keeps its own rules asks only about calls its
// rules do not cover; allowing such a call here because of a looser match
// would approve something nobody has seen.
func (e *Engine) engineRules() bool {
	r, ok := e.agent.(agent.SessionRulesByEngine)
	return ok && r.SessionRulesByEngine()
}

func (c *chat) rules() *approval.Rules {
	if c.allowed == nil {
		c.allowed = &approval.Rules{}
	}
	return c.allowed
}
