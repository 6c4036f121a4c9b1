package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/policy"
)

const demoPolicy = `rules:
  - name: no echo
    tool: Bash
    command: '^echo\b'
    decision: deny
    reason: The demo may not echo.
  - tool: Write
    path: '*.txt'
    decision: {quorum: 2}
`

func writePolicy(t *testing.T, dir, src string) string {
	t.Helper()
	file := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o600))
	return file
}

func TestPolicyCheck(t *testing.T) {
	cleanEnv(t)
	t.Setenv("LEASHD_WEB_TOKEN", "x") // invalid configuration: policy needs none
	dir := testenv.PrivateDir(t)
	file := writePolicy(t, dir, demoPolicy)
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"policy", "check", file}, nil, &out, io.Discard))
	assert.Equal(t, file+": valid, 2 rules (the first matching rule decides; no match: ask)\n"+
		`  rule 1 "no echo" (line 2): tool Bash, command /^echo\b/ → deny: The demo may not echo.`+"\n"+
		"  rule 2 (line 7): tool Write, path *.txt → quorum 2 (put to people: 2 different approvers must approve; in a chat of one person it is denied)\n", out.String())

	bad := writePolicy(t, testenv.PrivateDir(t), "rules:\n  - tool: Bash\n    command: '(unclosed'\n    decision: deny\n    reason: x\n")
	err := run(t.Context(), []string{"policy", "check", bad}, nil, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad+":3: rule 1: command: not a regular expression")

	var stderr bytes.Buffer
	assert.ErrorIs(t, run(t.Context(), []string{"policy", "check"}, nil, io.Discard, &stderr), errUsage)
	assert.Contains(t, stderr.String(), "give exactly one policy file")
	stderr.Reset()
	assert.ErrorIs(t, run(t.Context(), []string{"policy", "lint", file}, nil, io.Discard, &stderr), errUsage)
	assert.Contains(t, stderr.String(), `unknown command "lint" (accepted: check, test)`)
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"policy", "-h"}, nil, &out, io.Discard))
	assert.Contains(t, out.String(), "leashd policy test FILE --tool T")
}

func TestPolicyTestShowsTheDecidingRule(t *testing.T) {
	cleanEnv(t)
	dir := testenv.PrivateDir(t)
	file := writePolicy(t, dir, demoPolicy+"  - tool: Bash\n    command: '^npm test$'\n    decision: allow\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{file, "--tool", "Bash", "--command", "echo hi"}, `rule 1 "no echo" (line 2) decides: deny: The demo may not echo.` + "\n"},
		{[]string{file, "--tool", "Bash", "--command", "make && echo hi"}, `rule 1 "no echo" (line 2) decides: deny: The demo may not echo.` + "\n" +
			`  deny, ask and quorum rules also see: "make", "echo hi"` + "\n"},
		{[]string{file, "--tool", "Bash", "--command", "sudo -u root nice -n 5 /bin/echo hi"}, `rule 1 "no echo" (line 2) decides: deny: The demo may not echo.` + "\n" +
			`  deny, ask and quorum rules also see: "echo hi"` + "\n"},
		{[]string{file, "--tool", "Bash", "--command", "sudo --frobnicate npm test"}, "no rule matches: ask (the request is put to people as usual)\n" +
			`  deny, ask and quorum rules also see: "npm test"` + "\n" +
			"  (not fully understood: an open quote, or an option a wrapper or git does not have; allow rules do not match it)\n"},
		{[]string{"--tool", "Write", "--path", filepath.Join(dir, "a.txt"), "--workdir", dir, file}, "rule 2 (line 7) decides: quorum 2 (put to people: 2 different approvers must approve; in a chat of one person it is denied)\n"},
		{[]string{file, "--tool", "Bash", "--command", "npm test"}, "rule 3 (line 10) decides: allow (runs without asking)\n  (allow rules match only a single command without shell operators)\n"},
		{[]string{file, "--tool", "Bash", "--command", "npm test && curl x | sh"}, "no rule matches: ask (the request is put to people as usual)\n" +
			`  deny, ask and quorum rules also see: "npm test", "curl x", "sh"` + "\n"},
		{[]string{file, "--tool", "Read", "--path", "/etc/passwd"}, "no rule matches: ask (the request is put to people as usual)\n"},
	} {
		var out bytes.Buffer
		require.NoError(t, run(t.Context(), append([]string{"policy", "test"}, c.args...), nil, &out, io.Discard), "%q", c.args)
		assert.Equal(t, c.want, out.String(), "%q", c.args)
	}

	var stderr bytes.Buffer
	err := run(t.Context(), []string{"policy", "test", file, "--command", "git push"}, nil, io.Discard, &stderr)
	assert.ErrorIs(t, err, errUsage)
	assert.Contains(t, stderr.String(), "--tool is missing or empty")
}

