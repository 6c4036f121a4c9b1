package policy_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/leashd/leashd/engine/policy"
)

// FuzzParse: any input is either a policy whose rules all carry a line and
// a known decision, or an error naming the source; never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(example))
	f.Add([]byte("rules:\n  - tool: Bash\n    decision: {quorum: 2}\n"))
	f.Add([]byte("rules: [{tool: '*', decision: deny}]\n"))
	f.Add([]byte("rules:\n  - &a {tool: Bash, decision: ask}\n  - *a\n"))
	f.Add([]byte("rules:\n  - tool: '[!a-'\n    command: '(?i'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := policy.Parse("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			if p != nil {
				t.Fatal("a policy and an error")
			}
			return
		}
		for i, r := range p.Rules() {
			if r.Line < 1 || r.Index != i+1 {
				t.Fatalf("rule %d has line %d index %d", i, r.Line, r.Index)
			}
			switch r.Decision {
			case policy.Allow, policy.Ask:
			case policy.Deny:
				if r.Reason == "" {
					t.Fatal("deny without a reason")
				}
			case policy.Quorum:
				if r.Quorum < 1 {
					t.Fatalf("quorum %d", r.Quorum)
				}
			default:
				t.Fatalf("decision %q", r.Decision)
			}
		}
		res := p.Evaluate(policy.Request{Tool: "Bash", Command: "git push && npm test", Paths: []string{"/a/b"}, Chat: "web:x", WorkDir: "/a"})
		if res.Rule == nil && res.Decision != policy.Ask {
			t.Fatalf("no rule but %q", res.Decision)
		}
	})
}

const fuzzPolicy = `rules:
  - tool: Bash
    command: '^npm test'
    decision: allow
  - tool: Bash
    command: '^git push'
    decision: deny
    reason: no pushing
  - tool: Bash
    command: 'curl'
    decision: {quorum: 2}
`

// FuzzEvaluateCommand: an allow never covers a command line with shell
// operators, and a git push anywhere in a line is denied.
func FuzzEvaluateCommand(f *testing.F) {
	for _, s := range []string{"npm test", "npm test && curl x | sh", "a; git push", "FOO=1 sudo git push", "echo $(git push)", "npm test\ngit push", "npm test `curl`"} {
		f.Add(s)
	}
	p, err := policy.Parse("fuzz.yaml", []byte(fuzzPolicy))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		res := p.Evaluate(policy.Request{Tool: "Bash", Command: cmd})
		if res.Decision == policy.Allow && policy.HasShellOperators(cmd) {
			t.Fatalf("allowed a compound command %q", cmd)
		}
		for _, c := range policy.Commands(cmd) {
			if strings.HasPrefix(c, "git push") && res.Decision != policy.Deny {
				t.Fatalf("%q runs %q but was decided %q", cmd, c, res.Decision)
			}
		}
	})
}

// FuzzGlob: compiling never panics; a glob without special characters
// matches exactly itself.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{{"*", "Bash"}, {"src/**/*.go", "src/a/b.go"}, {"[!a-c]x", "dx"}, {`\[`, "["}, {"[]-]", "-"}, {"**/", "a/"}, {"plain", "plain"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, name string) {
		re, err := policy.CompileGlob(glob)
		if err != nil {
			return
		}
		if !strings.ContainsAny(glob, `*?[\`) {
			if got := re.MatchString(name); got != (name == glob) {
				t.Fatalf("glob %q on %q: %v", glob, name, got)
			}
		}
		if strings.Contains(glob, "/") {
			return
		}
		// Without / in the glob, nothing with / matches unless the glob
		// has ** (only ** crosses /).
		if !strings.Contains(glob, "**") && strings.Contains(name, "/") && re.MatchString(name) {
			t.Fatalf("glob %q matched %q across /", glob, name)
		}
		_ = regexp.QuoteMeta(name)
	})
}
