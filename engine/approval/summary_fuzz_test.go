package approval_test

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/leashd/leashd/engine/approval"
)

// FuzzToolSummary renders arbitrary tool inputs from the agent: it never
// panics, always gives valid UTF-8 (chat APIs refuse anything else), and
// shows the Bash command itself.
func FuzzToolSummary(f *testing.F) {
	f.Add("Bash", []byte(`{"command":"echo hi","description":"Say hi"}`))
	f.Add("Write", []byte(`{"file_path":"/tmp/a.go","content":"package a\n\nfunc A() {}\n"}`))
	f.Add("Edit", []byte(`{"file_path":"a.go","old_string":"x","new_string":"y"}`))
	f.Add("MultiEdit", []byte(`{"file_path":"a.go","edits":[{"old_string":"a","new_string":"b"},7,null]}`))
	f.Add("NotebookEdit", []byte(`{"notebook_path":"n.ipynb","new_source":"print(1)"}`))
	f.Add("Grep", []byte(`{"pattern":"TODO","path":"."}`))
	f.Add("WebFetch", []byte(`{"url":"https://example.com"}`))
	f.Add("mcp__x__y", []byte(`{"a":[1,2,{"b":"\u00e9"}]}`))
	f.Add("Bash", []byte("{\"command\":\"\xff\xfe\"}"))
	f.Add("Write", []byte(`not json`))
	f.Fuzz(func(t *testing.T, tool string, input []byte) {
		out := approval.ToolSummary(tool, json.RawMessage(input))
		if !utf8.ValidString(out) {
			t.Fatalf("summary is not valid UTF-8: %q", out)
		}
		var in struct {
			Command string `json:"command"`
		}
		if tool == "Bash" && json.Unmarshal(input, &in) == nil && in.Command != "" {
			if len(out) < len(in.Command) || out[:len(in.Command)] != in.Command {
				t.Fatalf("Bash summary %q does not start with the command %q", out, in.Command)
			}
		}
	})
}
