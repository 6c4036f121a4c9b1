package acp

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzFormFields: any requestedSchema is either refused with an error or
// read as at most maxFields questions, each with non-empty text unique in
// the form, unique option labels, and every option mapping back to a value
// (a pick of each option gives content for the field).
func FuzzFormFields(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"question_0":{"type":"string","title":"DB","oneOf":[{"const":"Postgres","title":"Postgres","description":"x"}]},"question_0_custom":{"type":"string"}}}`,
		`{"properties":{"a":{"type":"array","items":{"enum":["x","y"],"enumNames":["X","Y"]}},"b":{"type":"boolean"},"c":{"type":"integer"}}}`,
		`{"properties":{"a":{"type":"object"}}}`,
		`{"properties":{"a":{},"a":{}}}`,
		`{"properties":null}`,
		`[]`,
	} {
		f.Add(s, "message")
	}
	f.Fuzz(func(t *testing.T, schema, message string) {
		fs, err := formFields(json.RawMessage(schema), message)
		if err != nil {
			return
		}
		if len(fs) == 0 || len(fs) > maxFields {
			t.Fatalf("%d fields from %s", len(fs), schema)
		}
		seen := map[string]bool{}
		for _, fl := range fs {
			q := fl.q.Question
			if strings.TrimSpace(q) == "" || seen[q] {
				t.Fatalf("question text %q empty or repeated in %s", q, schema)
			}
			seen[q] = true
			labels := map[string]bool{}
			for _, o := range fl.q.Options {
				if labels[o.Label] {
					t.Fatalf("label %q repeated", o.Label)
				}
				labels[o.Label] = true
				content := map[string]any{}
				if err := fl.value(o.Label, content); err != nil {
					t.Fatalf("picking %q: %v", o.Label, err)
				}
				if _, ok := content[fl.name]; !ok {
					t.Fatalf("picking %q gave no value for %q: %v", o.Label, fl.name, content)
				}
			}
			if _, err := json.Marshal(map[string]any{"x": fl.values}); err != nil {
				t.Fatalf("values do not marshal: %v", err)
			}
		}
	})
}

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
