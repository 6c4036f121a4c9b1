package interactions_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

func opts(labels ...string) []interactions.Choice {
	out := make([]interactions.Choice, len(labels))
	for i, l := range labels {
		out[i] = interactions.Choice{Label: l, Description: "the " + l + " option"}
	}
	return out
}

type askResult struct {
	res interactions.AskResult
	err error
}

func ask(ctx context.Context, c *interactions.Coordinator, chat string, qs []interactions.Question) <-chan askResult {
	ch := make(chan askResult, 1)
	go func() {
		res, err := c.Ask(ctx, chat, qs)
		ch <- askResult{res, err}
	}()
	return ch
}

func TestAskOneAtATime(t *testing.T) {
	c, p := newCoord(t)
	qs := []interactions.Question{
		{Header: "DB", Question: "Which database?", Options: opts("Postgres", "SQLite")},
		{Header: "Features", Question: "Which features?", Options: opts("Auth", "Search", "Billing"), MultiSelect: true},
		{Header: "Name", Question: "Which database?  ", Options: opts("a", "b")}, // differs only by spaces
		{Header: "Deploy", Question: "Where to deploy?", Options: opts("Fly", "Render")},
	}
	done := ask(t.Context(), c, "chat:9", qs)

	// 1 of 4, answered by tap; the second is not shown before.
	it := p.Next(t)
	assert.Equal(t, "Which database?", it.Question)
	assert.Equal(t, "DB", it.Header)
	assert.Equal(t, 1, it.Index)
	assert.Equal(t, 4, it.Total)
	assert.Equal(t, opts("Postgres", "SQLite"), it.Options)
	p.NothingShown(t)
	assert.Len(t, c.Pending("chat:9"), 1)
	_, err := c.Reply(it.ID, interactions.Reply{By: "u", Answers: []string{"SQLite"}})
	require.NoError(t, err)

	// 2 of 4, multi-select by toggles and confirm.
	it2 := p.Next(t)
	assert.Equal(t, "Which features?", it2.Question)
	assert.Equal(t, 2, it2.Index)
	assert.Equal(t, 4, it2.Total)
	assert.True(t, it2.MultiSelect)
	assert.NotEqual(t, it.ID, it2.ID, "each question is its own interaction")
	p.NothingShown(t)
	for _, l := range []string{"Billing", "Auth"} {
		_, err := c.Toggle(it2.ID, l, interactions.Reply{By: "u"})
		require.NoError(t, err)
	}
	require.NoError(t, c.Confirm(it2.ID, interactions.Reply{By: "u"}))

	// 3 of 4, by typed text.
	it3 := p.Next(t)
	assert.Equal(t, 3, it3.Index)
	got, _, err := c.ReplyText("chat:9", interactions.Reply{By: "u", Text: "my own answer"})
	require.NoError(t, err)
	assert.Equal(t, it3.ID, got.ID)

	// 4 of 4.
	it4 := p.Next(t)
	assert.Equal(t, 4, it4.Index)
	assert.Equal(t, 4, it4.Total)
	_, err = c.Reply(it4.ID, interactions.Reply{By: "u", Answers: []string{"Fly"}})
	require.NoError(t, err)

	r := await(t, done)
	require.NoError(t, r.err)
	assert.True(t, r.res.Complete())
	assert.Equal(t, map[string]string{
		"Which database?":   "SQLite",
		"Which features?":   "Auth, Billing",
		"Which database?  ": "my own answer",
		"Where to deploy?":  "Fly",
	}, r.res.Answers, "answers are keyed by the exact question text")
	require.Len(t, r.res.Asked, 4)
	for i, want := range []string{it.ID, it2.ID, it3.ID, it4.ID} {
		assert.Equal(t, want, r.res.Asked[i].ID)
	}
	assert.Equal(t, interactions.StatusAnswered, r.res.Last.Status)
	p.NothingShown(t)
	assert.Len(t, p.Shown(), 4)
}

