package connectors

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/interactions"
)

// The whole input is indented JSON with <, > and & shown as they are,
// while an escaped backslash before "u003c" stays escaped.
func TestToolDetails(t *testing.T) {
	in, _ := json.Marshal(map[string]string{"cmd": `a <b> && c`, "lit": `\u003c`})
	got := ToolDetails(interactions.Interaction{ToolInput: in})
	assert.Equal(t, "{\n  \"cmd\": \"a <b> && c\",\n  \"lit\": \"\\\\u003c\"\n}", got)
	assert.Equal(t, "not json", ToolDetails(interactions.Interaction{ToolInput: json.RawMessage("not json")}))
}

func FuzzUnescapeHTML(f *testing.F) {
	for _, s := range []string{`a\u003cb`, `\\u003c`, `\`, `\u00`, `"\u0026\u003E"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(`"`+s+`"`), &v) != nil {
			return // only JSON string bodies matter
		}
		var back any
		out := unescapeHTML(s)
		if json.Unmarshal([]byte(`"`+out+`"`), &back) != nil {
			t.Fatalf("%q became invalid JSON %q", s, out)
		}
		assert.Equal(t, v, back, "the same string")
	})
}
