package web

import (
	"slices"
	"strings"
	"testing"

	"github.com/leashd/leashd/interactions"
)

func FuzzParseAsk(f *testing.F) {
	for _, s := range []string{
		`{"chat_id":"telegram:42","kind":"question","question":"Ship?","header":"Deploy","options":[{"label":"Yes","description":"go"},{"label":"No"}],"timeout_seconds":600}`,
		`{"chat_id":"c","kind":"approval","question":"Drop?"}`, `{"chat_id":"c","kind":"text","question":"Name?"}`,
		`{"chat_id":"c","question":"Which?","multi_select":true,"options":[{"label":"a"},{"label":"b"}],"index":1,"total":2}`,
		`{"chat_id":"c","kind":"plan_review","plan":"# Plan"}`, `{"chat_id":"c","kind":"tool_approval","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		`{"chat_id":"c","kind":"tool_approval","tool_name":"Bash","tool_input":"ls"}`, `{"chat_id":"a b","question":"q"}`,
		`{"chat_id":"c","question":"q","options":[{"label":"a"},{"label":"a"}]}`, `{"chat_id":"c","question":"q","timeout_seconds":-5}`,
		`{}`, ``, `null`, `[]`, "\xff", `{"chat_id":"c","question":"q","index":3,"total":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		it, timeout, err := ParseAsk(body)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if validChatID(it.ChatID) != nil {
			t.Fatalf("accepted chat %q", it.ChatID)
		}
		if timeout < 0 || timeout.Seconds() > MaxAskTimeout {
			t.Fatalf("timeout %s out of range", timeout)
		}
		switch it.Kind {
		case interactions.KindQuestion:
			if strings.TrimSpace(it.Question) == "" || len(it.Question) > interactions.MaxQuestionBytes {
				t.Fatalf("question %q accepted", it.Question)
			}
			if len(it.Options) > interactions.MaxOptions || (it.MultiSelect && len(it.Options) == 0) {
				t.Fatalf("options %v (multi %v) accepted", it.Options, it.MultiSelect)
			}
			if it.Approval && (len(it.Options) != 2 || it.MultiSelect) {
				t.Fatalf("approval with %d options", len(it.Options))
			}
			var labels []string
			for _, o := range it.Options {
				if o.Label == "" || o.Label != strings.TrimSpace(o.Label) || slices.Contains(labels, o.Label) {
					t.Fatalf("label %q accepted (labels so far %q)", o.Label, labels)
				}
				labels = append(labels, o.Label)
			}
			if it.Index < 1 || it.Index > it.Total {
				t.Fatalf("position %d of %d", it.Index, it.Total)
			}
		case interactions.KindPlanReview:
			if strings.TrimSpace(it.Plan) == "" {
				t.Fatal("empty plan accepted")
			}
		case interactions.KindToolApproval:
			if strings.TrimSpace(it.ToolName) == "" || len(it.ToolInput) == 0 {
				t.Fatalf("tool approval %+v accepted", it)
			}
		default:
			t.Fatalf("kind %q", it.Kind)
		}
	})
}

func FuzzSplitLabels(f *testing.F) {
	f.Add("a, b", "c", "A, B, C", true)
	f.Add("x", "y", "y", false)
	f.Add("a, b", "a", "a, b, a", true)
	f.Add("", ",", ", , ", true)
	f.Fuzz(func(t *testing.T, l1, l2, answer string, multi bool) {
		it := interactions.Interaction{MultiSelect: multi, Options: []interactions.Choice{{Label: l1}, {Label: l2}, {Label: "z"}}}
		labels, ok := splitLabels(it, answer)
		if !ok {
			return
		}
		if strings.Join(labels, ", ") != answer {
			t.Fatalf("%q joined is not %q", labels, answer)
		}
		if !multi && len(labels) != 1 {
			t.Fatalf("single-select split into %q", labels)
		}
		last := -1
		for _, l := range labels {
			i := slices.IndexFunc(it.Options[last+1:], func(o interactions.Choice) bool { return o.Label == l })
			if i < 0 {
				t.Fatalf("%q is not an option after index %d", l, last)
			}
			last += i + 1
		}
	})
}