func TestAskStops(t *testing.T) {
	qs := []interactions.Question{
		{Question: "First?", Options: opts("a", "b")},
		{Question: "Second?", Options: opts("c", "d")},
		{Question: "Third?", Options: opts("e", "f")},
	}
	tests := []struct {
		name    string
		timeout time.Duration
		stop    func(c *interactions.Coordinator, it interactions.Interaction, cancel context.CancelFunc)
		status  interactions.Status
	}{
		{"rejected", 0, func(c *interactions.Coordinator, it interactions.Interaction, _ context.CancelFunc) {
			_, err := c.Reply(it.ID, interactions.Reply{Reject: true})
			require.NoError(t, err)
		}, interactions.StatusRejected},
		{"cancelled by /stop", 0, func(c *interactions.Coordinator, it interactions.Interaction, _ context.CancelFunc) {
			require.Len(t, c.CancelPending(it.ChatID, "stopped"), 1)
		}, interactions.StatusCancelled},
		{"context done", 0, func(c *interactions.Coordinator, it interactions.Interaction, cancel context.CancelFunc) {
			cancel()
		}, interactions.StatusCancelled},
		{"expired", 5 * time.Millisecond, func(*interactions.Coordinator, interactions.Interaction, context.CancelFunc) {}, interactions.StatusExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, p := newCoord(t, interactions.WithTimeout(tt.timeout))
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				done := ask(ctx, c, "c", qs)
				first := p.Next(t)
				if tt.timeout == 0 {
					_, err := c.Reply(first.ID, interactions.Reply{Answers: []string{"b"}})
					require.NoError(t, err)
				} else {
					// With a timeout this short the first question expires
					// first; that is the flow under test.
					tt.stop(c, first, cancel)
					r := await(t, done)
					require.NoError(t, r.err)
					assert.Equal(t, tt.status, r.res.Last.Status)
					assert.Empty(t, r.res.Answers)
					assert.Len(t, r.res.Asked, 1)
					return
				}
				second := p.Next(t)
				assert.Equal(t, "Second?", second.Question)
				tt.stop(c, second, cancel)
				r := await(t, done)
				require.NoError(t, r.err)
				assert.False(t, r.res.Complete())
				assert.Equal(t, tt.status, r.res.Last.Status)
				assert.Equal(t, map[string]string{"First?": "b"}, r.res.Answers, "only answered questions appear")
				assert.Len(t, r.res.Asked, 2)
				p.NothingShown(t) // the third is never asked
			})
		})
	}
}

