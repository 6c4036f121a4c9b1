package interactions_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// TestThousandsOfChats asks two questions in each of thousands of chats at
// once, answered concurrently by a pool of "people" tapping, typing and
// toggling; every chat must get exactly its own answers.
func TestThousandsOfChats(t *testing.T) {
	chats := 2000
	if testing.Short() {
		chats = 200
	}
	c, p := newCoord(t)
	ctx := t.Context()

	// The people: answer whatever is shown, from several goroutines.
	var people sync.WaitGroup
	stopPeople := make(chan struct{})
	errs := make(chan error, chats*2)
	for range 8 {
		people.Go(func() { answerWhatIsShown(c, p, stopPeople, errs) })
	}

	var askers sync.WaitGroup
	for i := range chats {
		chat := fmt.Sprintf("chat:%d", i*7) // ids of varying length: both answer styles
		askers.Go(func() { askTwoAndCheck(ctx, c, chat, errs) })
	}
	askersDone := make(chan struct{})
	go func() { askers.Wait(); close(askersDone) }()
	await(t, askersDone)
	close(stopPeople)
	people.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Zero(t, c.PendingCount())
	assert.Len(t, p.Shown(), 2*chats)
}

// answerWhatIsShown is a person in TestThousandsOfChats: it answers
// whatever is shown until stop, a multi-select question by toggling the last
// and the first option, others by a tap or typed text (by the chat ID's
// length).
func answerWhatIsShown(c *interactions.Coordinator, p *fakePresenter, stop <-chan struct{}, errs chan<- error) {
	for {
		var it interactions.Interaction
		select {
		case it = <-p.ch:
		case <-stop:
			return
		}
		var err error
		switch {
		case it.MultiSelect:
			if _, err = c.Toggle(it.ID, it.Options[2].Label, interactions.Reply{By: it.ChatID}); err == nil {
				if _, err = c.Toggle(it.ID, it.Options[0].Label, interactions.Reply{By: it.ChatID}); err == nil {
					err = c.Confirm(it.ID, interactions.Reply{By: it.ChatID})
				}
			}
		case len(it.ChatID)%2 == 0:
			_, err = c.Reply(it.ID, interactions.Reply{By: it.ChatID, Answers: []string{it.Options[1].Label}})
		default:
			_, _, err = c.ReplyText(it.ChatID, interactions.Reply{By: it.ChatID, Text: "typed in " + it.ChatID})
		}
		if err != nil {
			errs <- fmt.Errorf("%s %q: %w", it.ChatID, it.Question, err)
		}
	}
}

// askTwoAndCheck asks chat's two questions in TestThousandsOfChats and
// reports any answer that is not the chat's own.
func askTwoAndCheck(ctx context.Context, c *interactions.Coordinator, chat string, errs chan<- error) {
	res, err := c.Ask(ctx, chat, []interactions.Question{
		{Question: "Pick for " + chat, Options: opts("x-"+chat, "y-"+chat)},
		{Question: "Features for " + chat, Options: opts("a-"+chat, "b-"+chat, "c-"+chat), MultiSelect: true},
	})
	if err != nil {
		errs <- err
		return
	}
	first := "y-" + chat
	if len(chat)%2 != 0 {
		first = "typed in " + chat
	}
	want := map[string]string{
		"Pick for " + chat:     first,
		"Features for " + chat: "a-" + chat + ", c-" + chat,
	}
	if !res.Complete() || !assert.ObjectsAreEqual(want, res.Answers) {
		errs <- fmt.Errorf("%s: got %v (%s), want %v", chat, res.Answers, res.Last.Status, want)
	}
	for _, it := range res.Asked {
		if it.ChatID != chat {
			errs <- fmt.Errorf("%s was asked %s's question", chat, it.ChatID)
		}
	}
}

// racer resolves an interaction by other means while a tap arrives.
type racer struct {
	name    string
	timeout time.Duration
	kind    func(chat string) interactions.Interaction
	// race runs concurrently with the tap and reports whether it (not the
	// tap) resolved the interaction; nil when the timer is the racer.
	race   func(c *interactions.Coordinator, it interactions.Interaction, cancel context.CancelFunc) (bool, error)
	status interactions.Status // the status when the racer wins
	by     string              // By when the racer wins
	// reports: race's bool says whether it won (timeout and context
	// cancellation are only seen in the status).
	reports bool
}