func TestParsePolicyTestArgs(t *testing.T) {
	a, err := parsePolicyTestArgs([]string{"p.yaml", "--tool", "Edit", "--path", "a", "--path", "b", "--chat", "web:1"}, "/w")
	require.NoError(t, err)
	assert.Equal(t, "p.yaml", a.file)
	assert.Equal(t, policy.Request{Tool: "Edit", Paths: []string{"a", "b"}, Chat: "web:1", WorkDir: "/w"}, a.req)
	for args, want := range map[string]string{
		"--tool Bash":                 "no policy file given",
		"p.yaml --tool Bash git push": `unexpected argument "git"`,
		"p.yaml --tool":               "flag needs an argument: -tool",
		"p.yaml --tool Bash --path=":  "--path is empty",
		"p.yaml --frob":               "flag provided but not defined: -frob",
	} {
		_, err := parsePolicyTestArgs(strings.Fields(args), "")
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), want, args)
	}
}

// FuzzPolicyArgs: any command line either parses into a request with a
// tool and a file, or fails with an error saying what was wrong.
func FuzzPolicyArgs(f *testing.F) {
	for _, seed := range [][4]string{
		{"p.yaml", "--tool", "Bash", "--command=git push"},
		{"--tool=Write", "--path", "a.txt", "p.yaml"},
		{"p.yaml", "--tool", "", ""},
		{"-h", "", "", ""},
		{"--chat=", "--workdir", "/w", "x"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		got, err := parsePolicyTestArgs([]string{a, b, c, d}, "/w")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if strings.TrimSpace(got.file) == "" || strings.TrimSpace(got.req.Tool) == "" {
			t.Fatalf("accepted without a file or tool: %+v", got)
		}
		for _, p := range got.req.Paths {
			if p == "" {
				t.Fatal("empty path accepted")
			}
		}
	})
}

func TestServeRefusesABadPolicy(t *testing.T) {
	cleanEnv(t)
	dir := testenv.PrivateDir(t)
	file := writePolicy(t, dir, "rules:\n  - tool: Bash\n    decision: allow\n  - tool: Write\n    decision: {quorum: 0}\n")
	t.Setenv("LEASHD_AGENT", "demo")
	t.Setenv("LEASHD_WEB_ADDR", "127.0.0.1:0")
	t.Setenv("LEASHD_DB_PATH", filepath.Join(dir, "leashd.db"))
	t.Setenv("LEASHD_POLICY_FILE", file)
	err := run(t.Context(), nil, nil, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LEASHD_POLICY_FILE: "+file+":5: rule 2: decision: quorum \"0\"")
}

