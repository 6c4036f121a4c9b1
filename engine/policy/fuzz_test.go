package policy_test

import (
	"regexp"
	"slices"
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

// splitWrappers put a command behind a wrapper, with options.
var splitWrappers = []string{
	"sudo -u root ", "sudo --user=x -E ", "doas -u x ", "env -i FOO=1 ", "env -u X -- ", `FOO="a b" `,
	"command ", "command -p ", "builtin ", "exec -a name ", "nice -n 5 ", "nice -5 ", "nohup ", "time -p ",
	"timeout 5 ", "timeout -s KILL 1m ", "stdbuf -oL ", "xargs -0 -n 1 ", "! ", "env -S 'nice -n 1' ",
}

// shellKeywords are keywords only as they are: /usr/bin/if is a command.
var shellKeywords = []string{"if", "then", "else", "elif", "do", "while", "until"}

var plainWord = regexp.MustCompile(`\A[A-Za-z][A-Za-z0-9_.-]*(\s|\z)`)

// FuzzSplit: Split never panics; a line it understands as one command is
// understood as the same command behind every wrapper of splitWrappers,
// and, when it starts with a plain word, with a directory or a backslash
// before it; anything the policy allows has no shell operators and is
// understood; a git push found under any wrapper is denied.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"git push", "git -C . -c a=b --no-pager push origin", `rm -rf "/"`, `FOO='a b' ls`,
		"sudo -nu root git push", "env -S 'git push' x", `echo "unclosed`, "xargs -I % git push", "sudo -v",
		`\rm x`, "/bin/rm x", "nice --10 ls", "git --frobnicate push", "timeout", "if git push"} {
		f.Add(s)
	}
	p, err := policy.Parse("fuzz.yaml", []byte(fuzzPolicy+"  - tool: Bash\n    command: '.*'\n    decision: allow\n"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmds, sure := policy.Split(line)
		res := p.Evaluate(policy.Request{Tool: "Bash", Command: line})
		if res.Decision == policy.Allow && (!sure || policy.HasShellOperators(line)) {
			t.Fatalf("allowed %q (understood: %v)", line, sure)
		}
		for _, c := range cmds {
			if strings.HasPrefix(c, "git push") && res.Decision != policy.Deny {
				t.Fatalf("%q runs %q but was decided %q", line, c, res.Decision)
			}
		}
		if !sure || len(cmds) != 1 || strings.ContainsAny(line, ";&|`$<>\n\r(){}") {
			return
		}
		if ws, _ := policy.Words(line); len(ws) == 0 || strings.HasPrefix(ws[0], "-") {
			return // an option of the wrapper put before it
		}
		forms := slices.Clone(splitWrappers)
		if plainWord.MatchString(line) && !slices.Contains(shellKeywords, strings.Fields(line)[0]) {
			forms = append(forms, `\`, "/usr/bin/", "./")
		}
		for _, w := range forms {
			got, ok := policy.Split(w + line)
			if !ok || !slices.Equal(got, cmds) {
				t.Fatalf("%q is %q, but %q is %q (understood: %v)", line, cmds, w+line, got, ok)
			}
		}
	})
}
