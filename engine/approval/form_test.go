package approval

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A form's fields become questions in the server's order: a string with
// enum or oneOf a single choice, an array with anyOf a multiple choice, a
// boolean Yes/No, numbers and plain strings free text; answers convert
// back to the values the schema names.
func TestFormFields(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"size":{"type":"string","title":"Size","description":"Which size?","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
		"tags":{"type":"array","title":"Tags","items":{"anyOf":[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"}]}},
		"color":{"type":"string","enum":["red","blue"]},
		"ok":{"type":"boolean","title":"Proceed?"},
		"count":{"type":"integer","description":"How many?"},
		"note":{"type":"string","description":"Anything else?"}
	},"required":["size"]}`)
	fs, err := FormFields(schema, FormOptions{})
	require.NoError(t, err)
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	assert.Equal(t, []string{"size", "tags", "color", "ok", "count", "note"}, names, "the schema's order")
	assert.Equal(t, "Which size?", fs[0].Question.Question)
	assert.Equal(t, "Size", fs[0].Question.Header)
	assert.True(t, fs[0].Required)
	assert.False(t, fs[0].Question.MultiSelect)
	assert.True(t, fs[1].Question.MultiSelect)
	assert.Empty(t, fs[4].Question.Options)
	assert.Empty(t, fs[5].Question.Options)

	for _, tc := range []struct {
		f      int
		answer string
		want   any
	}{
		{0, "Large", "l"}, {1, "Alpha, Beta", []any{"a", "b"}}, {2, "blue", "blue"},
		{3, "No", false}, {3, "yes", true}, {4, "12", int64(12)}, {5, "free, text", "free, text"},
	} {
		v, err := fill(fs[tc.f], tc.answer)
		require.NoError(t, err, tc.answer)
		assert.Equal(t, tc.want, v, tc.answer)
	}
	for _, tc := range []struct {
		f      int
		answer string
	}{{0, "Medium"}, {4, "twelve"}, {1, "Alpha, Gamma"}} {
		_, err := fill(fs[tc.f], tc.answer)
		assert.Error(t, err, tc.answer)
	}

	fs, err = FormFields(schema, FormOptions{Order: []string{"note", "nope", "count"}})
	require.NoError(t, err)
	assert.Equal(t, "note", fs[0].Name, "property_order first")
	assert.Equal(t, "count", fs[1].Name)
	assert.Equal(t, "size", fs[2].Name, "then the rest in the schema's order")
}

func TestFormFieldsErrorsSayWhat(t *testing.T) {
	for schema, want := range map[string]string{
		``:                                       "no schema",
		`[]`:                                     "not a JSON object",
		`{"properties":{}}`:                      `no "properties"`,
		`{"properties":{"x":{"type":"object"}}}`: `field "x": type "object" cannot be asked (accepted: string, number, integer, boolean, array of options)`,
		`{"properties":{"x":{"type":"array"}}}`:  `field "x": an array needs "items" with "enum" or "anyOf" options`,
		`{"properties":{"x":{}}}`:                `field "x": no "type"`,
	} {
		_, err := FormFields(json.RawMessage(schema), FormOptions{})
		require.Error(t, err, schema)
		assert.Contains(t, err.Error(), want, schema)
	}
}

// fill is the value an answer gives the field, or why it does not fit.
func fill(f FormField, answer string) (any, error) {
	content := map[string]any{}
	err := f.Fill(answer, content)
	return content[f.Name], err
}

// FuzzFormFields: any schema is refused with an error, or read as at most
// MaxFormFields questions, each field once, with unique option labels, each
// option an answer that gives the field a value. Read for an ACP agent
// (acpForm in engine/agent/acp: all at once, text as the message), the question
// texts are non-empty and unique and the values marshal; read one at a
// time (Elicit, text as an answer), any answer is taken or refused.
func FuzzFormFields(f *testing.F) {
	for _, s := range []string{
		`{"properties":{"a":{"type":"string"},"b":{"type":"array","items":{"enum":["x","x"]}}}}`,
		`{"properties":{"a":{"type":"string","oneOf":[{"const":1},{"const":"1"}]}}}`,
		`{"properties":{"a":{"type":"boolean"},"a":{"type":"number"}}}`,
		`{"properties":[]}`, `null`, `{"properties":{"a":{"type":"array","items":[]}}}`,
		`{"type":"object","properties":{"question_0":{"type":"string","title":"DB","oneOf":[{"const":"Postgres","title":"Postgres","description":"x"}]},"question_0_custom":{"type":"string"}}}`,
		`{"properties":{"a":{"type":"array","items":{"enum":["x","y"],"enumNames":["X","Y"]}},"b":{"type":"boolean"},"c":{"type":"integer"}}}`,
		`{"properties":{"a":{"type":"object"}}}`,
		`{"properties":{"a":{},"a":{}}}`,
		`{"properties":null}`,
		`[]`,
	} {
		f.Add([]byte(s), "x")
	}
	f.Fuzz(func(t *testing.T, schema []byte, text string) {
		for _, o := range []FormOptions{
			{Order: []string{"a", "b"}},
			{Together: true, Message: text, Companions: true, Lenient: true},
		} {
			fs, err := FormFields(schema, o)
			if err != nil {
				assert.NotEmpty(t, err.Error())
				continue
			}
			require.NotEmpty(t, fs)
			require.LessOrEqual(t, len(fs), MaxFormFields)
			names, texts := map[string]bool{}, map[string]bool{}
			for _, fl := range fs {
				assert.False(t, names[fl.Name], "each field once")
				names[fl.Name] = true
				if o.Together {
					q := fl.Question.Question
					assert.False(t, strings.TrimSpace(q) == "" || texts[q], "question text %q empty or repeated", q)
					texts[q] = true
					_, err := json.Marshal(map[string]any{"x": fl.values})
					assert.NoError(t, err, "values marshal")
				}
				labels := map[string]bool{}
				for _, op := range fl.Question.Options {
					assert.False(t, labels[op.Label], "labels are unique")
					labels[op.Label] = true
					content := map[string]any{}
					require.NoError(t, fl.Fill(op.Label, content), "every option is an answer")
					assert.Contains(t, content, fl.Name, "picking %q gives the field a value", op.Label)
				}
				if !o.Together {
					_, _ = fill(fl, text)
				}
			}
		}
	})
}

// plainText keeps text and line breaks and drops terminal escapes and
// other control characters; cleaning twice changes nothing.
func FuzzPlainText(f *testing.F) {
	for _, s := range []string{"a\x1b[31mred\x1b[0m b", "\x1b]8;;http://x\x07link\x1b]8;;\x1b\\", "tab\tnl\ncr\r\x00\u2028", "\x1b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := PlainText(s)
		for _, r := range out {
			if r == '\n' || r == '\t' {
				continue
			}
			assert.False(t, r < 0x20 || (r >= 0x7f && r < 0xa0) || r == 0x2028 || r == 0x2029, "control %U left in %q", r, out)
		}
		assert.Equal(t, out, PlainText(out))
	})
}

func TestPlainText(t *testing.T) {
	assert.Equal(t, "a red b", PlainText("a \x1b[31mred\x1b[0m b"))
	assert.Equal(t, "link", PlainText("\x1b]8;;http://x\x07link\x1b]8;;\x1b\\"))
	assert.Equal(t, "tab\tnl\n", PlainText("tab\tnl\n\r\x00"))
}