func TestAskRefuses(t *testing.T) {
	c, p := newCoord(t)
	_, err := c.Ask(t.Context(), "c", nil)
	require.ErrorIs(t, err, interactions.ErrInvalidReply)
	assert.Contains(t, err.Error(), "no questions")
	_, err = c.Ask(t.Context(), "c", []interactions.Question{{Question: ""}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs text")
	p.NothingShown(t)
}

func TestReviewPlanAndApproveTool(t *testing.T) {
	c, p := newCoord(t)
	type out struct {
		it  interactions.Interaction
		res interactions.Resolution
		err error
	}
	plan := make(chan out, 1)
	go func() {
		it, res, err := c.ReviewPlan(t.Context(), "c", "# Plan\n1. Add tests")
		plan <- out{it, res, err}
	}()
	it := p.Next(t)
	assert.Equal(t, interactions.KindPlanReview, it.Kind)
	assert.Equal(t, "# Plan\n1. Add tests", it.Plan)
	assert.Equal(t, interactions.PlanOptions, it.Options)
	_, err := c.Reply(it.ID, interactions.Reply{Answers: []string{interactions.DecisionCleanEdit}})
	require.NoError(t, err)
	r := await(t, plan)
	require.NoError(t, r.err)
	assert.Equal(t, it.ID, r.it.ID)
	assert.Equal(t, interactions.DecisionCleanEdit, r.res.Decision)
	assert.True(t, r.res.Approved())

	tool := make(chan out, 1)
	input := json.RawMessage(`{"file_path":"/src/main.go"}`)
	go func() {
		it, res, err := c.ApproveTool(t.Context(), "c", "Write", input, "Write /src/main.go")
		tool <- out{it, res, err}
	}()
	it = p.Next(t)
	assert.Equal(t, interactions.KindToolApproval, it.Kind)
	assert.Equal(t, "Write", it.ToolName)
	assert.Equal(t, "Write /src/main.go", it.ToolSummary)
	assert.JSONEq(t, string(input), string(it.ToolInput))
	assert.Equal(t, interactions.ToolOptions, it.Options)
	_, err = c.Reply(it.ID, interactions.Reply{Answers: []string{interactions.DecisionAllowSession}})
	require.NoError(t, err)
	r = await(t, tool)
	assert.Equal(t, interactions.DecisionAllowSession, r.res.Decision)
	assert.True(t, r.res.Approved())

	// Mutating the package-level option lists through a shown interaction
	// must not change what the next one shows.
	it.Options[0].Label = "hacked"
	assert.Equal(t, interactions.DecisionAllow, interactions.ToolOptions[0].Label)
}

type inputResult struct {
	resp interactions.InputResponse
	err  error
}

// inputCase is a RequestInput and how the person answers it.
type inputCase struct {
	name   string
	req    interactions.InputRequest
	mode   interactions.AnswerMode
	answer func(c *interactions.Coordinator, it interactions.Interaction) error
	want   interactions.InputResponse
}

var inputCases = []inputCase{
	{
		name: "no options is free text",
		req:  interactions.InputRequest{ChatID: "c", Prompt: "Commit message?"},
		mode: interactions.AnswerText,
		answer: func(c *interactions.Coordinator, it interactions.Interaction) error {
			_, _, err := c.ReplyText("c", interactions.Reply{By: "u", Text: "fix: races"})
			return err
		},
		want: interactions.InputResponse{Value: "fix: races", By: "u"},
	},
	{
		name: "two options is an approval",
		req:  interactions.InputRequest{ChatID: "c", Prompt: "Push to main?", Options: opts("yes", "no")},
		mode: interactions.AnswerApproval,
		answer: func(c *interactions.Coordinator, it interactions.Interaction) error {
			_, err := c.Reply(it.ID, interactions.Reply{By: "u", Answers: []string{"no"}})
			return err
		},
		want: interactions.InputResponse{Value: "no", By: "u"},
	},
	{
		name: "more options is a choice",
		req:  interactions.InputRequest{ChatID: "c", Header: "Env", Prompt: "Deploy where?", Options: opts("dev", "staging", "prod")},
		mode: interactions.AnswerChoice,
		answer: func(c *interactions.Coordinator, it interactions.Interaction) error {
			_, err := c.Reply(it.ID, interactions.Reply{By: "u", Answers: []string{"staging"}})
			return err
		},
		want: interactions.InputResponse{Value: "staging", By: "u"},
	},
	{
		name: "multi-select",
		req:  interactions.InputRequest{ChatID: "c", Prompt: "Which?", Options: opts("a", "b", "c"), MultiSelect: true},
		mode: interactions.AnswerChoice,
		answer: func(c *interactions.Coordinator, it interactions.Interaction) error {
			for _, l := range []string{"c", "a"} {
				if _, err := c.Toggle(it.ID, l, interactions.Reply{By: "u"}); err != nil {
					return err
				}
			}
			return c.Confirm(it.ID, interactions.Reply{By: "u"})
		},
		want: interactions.InputResponse{Value: "a, c", By: "u"},
	},
	{
		name: "rejected",
		req:  interactions.InputRequest{ChatID: "c", Prompt: "Push?", Options: opts("yes", "no")},
		mode: interactions.AnswerApproval,
		answer: func(c *interactions.Coordinator, it interactions.Interaction) error {
			_, err := c.Reply(it.ID, interactions.Reply{By: "u", Reject: true, Text: "not today"})
			return err
		},
		want: interactions.InputResponse{Rejected: true, Reason: "not today", By: "u"},
	},
}

// RequestInput shows each kind of input request as its mode says and hands
// back what the person answered.
func TestRequestInputAnswered(t *testing.T) {
	for _, tt := range inputCases {
		t.Run(tt.name, func(t *testing.T) {
			c, p := newCoord(t)
			var h interactions.InputHandler = c
			done := make(chan inputResult, 1)
			go func() {
				resp, err := h.RequestInput(t.Context(), tt.req)
				done <- inputResult{resp, err}
			}()
			it := p.Next(t)
			assert.Equal(t, tt.mode, it.AnswerMode())
			assert.Equal(t, tt.req.Prompt, it.Question)
			assert.Equal(t, tt.req.Header, it.Header)
			assert.Equal(t, interactions.KindQuestion, it.Kind)
			assert.Equal(t, 1, it.Index)
			assert.Equal(t, 1, it.Total)
			require.NoError(t, tt.answer(c, it))
			r := await(t, done)
			require.NoError(t, r.err)
			assert.Equal(t, tt.want, r.resp)
		})
	}
}

// RequestInput says why nobody answered: expired, cancelled (with the
// context's error when that was the cause), or the coordinator closed.
func TestRequestInputUnanswered(t *testing.T) {
	t.Run("expired", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, _ := newCoord(t, interactions.WithTimeout(5*time.Millisecond))
			_, err := c.RequestInput(t.Context(), interactions.InputRequest{ChatID: "c", Prompt: "Still there?"})
			require.ErrorIs(t, err, interactions.ErrExpired)
			assert.NotErrorIs(t, err, interactions.ErrCancelled)
			assert.Contains(t, err.Error(), "No answer came within 5ms")
		})
	})

	t.Run("context done", func(t *testing.T) {
		c, p := newCoord(t)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan inputResult, 1)
		go func() {
			resp, err := c.RequestInput(ctx, interactions.InputRequest{ChatID: "c", Prompt: "?"})
			done <- inputResult{resp, err}
		}()
		p.Next(t)
		cancel()
		r := await(t, done)
		require.ErrorIs(t, r.err, interactions.ErrCancelled)
		require.ErrorIs(t, r.err, context.Canceled, "the context's error is wrapped")
		assert.Zero(t, c.PendingCount())
	})

	t.Run("deadline exceeded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c, _ := newCoord(t)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
			defer cancel()
			_, err := c.RequestInput(ctx, interactions.InputRequest{ChatID: "c", Prompt: "?"})
			require.ErrorIs(t, err, interactions.ErrCancelled)
			require.ErrorIs(t, err, context.DeadlineExceeded)
		})
	})

	t.Run("cancelled by the chat", func(t *testing.T) {
		c, p := newCoord(t)
		done := make(chan inputResult, 1)
		go func() {
			resp, err := c.RequestInput(t.Context(), interactions.InputRequest{ChatID: "c", Prompt: "?"})
			done <- inputResult{resp, err}
		}()
		p.Next(t)
		c.CancelPending("c", "The chat was cleared.")
		r := await(t, done)
		require.ErrorIs(t, r.err, interactions.ErrCancelled)
		assert.Contains(t, r.err.Error(), "The chat was cleared.")
	})

	t.Run("closed", func(t *testing.T) {
		c, _ := newCoord(t)
		c.Interrupt("bye")
		_, err := c.RequestInput(t.Context(), interactions.InputRequest{ChatID: "c", Prompt: "?"})
		require.ErrorIs(t, err, interactions.ErrClosed)
	})
}
