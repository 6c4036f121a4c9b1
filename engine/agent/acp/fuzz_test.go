package acp

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzVendorQuestions: any params are refused or read as questions with
// text, unique among themselves, and unique non-empty labels.
func FuzzVendorQuestions(f *testing.F) {
	for _, s := range []string{
		`{"questions":[{"question":"Which port?","options":["8080","9090"]}]}`,
		`{"question":"Name?","header":"N","options":[{"label":"a","description":"b"}],"allowMultiple":true}`,
		`{"questions":[{"question":"a"},{"question":"a"}]}`,
		`{"nothing":true}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		qs, err := vendorQuestions(json.RawMessage(params))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, q := range qs {
			if strings.TrimSpace(q.Question) == "" || seen[q.Question] {
				t.Fatalf("question %q empty or repeated", q.Question)
			}
			seen[q.Question] = true
			labels := map[string]bool{}
			for _, o := range q.Options {
				if o.Label == "" || labels[o.Label] {
					t.Fatalf("label %q empty or repeated", o.Label)
				}
				labels[o.Label] = true
			}
			if q.MultiSelect && len(q.Options) == 0 {
				t.Fatalf("multi-select without options")
			}
		}
	})
}
