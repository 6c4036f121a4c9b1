package sqlite_test

import (
	"context"
	"testing"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// TestRestartRecoversPlanDecisionsAndToolDenials: a plan review or a tool
// approval is pending when leashd stops (in the chat's first turn); after
// the restart a tap on the old message is acted on as a live one would
// be. What the agent receives — the prompt, which session (resumed or
// fresh) and the mode — is asserted.
func TestRestartRecoversPlanDecisionsAndToolDenials(t *testing.T) {
	for _, tc := range decisionCases() {
		t.Run(tc.name, func(t *testing.T) { runDecisionCase(t, tc) })
	}
}

// decisionCase is a question pending at the restart, the tap on it after
// the restart, and what the agent is then sent.
type decisionCase struct {
	name      string
	mode      string // command before the prompt in run 1
	prompt    string // run 1's prompt, which asks
	reply     interactions.Reply
	out       interactions.Outcome
	feedback  string // run 2: the next message, after AwaitingFeedback
	said      string // a message the chat is told ("" nothing checked)
	prompts   []string
	opened    []agent.SessionOptions // ChatID/WorkDir/Model ignored
	savedMode agent.Mode
}

// decisionCases are the plan decisions and the tool denial.
func decisionCases() []decisionCase {
	const plan = "# Plan\n- add the cache"
	reviewed := agent.RecoveredPromptPrefix + "\nBefore leashd restarted you asked the user to review your plan:\n\n" + plan + "\n\n"
	return []decisionCase{
		{
			name: "clean_edit starts a fresh session with the plan", mode: "/plan", prompt: "plan",
			reply: interactions.Reply{By: "u1", Answers: []string{interactions.DecisionCleanEdit}}, out: interactions.Resolved,
			said:      "Plan approved. Starting a fresh session to implement it (mode: acceptEdits).",
			prompts:   []string{"Implement the following plan, which the user has approved:\n\n" + plan},
			opened:    []agent.SessionOptions{{ResumeID: "", Mode: agent.ModeAcceptEdits}},
			savedMode: agent.ModeAcceptEdits,
		},
		{
			name: "edit resumes the session in acceptEdits", mode: "/plan", prompt: "plan",
			reply: interactions.Reply{By: "u1", Answers: []string{interactions.DecisionEdit}}, out: interactions.Resolved,
			prompts:   []string{reviewed + "The user approved the plan (edit: " + connectors.DecisionLabel(interactions.DecisionEdit) + "). Implement it."},
			opened:    []agent.SessionOptions{{ResumeID: "sess-1", Mode: agent.ModeAcceptEdits}},
			savedMode: agent.ModeAcceptEdits,
		},
		{
			name: "adjust with feedback stays in plan mode", mode: "/plan", prompt: "plan",
			reply: interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAdjust}, Text: "Use Redis, not memcached"}, out: interactions.Resolved,
			prompts:   []string{reviewed + "The user wants changes to the plan: Use Redis, not memcached"},
			opened:    []agent.SessionOptions{{ResumeID: "sess-1", Mode: agent.ModePlan}},
			savedMode: agent.ModePlan,
		},
		{
			name: "adjust, then the feedback as the next message", mode: "/plan", prompt: "plan",
			reply: interactions.Reply{By: "u1", Answers: []string{interactions.DecisionAdjust}}, out: interactions.AwaitingFeedback,
			// As before the restart: the plan review waits for the
			// feedback, which then goes to the agent with the decision.
			feedback:  "Use Redis, not memcached",
			prompts:   []string{reviewed + "The user wants changes to the plan: Use Redis, not memcached"},
			opened:    []agent.SessionOptions{{ResumeID: "sess-1", Mode: agent.ModePlan}},
			savedMode: agent.ModePlan,
		},
		{
			name: "a denied tool call", mode: "/default", prompt: "tool",
			reply: interactions.Reply{By: "u1", Answers: []string{interactions.DecisionDeny}, Text: "not on the main branch"}, out: interactions.Resolved,
			prompts:   []string{agent.RecoveredPromptPrefix + "\nBefore leashd restarted you asked to use the tool Bash:\nnpm test | tee out.txt\nThe user denied it: not on the main branch"},
			opened:    []agent.SessionOptions{{ResumeID: "sess-1", Mode: agent.ModeDefault}},
			savedMode: agent.ModeDefault,
		},
	}
}

// runDecisionCase stops leashd with tc's question pending, taps it after
// the restart and checks what the agent and the store got.
func runDecisionCase(t *testing.T, tc decisionCase) {
	const chat = "web:phone"
	path := dbPath(t)
	a1 := newAgent("sess")
	l1 := startLeashd(t, path, a1)
	l1.send(t, chat, tc.mode)
	l1.conn.WaitFor(t, "the mode reply", func() bool { return len(l1.conn.Said) > 0 })
	l1.send(t, chat, tc.prompt) // the chat's first turn asks
	q := l1.conn.WaitShown(t, 1)
	l1.stop()
	rs := a1.WaitResponses(t, 1)
	assert.False(t, rs[0].Allow, "nothing was decided before the restart")

	a2 := newAgent("new")
	l2 := startLeashd(t, path, a2)
	l2.waitPending(t, q.ID)
	out, err := l2.e.Reply(context.Background(), q.ID, tc.reply)
	require.NoError(t, err)
	assert.Equal(t, tc.out, out)
	if tc.feedback != "" {
		assert.Empty(t, a2.Prompts(), "nothing is sent before the feedback")
		l2.send(t, chat, tc.feedback)
	}
	a2.WaitPrompts(t, len(tc.prompts))
	assert.Equal(t, tc.prompts, a2.Prompts())
	opened := a2.Opened()
	require.Len(t, opened, len(tc.opened))
	for i, want := range tc.opened {
		assert.Equal(t, want.ResumeID, opened[i].ResumeID, "session %d resumed", i+1)
		assert.Equal(t, want.Mode, opened[i].Mode, "session %d mode", i+1)
	}
	if tc.said != "" {
		l2.conn.WaitFor(t, "the chat told", func() bool {
			for _, s := range l2.conn.Said {
				if s == chat+"|"+tc.said {
					return true
				}
			}
			return false
		})
	}
	ev := l2.conn.WaitResolved(t, q.ID)
	assert.Equal(t, "msg-"+q.ID, ev.Ref, "the old message is edited")
	l2.stop()

	ro := open(t, path)
	rec, found, err := ro.LoadSession(context.Background(), chat)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, tc.savedMode, rec.Mode)
	last := opened[len(opened)-1]
	wantID := last.ResumeID
	if wantID == "" {
		wantID = "new-" + itoa(len(opened))
	}
	assert.Equal(t, wantID, rec.AgentSessionID, "the session to resume next")
}