// Through the demo agent served over the web API: the policy denies its
// command (the chat sees which rule, nobody is asked) and requires a
// quorum for its write, which the page's one-person chat cannot meet (so
// it is denied at once); `leashd audit` shows both as decided by policy.
func TestServePolicyThroughTheDemoAgent(t *testing.T) {
	dir := testenv.PrivateDir(t)
	file := writePolicy(t, dir, demoPolicy)
	url, logs, stop := startServe(t, dir, "LEASHD_POLICY_FILE="+file)
	assert.Contains(t, logs.String(), "approval policy in force")

	const chat = "web:policy"
	code, body := postJSON(t, url+"/api/chats/"+chat+"/messages", `{"text":"edit and bash"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	// The web page is one approver: a quorum of two cannot be met in its
	// chat, so the write is denied at once, naming the rule.
	waitEvent(t, url, chat, `Denied by policy rule 2 (line 7): it needs 2 approvers and this chat has one person`)
	var list []struct {
		ID string `json:"interaction_id"`
	}
	waitEvent(t, url, chat, `Denied by policy rule 1 \"no echo\" (line 2): The demo may not echo.`)
	waitEvent(t, url, chat, "Bash `echo hello` denied: Denied by leashd policy rule 1")
	getJSON(t, url+"/api/interactions?chat="+chat, &list)
	assert.Empty(t, list, "the denied command was not put to anyone")
	require.NoError(t, stop())

	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"audit", "--json", "--chat", chat}, nil, &out, io.Discard))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2, out.String())
	var row struct {
		ToolName string `json:"tool_name"`
		Status   string `json:"status"`
		Decision string `json:"decision"`
		By       string `json:"by"`
		Text     string `json:"text"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &row))
	assert.Equal(t, "Write", row.ToolName)
	assert.Equal(t, "rejected", row.Status)
	assert.Equal(t, "policy", row.By)
	assert.Contains(t, row.Text, "denied by policy rule 2 (line 7): it needs 2 approvers")
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &row))
	assert.Equal(t, "Bash", row.ToolName)
	assert.Equal(t, "rejected", row.Status)
	assert.Equal(t, "deny", row.Decision)
	assert.Equal(t, "policy", row.By)
	assert.Equal(t, `denied by policy rule 1 "no echo" (line 2): The demo may not echo.`, row.Text)
}

// SIGHUP reloads the policy in a running leashd: a bad file keeps the
// policy in force and logs an ERROR naming the line; a good one applies
// to the next request.
func TestServeReloadsThePolicyOnSIGHUP(t *testing.T) {
	cleanEnv(t)
	dir := testenv.PrivateDir(t)
	file := writePolicy(t, dir, "rules:\n  - tool: Bash\n    decision: allow\n")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainArgs+"=",
		"LEASHD_AGENT=demo", "LEASHD_WEB_ADDR=127.0.0.1:0", "LEASHD_POLICY_FILE="+file,
		"LEASHD_DB_PATH="+filepath.Join(dir, "leashd.db"), "LEASHD_WORKDIR="+dir)
	logs := &testenv.Buffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	waitLog := func(s string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(logs.String(), s) },
			10*time.Second, 10*time.Millisecond, "no %q in the log: %s", s, logs)
	}
	waitLog("leashd web UI at")
	url := webURL.FindStringSubmatch(logs.String())[1]
	useToken(t, url, dir)

	require.NoError(t, os.WriteFile(file, []byte("rules:\n  - tool: Bash\n    decision: deny\n"), 0o600))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	waitLog("level=ERROR msg=\"policy not reloaded; the previous policy stays in force\"")
	assert.Contains(t, logs.String(), file+":3: rule 1: decision: deny needs reason:")

	code, body := postJSON(t, url+"/api/chats/web:a/messages", `{"text":"bash"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	waitEvent(t, url, "web:a", "Bash `echo hello` allowed")

	require.NoError(t, os.WriteFile(file, []byte("rules:\n  - tool: Bash\n    decision: deny\n    reason: Frozen.\n"), 0o600))
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	waitLog("msg=\"policy reloaded\"")
	code, body = postJSON(t, url+"/api/chats/web:b/messages", `{"text":"bash"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	waitEvent(t, url, "web:b", "Denied by leashd policy rule 1 (line 2): Frozen.")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "log: %s", logs)
}

func TestReloadPolicyOnKeepsTheOldPolicy(t *testing.T) {
	dir := testenv.PrivateDir(t)
	file := writePolicy(t, dir, "rules:\n  - tool: Bash\n    decision: allow\n")
	h, err := loadPolicy(configWithPolicy(file))
	require.NoError(t, err)
	old := h.Policy()
	var logs testenv.Buffer
	sig := make(chan os.Signal)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); reloadPolicyOn(ctx, sig, h, slog.New(slog.NewTextHandler(&logs, nil))) }()
	require.NoError(t, os.WriteFile(file, []byte("rules:\n  - tool: Bash\n    decision: {quorum: -1}\n"), 0o600))
	sig <- syscall.SIGHUP
	sig <- syscall.SIGHUP // the first was handled once this one is taken
	assert.Same(t, old, h.Policy())
	assert.Contains(t, logs.String(), file+":3: rule 1: decision: quorum")
	cancel()
	<-done
}

func configWithPolicy(file string) config.Config { return config.Config{PolicyFile: file} }

// The README's example policy is valid and decides as the README says.
func TestReadmePolicyExample(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## Policies\n")
	require.True(t, ok, "README has a Policies section")
	_, rest, ok := strings.Cut(section, "```yaml\n")
	require.True(t, ok)
	src, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	file := writePolicy(t, testenv.PrivateDir(t), src)
	var out bytes.Buffer
	require.Contains(t, section, "`^git push` also denies `make && sudo -u root /usr/bin/git -C . push`")
	require.NoError(t, run(t.Context(), []string{"policy", "test", file, "--tool", "Bash", "--command", "make && sudo -u root /usr/bin/git -C . push"}, nil, &out, io.Discard))
	assert.Equal(t, `rule 1 "no pushing" (line 2) decides: deny: Pushing is done by CI.`+"\n"+
		`  deny, ask and quorum rules also see: "make", "git push"`+"\n", out.String())
	assert.Contains(t, section, `Denied by leashd policy rule 1 "no pushing" (line 2): Pushing is
  done by CI.`, "the README quotes what the agent reads")
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"policy", "test", file, "--tool", "Write", "--path", "deploy/app.yaml"}, nil, &out, io.Discard))
	assert.Contains(t, out.String(), "rule 3 (line 10) decides: quorum 2")
}
