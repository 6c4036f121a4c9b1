package archtest

import "testing"

// TestRuleHelpers pins down the helpers the rules are written with, so a
// rule that passes does so because the tree obeys it.
func TestRuleHelpers(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"engine", "engine", true},
		{"engine/agent/acp", "engine", true},
		{"enginetest", "engine", false},
		{"connectors/web", "connectors", true},
	} {
		if got := under(c.p, c.dir); got != c.want {
			t.Errorf("under(%q, %q) = %v, want %v", c.p, c.dir, got, c.want)
		}
	}
	for p, want := range map[string]string{
		"engine/agent/claude":               "claude",
		"engine/agent/claude/internal/wire": "claude",
		"engine/agent/internal/agentproc":   "",
		"engine/agent":                      "",
		"engine/approval":                   "",
	} {
		if got := agentOf(p); got != want {
			t.Errorf("agentOf(%q) = %q, want %q", p, got, want)
		}
	}
	for _, c := range []struct {
		text, name string
		want       bool
	}{
		{"Foo does it.", "Foo", true},
		{"A Foo is a thing.", "Foo", true},
		{"The Foo's part.", "Foo", true},
		{"Foo, when set, ...", "Foo", true},
		{"Foobar does it.", "Foo", false},
		{"A request made through Foo.", "Foo", false},
		{"foo does it.", "Foo", false},
		{"", "Foo", true},
	} {
		if got := startsWithName(c.text, c.name); got != c.want {
			t.Errorf("startsWithName(%q, %q) = %v, want %v", c.text, c.name, got, c.want)
		}
	}
	src := []byte("package x\n\n// Claude Code here.\nvar claudeX = \"CLAUDE\"\n\n// Claude alone is fine.\nvar y = 1\n")
	if got := claudeMentions(src); len(got) != 3 {
		t.Errorf("claudeMentions found %v, want the comment, the identifier and the string", got)
	}
}
