package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

func FuzzParseToolArgs(f *testing.F) {
	for _, s := range []string{
		`{"questions":[{"question":"Which?","header":"H","options":[{"label":"a","description":"d"},{"label":"b"}],"multiSelect":true}]}`,
		`{"questions":[]}`, `{"questions":[{"question":" "}]}`, `{"questions":"x"}`,
		`{"action":"Deploy","details":"v2"}`, `{"details":"x"}`,
		`{"tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1"}`, `{"tool_name":"Bash","input":"ls"}`,
		`{"tool_name":"","input":{}}`, ``, `null`, `[]`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if in, err := ParseAsk(b); err == nil {
			if len(in.Questions) < 1 || len(in.Questions) > 4 {
				t.Fatalf("%d questions accepted", len(in.Questions))
			}
			for _, q := range in.Questions {
				if strings.TrimSpace(q.Question) == "" || (q.MultiSelect && len(q.Options) == 0) {
					t.Fatalf("question %+v accepted", q)
				}
			}
		} else if !strings.HasPrefix(err.Error(), "ask_user: ") {
			t.Fatalf("error %q does not name the tool", err)
		}
		if in, err := ParseApproval(b); err == nil {
			if strings.TrimSpace(in.Action) == "" {
				t.Fatal("empty action accepted")
			}
		} else if !strings.HasPrefix(err.Error(), "request_approval: ") {
			t.Fatalf("error %q does not name the tool", err)
		}
		if in, err := ParsePermission(b); err == nil {
			if strings.TrimSpace(in.ToolName) == "" || !json.Valid(in.Input) || !strings.HasPrefix(strings.TrimSpace(string(in.Input)), "{") {
				t.Fatalf("permission %+v accepted", in)
			}
		} else if !strings.HasPrefix(err.Error(), "permission_prompt: ") {
			t.Fatalf("error %q does not name the tool", err)
		}
	})
}