func TestTapRaces(t *testing.T) {
	tap := func(by string) func(c *interactions.Coordinator, it interactions.Interaction) error {
		return func(c *interactions.Coordinator, it interactions.Interaction) error {
			_, err := c.Reply(it.ID, interactions.Reply{By: by, Answers: []string{it.Options[0].Label}})
			return err
		}
	}
	racers := []racer{
		{name: "timeout", timeout: 20 * time.Microsecond, status: interactions.StatusExpired},
		{name: "context cancel", status: interactions.StatusCancelled,
			race: func(_ *interactions.Coordinator, _ interactions.Interaction, cancel context.CancelFunc) (bool, error) {
				cancel()
				return false, nil // decided from the status
			}},
		{name: "CancelPending", reports: true, status: interactions.StatusCancelled,
			race: func(c *interactions.Coordinator, it interactions.Interaction, _ context.CancelFunc) (bool, error) {
				return len(c.CancelPending(it.ChatID, "/stop")) == 1, nil
			}},
		{name: "Cancel", reports: true, status: interactions.StatusCancelled,
			race: func(c *interactions.Coordinator, it interactions.Interaction, _ context.CancelFunc) (bool, error) {
				return c.Cancel(it.ID, "withdrawn"), nil
			}},
		{name: "Interrupt", reports: true, status: interactions.StatusInterrupted,
			race: func(c *interactions.Coordinator, it interactions.Interaction, _ context.CancelFunc) (bool, error) {
				return len(c.Interrupt("shutdown")) == 1, nil
			}},
		{name: "the same tap twice", reports: true, status: interactions.StatusAnswered, by: "twin",
			race: func(c *interactions.Coordinator, it interactions.Interaction, _ context.CancelFunc) (bool, error) {
				err := tap("twin")(c, it)
				if errors.Is(err, interactions.ErrNotPending) {
					return false, nil
				}
				return err == nil, err
			}},
		{name: "typed text", reports: true, status: interactions.StatusRejected, by: "typist", kind: toolApproval,
			race: func(c *interactions.Coordinator, it interactions.Interaction, _ context.CancelFunc) (bool, error) {
				_, _, err := c.ReplyText(it.ChatID, interactions.Reply{By: "typist", Text: "no"})
				if errors.Is(err, interactions.ErrNotFound) {
					return false, nil // the tap won: nothing pending, the text is a prompt
				}
				return err == nil, err
			}},
	}
	iterations := 300
	if testing.Short() {
		iterations = 50
	}
	for _, rc := range racers {
		t.Run(rc.name, func(t *testing.T) {
			wins := map[string]int{}
			for i := range iterations {
				winner := raceOnce(t, rc, tap("tapper"), i)
				if t.Failed() {
					return
				}
				wins[winner]++
			}
			t.Logf("winners over %d runs: %v", iterations, wins)
		})
	}
}

