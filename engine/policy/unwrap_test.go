package policy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/engine/policy"
)

// TestSplitUnwrapsWrappersWithTheirOptions: each line runs git push (or
// rm -rf /) behind a wrapper, a path or git's own options; Split finds
// the command under it.
func TestSplitUnwrapsWrappersWithTheirOptions(t *testing.T) {
	for line, want := range map[string]string{
		"sudo -u root git push":                  "git push",
		"sudo --user=deploy git push":            "git push",
		"sudo --user deploy -E git push":         "git push",
		"sudo -nuroot git push":                  "git push",
		"sudo -- git push":                       "git push",
		"doas -u root git push":                  "git push",
		"env -i git push":                        "git push",
		"env -u HOME -C /tmp A=1 git push":       "git push",
		"env --unset=HOME --chdir /tmp git push": "git push",
		"env - PATH=/bin git push":               "git push",
		"env -S 'git push' origin":               "git push origin",
		`FOO="a b" git push`:                     "git push",
		"FOO='a b' BAR=1 git push":               "git push",
		"command git push":                       "git push",
		"command -p git push":                    "git push",
		"builtin command git push":               "git push",
		"exec -a name git push":                  "git push",
		"exec -cl git push":                      "git push",
		"nice -n 5 git push":                     "git push",
		"nice -5 git push":                       "git push",
		"nice --adjustment=5 git push":           "git push",
		"nohup git push":                         "git push",
		"time git push":                          "git push",
		"time -p git push":                       "git push",
		"timeout 5 git push":                     "git push",
		"timeout -s KILL -k 1 5m git push":       "git push",
		"timeout --signal=TERM 5 git push":       "git push",
		"stdbuf -oL -e 0 git push":               "git push",
		"xargs git push":                         "git push",
		"xargs -0 -n 1 -I % git push":            "git push",
		"xargs -r --max-procs=4 git push":        "git push",
		`\git push`:                              "git push",
		`\rm -rf /`:                              "rm -rf /",
		"/bin/rm -rf /":                          "rm -rf /",
		"/usr/bin/sudo /usr/bin/git push":        "git push",
		`rm -rf "/"`:                             "rm -rf /",
		"git -C . push":                          "git push",
		"git --no-pager push":                    "git push",
		"git -c k=v -c user.name=x push":         "git push",
		"git --git-dir=.git --work-tree . push":  "git push",
		"git -P --no-optional-locks push":        "git push",
		"nohup nice -n 5 sudo -u x env -i FOO=1 timeout 5 git --no-pager push": "git push",
		"if git push": "git push",
		"! git push":  "git push",
		"sudo -v":     "sudo -v",
		"git status":  "git status",
	} {
		cmds, sure := policy.Split(line)
		assert.Equal(t, []string{want}, cmds, "%q", line)
		assert.True(t, sure, "%q is understood", line)
	}
}

// TestSplitIsUnsureOfWhatItDoesNotUnderstand: an open quote, an option a
// wrapper or git does not have, a missing argument: Split still finds
// what it can (for deny rules) but says it is unsure (so nothing is
// allowed).
func TestSplitIsUnsureOfWhatItDoesNotUnderstand(t *testing.T) {
	for line, want := range map[string]string{
		`echo "unclosed`:             "echo unclosed",
		"sudo --frobnicate git push": "git push",
		"sudo -X git push":           "git push",
		"env --nope git push":        "git push",
		"git --frobnicate push":      "git push",
		"git -Cdir push":             "git push",
		"timeout":                    "timeout",
		"sudo -u":                    "sudo -u",
		"doas --user root git push":  "root git push",
		"stdbuf --x=L git push":      "git push",
	} {
		cmds, sure := policy.Split(line)
		assert.Equal(t, []string{want}, cmds, "%q", line)
		assert.False(t, sure, "%q is not understood", line)
	}
}

// TestDenyRulesSeeThroughWrappersAndAllowRulesFailSafe: a deny on git
// push is not dodged by a wrapper with options, a path, a backslash or
// git's global options, even when a later rule allows everything; a line
// that is not understood is asked, never allowed.
func TestDenyRulesSeeThroughWrappersAndAllowRulesFailSafe(t *testing.T) {
	p := mustParse(t, `rules:
  - tool: Bash
    command: '^git push'
    decision: deny
    reason: Pushing is done by CI.
  - tool: Bash
    command: '^rm '
    decision: deny
    reason: no rm
  - tool: Bash
    command: '.*'
    decision: allow
`)
	for _, cmd := range []string{
		"sudo -u root git push", "env -i git push", `FOO="a b" git push`, "command git push",
		"exec -a name git push", "nice -n 5 git push", "timeout 5 git push", "xargs git push",
		`\rm -rf x`, "/bin/rm -rf x", "git -C . push", "git --no-pager push", "git -c k=v push",
		"nohup git push", "stdbuf -oL git push", "time git push", "doas git push", "env -u X git push",
		"sudo --user=x git push",
	} {
		res := p.Evaluate(policy.Request{Tool: "Bash", Command: cmd})
		assert.Equal(t, policy.Deny, res.Decision, "%q", cmd)
	}
	for _, cmd := range []string{`echo "unclosed`, "sudo --weird ls", "git --weird status"} {
		res := p.Evaluate(policy.Request{Tool: "Bash", Command: cmd})
		assert.Equal(t, policy.Ask, res.Decision, "%q is asked, not allowed", cmd)
	}
	assert.Equal(t, policy.Allow, p.Evaluate(policy.Request{Tool: "Bash", Command: "sudo -u root ls -la"}).Decision)
}
