package claude

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCloseTruncated(t *testing.T) {
	const note = "… cut"
	for _, c := range []struct{ in, want string }{
		{`{"type":"assistant","message":{"content":[{"type":"text","text":"hello wor`, `{"type":"assistant","message":{"content":[{"type":"text","text":"hello wor… cut"}]}}`},
		{`{"a":"x\`, `{"a":"x… cut"}`},
		{`{"a":"x\u00`, `{"a":"x… cut"}`},
		{`{"a":"x\u00e9y`, `{"a":"x\u00e9y… cut"}`},
		{"{\"a\":\"caf\xc3", `{"a":"caf… cut"}`},
		{`{"a":1,"b":tru`, `{"a":1,"b":null}`},
		{`{"a":1,"b":`, `{"a":1,"b":null}`},
		{`{"a":1,"b"`, `{"a":1,"b":null}`},
		{`{"a":1,"bc`, `{"a":1,"bc":null}`},
		{`{"a":[1,2,`, `{"a":[1,2]}`},
		{`{"a":[1,-2.5`, `{"a":[1,null]}`},
		{`{"a":{},`, `{"a":{}}`},
		{`{`, `{}`},
		{`{"a":"b"} trailing`, `{"a":"b"}`},
	} {
		out, _, ok := closeTruncated([]byte(c.in), note)
		if assert.True(t, ok, c.in) {
			assert.Equal(t, c.want, string(out), c.in)
		}
	}
	for _, bad := range []string{``, `  `, `[1,2`, `"x"`, `{"a":"\q`, `{"a" "b"}`, `{]`, "{\"a\":\"\x01"} {
		_, _, ok := closeTruncated([]byte(bad), note)
		assert.False(t, ok, "%q", bad)
	}
}

// FuzzCloseTruncated: every prefix of a JSON object closes to a valid JSON
// object, and a cut inside a string value carries the note.
func FuzzCloseTruncated(f *testing.F) {
	for _, s := range []string{
		`{"type":"assistant","parent_tool_use_id":null,"message":{"id":"m","content":[{"type":"text","text":"héllo \"wörld\"\n\u00e9"},{"type":"tool_use","name":"Read","input":{"n":[1,2.5e3,-3,true,false,null]}}]}}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s","total_cost_usd":0.1,"num_turns":1}`,
		`{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"/x","content":"line1\nline2\t\\"}}}`,
		`{ "a" : [ { } , [ ] , "" ] , "b" : { "c" : "\ud83d\ude00" } }`,
	} {
		f.Add(s, len(s)/2)
	}
	f.Fuzz(func(t *testing.T, in string, cut int) {
		out, _, ok := closeTruncated([]byte(in), "… N")
		if ok {
			require.True(t, json.Valid(out), "%q → %q", in, out)
			require.Equal(t, byte('{'), strings.TrimSpace(string(out))[0])
		}
		var v map[string]any
		if json.Unmarshal([]byte(in), &v) != nil || len(in) == 0 {
			return
		}
		if cut < 0 {
			cut = -cut
		}
		trimmed := strings.TrimLeft(in, " \t\r\n")
		if !strings.HasPrefix(trimmed, "{") { // null decodes into a map too
			return
		}
		cut = cut%len(trimmed) + 1
		out, _, ok = closeTruncated([]byte(trimmed[:cut]), "… N")
		require.True(t, ok, "a prefix of a JSON object closes: %q", trimmed[:cut])
		require.True(t, json.Valid(out), "%q → %q", trimmed[:cut], out)
	})
}