// raceOnce runs one race and returns who won ("tap" or "racer").
func raceOnce(t *testing.T, rc racer, tap func(*interactions.Coordinator, interactions.Interaction) error, i int) string {
	t.Helper()
	kind := rc.kind
	if kind == nil {
		kind = func(chat string) interactions.Interaction { return question(chat, "Q?", "yes", "no") }
	}
	p := newPresenter()
	c := interactions.New(interactions.WithPresenter(p), interactions.WithTimeout(rc.timeout))
	defer c.Interrupt("test over")
	events, stop := c.Subscribe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	var wg sync.WaitGroup
	var tapErr, raceErr error
	var racerWon bool
	p.OnPresent = func(_ context.Context, it *interactions.Interaction) (string, error) {
		go1 := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-go1
			tapErr = tap(c, *it)
		}()
		go func() {
			defer wg.Done()
			<-go1
			if rc.race != nil {
				racerWon, raceErr = rc.race(c, *it, cancel)
			}
		}()
		close(go1)
		return refOf(*it), nil
	}
	r := await(t, request(ctx, c, kind(fmt.Sprint("chat", i))))
	require.NoError(t, r.err)
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	await(t, waited)
	require.NoError(t, raceErr)

	// Every event has been published (the resolved one before Request
	// returned): stop, drain, and count.
	stop()
	var evs []interactions.Event
	for e := range events {
		evs = append(evs, e)
	}
	require.Len(t, evs, 2, "exactly requested and one resolved: %+v", evs)
	assert.Equal(t, interactions.EventResolved, evs[1].Type)
	assert.Equal(t, r.res, evs[1].Resolution, "the waiter sees the resolution the event reports")
	assert.Equal(t, refOf(r.it), evs[1].Ref)
	assert.Zero(t, c.PendingCount())

	if tapErr == nil {
		assert.False(t, racerWon, "both the tap and the racer resolved it")
		assert.Equal(t, interactions.StatusAnswered, r.res.Status)
		assert.Equal(t, "tapper", r.res.By)
		return "tap"
	}
	require.ErrorIs(t, tapErr, interactions.ErrNotPending, "a lost tap is told the interaction is gone")
	if rc.reports {
		assert.True(t, racerWon, "the tap lost but the racer says it did not win")
	}
	assert.Equal(t, rc.status, r.res.Status)
	assert.Equal(t, rc.by, r.res.By)
	return "racer"
}

// TestToggleRacesConfirm: toggles and a confirm arrive at once (a person
// tapping fast, or two people). The answer is exactly the toggles that got
// in before the confirm; later toggles are told it is gone.
func TestToggleRacesConfirm(t *testing.T) {
	labels := []string{"a", "b", "c", "d"}
	iterations := 200
	if testing.Short() {
		iterations = 30
	}
	c, p := newCoord(t)
	for range iterations {
		done := request(t.Context(), c, multi("c", "Which?", labels...))
		it := p.Next(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var in []string
		var toggleErrs []error
		for _, l := range labels {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.Toggle(it.ID, l, interactions.Reply{By: "u"})
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					in = append(in, l)
				} else {
					toggleErrs = append(toggleErrs, err)
				}
			}()
		}
		var confirmErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				confirmErr = c.Confirm(it.ID, interactions.Reply{By: "u"})
				if !errors.Is(confirmErr, interactions.ErrInvalidReply) {
					return // confirmed (or an unexpected error)
				}
				runtime.Gosched() // nothing selected yet
			}
		}()
		wg.Wait()
		require.NoError(t, confirmErr)
		for _, err := range toggleErrs {
			require.ErrorIs(t, err, interactions.ErrNotPending)
		}
		r := await(t, done)
		slices.SortFunc(in, func(a, b string) int { return slices.Index(labels, a) - slices.Index(labels, b) })
		require.NotEmpty(t, in)
		assert.Equal(t, joinLabels(in), r.res.Answer)
	}
}

func joinLabels(ls []string) string {
	out := ""
	for i, l := range ls {
		if i > 0 {
			out += ", "
		}
		out += l
	}
	return out
}

// TestAdjustFeedbackRace: the adjust tap and the feedback text arrive at
// once. Either order ends as adjust with that feedback, resolved once.
func TestAdjustFeedbackRace(t *testing.T) {
	c, p := newCoord(t)
	for range 200 {
		done := request(t.Context(), c, planReview("c"))
		it := p.Next(t)
		var wg sync.WaitGroup
		var tapOut interactions.Outcome
		var tapErr, textErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			tapOut, tapErr = c.Reply(it.ID, interactions.Reply{Answers: []string{"adjust"}})
		}()
		go func() {
			defer wg.Done()
			_, _, textErr = c.ReplyText("c", interactions.Reply{Text: "fewer steps"})
		}()
		wg.Wait()
		require.NoError(t, textErr)
		if tapErr == nil {
			assert.Equal(t, interactions.AwaitingFeedback, tapOut, "the tap came first")
		} else {
			require.ErrorIs(t, tapErr, interactions.ErrNotPending, "the text came first")
		}
		r := await(t, done)
		assert.Equal(t, interactions.DecisionAdjust, r.res.Decision)
		assert.Equal(t, "fewer steps", r.res.Text)
	}
}
