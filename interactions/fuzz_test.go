package interactions_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/leashd/leashd/interactions"
)

// FuzzEvaluate feeds arbitrary replies (taps with any labels, typed text,
// rejections) to every kind of interaction: a reply is either refused with
// ErrInvalidReply or gives a resolution that only uses the interaction's
// own options and always tells the agent why it was refused.
func FuzzEvaluate(f *testing.F) {
	f.Add(uint8(0), "SQLite", "", false, false)
	f.Add(uint8(0), "Auth\x00Search", "", false, true)
	f.Add(uint8(0), "", "MariaDB, please", false, false)
	f.Add(uint8(0), "Nope", "", false, false)
	f.Add(uint8(1), interactions.DecisionAdjust, "", false, false)
	f.Add(uint8(1), interactions.DecisionAdjust, "split step 2", false, false)
	f.Add(uint8(1), interactions.DecisionCleanEdit, "", false, false)
	f.Add(uint8(2), interactions.DecisionDeny, "", false, false)
	f.Add(uint8(2), interactions.DecisionAllowSession, "", false, false)
	f.Add(uint8(2), "allow", "rm -rf /", true, false)
	f.Add(uint8(3), "x", "y", false, false)
	f.Fuzz(func(t *testing.T, kind uint8, answers, text string, reject, multi bool) {
		it := interactions.Interaction{ID: "i1", ChatID: "c1", MultiSelect: multi}
		switch kind % 4 {
		case 0:
			it.Kind, it.Question = interactions.KindQuestion, "Which features?"
			it.Options = []interactions.Choice{{Label: "Auth"}, {Label: "Search"}, {Label: "SQLite"}}
		case 1:
			it.Kind, it.Options = interactions.KindPlanReview, interactions.PlanOptions
		case 2:
			it.Kind, it.Options = interactions.KindToolApproval, interactions.ToolOptions
		default:
			it.Kind, it.Options = interactions.Kind("nonsense"), interactions.ToolOptions
		}
		var as []string
		if answers != "" {
			as = strings.Split(answers, "\x00")
		}
		res, out, err := interactions.Evaluate(it, interactions.Reply{By: "u1", Answers: as, Text: text, Reject: reject})
		if err != nil {
			if !errors.Is(err, interactions.ErrInvalidReply) {
				t.Fatalf("error %v does not wrap ErrInvalidReply", err)
			}
			if err.Error() == interactions.ErrInvalidReply.Error() {
				t.Fatalf("error %q does not say what was wrong", err)
			}
			return
		}
		if res.By != "u1" {
			t.Fatalf("resolution by %q, want u1", res.By)
		}
		if reject { // a rejection ignores what else came with it
			if res.Status != interactions.StatusRejected || res.Text == "" {
				t.Fatalf("a rejection resolved as %q with text %q", res.Status, res.Text)
			}
			return
		}
		for _, a := range as {
			if !it.HasOption(a) {
				t.Fatalf("accepted %q, which is not an option of %+v", a, it.Options)
			}
		}
		if out == interactions.AwaitingFeedback {
			if it.Kind != interactions.KindPlanReview || res.Decision != interactions.DecisionAdjust || strings.TrimSpace(text) != "" {
				t.Fatalf("awaiting feedback for %s decision %q text %q", it.Kind, res.Decision, text)
			}
			return
		}
		switch res.Status {
		case interactions.StatusAnswered:
			if it.Kind == interactions.KindQuestion && res.Answer == "" {
				t.Fatal("an answered question has no answer")
			}
			if it.Kind == interactions.KindQuestion && len(as) == 1 && res.Answer != as[0] {
				t.Fatalf("answer %q, tapped %q", res.Answer, as[0])
			}
			if it.Kind != interactions.KindQuestion && !slices.ContainsFunc(it.Options, func(o interactions.Choice) bool { return o.Label == res.Decision }) {
				t.Fatalf("decision %q is not an option", res.Decision)
			}
		case interactions.StatusRejected:
			if res.Text == "" && it.Kind != interactions.KindPlanReview {
				t.Fatal("a rejection tells the agent nothing")
			}
		default:
			t.Fatalf("status %q from a reply", res.Status)
		}
	})
}
