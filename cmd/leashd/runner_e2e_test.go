package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/config/testenv/netns"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

const (
	runnerToken    = "runner-secret-7d1e93ab42c05f68"
	runnersWebAuth = "runners-web-token-0a9c4e1f7b"
)

// fleet is a leashd server with no local agents and real `leashd runner`
// processes, each in its own network namespace, running the real Claude
// Code CLI against the fake API.
type fleet struct {
	url    string // the server's URL for the test (loopback)
	port   string
	api    *fakeapi.Server
	claude string
	logs   *testenv.Buffer
	stop   func() error

	mu   sync.Mutex
	jobs []bashJob // newest last
}

// bashJob is a prompt the fake model answers with a Bash call, then with
// "wrote it" once it has the call's result.
type bashJob struct{ file, toolID string }

// reply is the fake model: the newest job the conversation asked for
// decides (a chat's later prompt comes after its earlier ones).
func (f *fleet) reply(req *fakeapi.Request) fakeapi.Reply {
	f.mu.Lock()
	jobs := slices.Clone(f.jobs)
	f.mu.Unlock()
	for i := len(jobs) - 1; i >= 0; i-- {
		j := jobs[i]
		if _, ok := req.ToolResult(j.toolID); ok {
			return fakeapi.Text("wrote it")
		}
		if req.HasUserText("write " + j.file) {
			return fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: j.toolID, Name: "Bash", Input: map[string]string{
				"command": "echo done > " + j.file + " && cat " + j.file, "description": "write the file"}}}}
		}
	}
	return fakeapi.Text("ok")
}

type runnerProc struct {
	name    string
	ns      *netns.NS
	cmd     *exec.Cmd
	workdir string
	logs    *testenv.Buffer
}

func startFleet(t *testing.T, grace int) *fleet {
	t.Helper()
	f := &fleet{}
	return startFleetWith(t, f, f.reply, fmt.Sprintf("LEASHD_RUNNER_GRACE_SECONDS=%d", grace))
}

// startFleetWith starts f's server (no local agents, runners welcome)
// with the fake model playing reply and env on top.
func startFleetWith(t *testing.T, f *fleet, reply func(*fakeapi.Request) fakeapi.Reply, env ...string) *fleet {
	t.Helper()
	f.claude = testenv.Claude(t)
	f.api = fakeapi.New(t)
	f.api.Otherwise(reply)
	url, logs, stop := startServe(t, testenv.PrivateDir(t), append([]string{
		"LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH=claude-is-on-the-runners",
		"LEASHD_WEB_ADDR=0.0.0.0:0", "LEASHD_WEB_TOKEN=" + runnersWebAuth,
		"LEASHD_RUNNER_TOKENS=" + runnerToken, "LEASHD_LOCAL_AGENTS=0",
		"LEASHD_MAX_CONCURRENT_AGENTS=8"}, env...)...)
	t.Cleanup(func() { _ = stop() })
	_, f.port, _ = net.SplitHostPort(strings.TrimPrefix(url, "http://"))
	f.url = "http://127.0.0.1:" + f.port
	tokens.Set(f.url, runnersWebAuth)
	f.logs, f.stop = logs, stop
	return f
}

// runner starts `leashd runner` (this test binary running main) in a new
// namespace; it reaches the server and the fake API only over the
// namespace's link.
func (f *fleet) runner(t *testing.T, name string, maxAgents int, token string) *runnerProc {
	t.Helper()
	ns := netns.New(t)
	apiAddr := ns.Forward(t, strings.TrimPrefix(f.api.URL, "http://"))
	home, work := removedLater(t), removedLater(t)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LEASHD_") {
			env = append(env, kv)
		}
	}
	for _, kv := range f.api.Env(home) {
		if strings.HasPrefix(kv, "ANTHROPIC_BASE_URL=") {
			kv = "ANTHROPIC_BASE_URL=http://" + apiAddr
		}
		env = append(env, kv)
	}
	env = append(env, runMainEnv+"=1",
		runMainArgs+"="+fmt.Sprintf("runner --server http://%s:%s --token %s --name %s --max-agents %d --workdir %s",
			ns.HostIP, f.port, token, name, maxAgents, work),
		"LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH="+f.claude, "LEASHD_SANDBOX=off", "LEASHD_AGENT_ENV=DISABLE_*",
		"LEASHD_LOG_LEVEL=debug", "XDG_STATE_HOME="+testenv.PrivateDir(t))
	r := &runnerProc{name: name, ns: ns, workdir: work, logs: &testenv.Buffer{}}
	r.cmd = ns.Command(t.Context(), os.Args[0], "-test.run=^$")
	r.cmd.Env, r.cmd.Stdout, r.cmd.Stderr = env, r.logs, r.logs
	require.NoError(t, r.cmd.Start())
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		_ = r.cmd.Wait()
		if t.Failed() {
			t.Logf("runner %s log:\n%s", name, r.logs)
		}
	})
	return r
}

// removedLater is a directory removed after the test (after the runner
// that uses it has stopped: cleanups run last first), retrying for a
// while: a CLI the stopping runner ended may still be writing its files
// there as it exits on a busy machine, which t.TempDir's cleanup reports
// as a failure.
func removedLater(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "leashd-runner-")
	require.NoError(t, err)
	t.Cleanup(func() {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			err := os.RemoveAll(dir)
			if err == nil || time.Now().After(deadline) {
				assert.NoError(t, err, "removing a runner's directory")
				return
			}
		}
	})
	return dir
}

// runnerView is a runner as GET /api/runners lists it.
type runnerView struct {
	Name      string   `json:"name"`
	Agents    int      `json:"agents"`
	Connected bool     `json:"connected"`
	Chats     []string `json:"chats"`
}

func (f *fleet) runners(t *testing.T) map[string]runnerView {
	t.Helper()
	var out struct {
		Runners []runnerView `json:"runners"`
	}
	require.Equal(t, http.StatusOK, getJSON(t, f.url+"/api/runners", &out))
	m := map[string]runnerView{}
	for _, r := range out.Runners {
		m[r.Name] = r
	}
	return m
}

func (f *fleet) waitRunner(t *testing.T, name string, cond func(runnerView) bool, what string) {
	t.Helper()
	require.Eventually(t, func() bool {
		r, ok := f.runners(t)[name]
		return cond(r) && (ok || !r.Connected)
	}, 90*time.Second, 50*time.Millisecond, "runner %s: %s; server log:\n%s", name, what, f.logs)
}

func connected(r runnerView) bool { return r.Connected }

// askBash sends a prompt whose model reply is a Bash call that writes a
// file (so the CLI asks), and waits for the approval.
func (f *fleet) askBash(t *testing.T, chat, file, toolID string) pendingView {
	t.Helper()
	f.postBash(t, chat, file, toolID)
	return f.waitBash(t, chat)
}

// postBash sends the prompt of askBash without waiting for the approval.
func (f *fleet) postBash(t *testing.T, chat, file, toolID string) {
	t.Helper()
	f.mu.Lock()
	f.jobs = append(f.jobs, bashJob{file: file, toolID: toolID})
	f.mu.Unlock()
	code, body := postJSON(t, f.url+"/api/chats/"+chat+"/messages", `{"text":"write `+file+`"}`)
	require.Equal(t, http.StatusAccepted, code, body)
}

// waitBash waits for a Bash approval in chat.
func (f *fleet) waitBash(t *testing.T, chat string) pendingView {
	t.Helper()
	var found pendingView
	require.Eventually(t, func() bool {
		var list []pendingView
		getJSON(t, f.url+"/api/interactions?chat="+chat, &list)
		for _, p := range list {
			if p.ToolName == "Bash" && !p.Interrupted {
				found = p
				return true
			}
		}
		return false
	}, 120*time.Second, 50*time.Millisecond, "no Bash approval in %s; server log:\n%s", chat, f.logs)
	return found
}

func (f *fleet) allow(t *testing.T, p pendingView) {
	t.Helper()
	code, body := postJSON(t, f.url+"/api/interactions/"+p.ID+"/reply", `{"answers":[["allow"]]}`)
	require.Equal(t, http.StatusNoContent, code, body)
}

var pidOnRunner = regexp.MustCompile(`msg="agent started" id=\S+ chat=(\S+) pid=(\d+)`)

// TestChatsSpreadOverRunnersAndApprovalsReachThem: two chats on two
// runners (one agent each); each chat's Bash approval, answered on the
// web, reaches the CLI on its runner, which writes the file in the
// runner's working directory.
func TestChatsSpreadOverRunnersAndApprovalsReachThem(t *testing.T) {
	f := startFleet(t, 30)
	r1 := f.runner(t, "r1", 1, runnerToken)
	r2 := f.runner(t, "r2", 1, runnerToken)
	f.waitRunner(t, "r1", connected, "connected")
	f.waitRunner(t, "r2", connected, "connected")

	pa := f.askBash(t, "web:a", "a.txt", "toolu_a")
	pb := f.askBash(t, "web:b", "b.txt", "toolu_b")
	rs := f.runners(t)
	assert.Equal(t, 1, rs["r1"].Agents)
	assert.Equal(t, 1, rs["r2"].Agents)
	assert.ElementsMatch(t, []string{"web:a", "web:b"}, append(rs["r1"].Chats, rs["r2"].Chats...))

	// Where each chat runs: /status in the chat, /metrics, and the list
	// needs the API's token.
	code, body := postJSON(t, f.url+"/api/chats/web:a/messages", `{"text":"/status"}`)
	require.Equal(t, http.StatusAccepted, code, body)
	waitEvent(t, f.url, "web:a", fmt.Sprintf(`Runner: %s (connected, 1 of 1 agents)`, f.runnerOf(t, "web:a")))
	metricsText := get(t, f.url+"/metrics")
	assert.Contains(t, metricsText, `leashd_runner_agents{runner="r1"} 1`)
	assert.Contains(t, metricsText, `leashd_runner_connected{runner="r2"} 1`)
	resp, err := http.Get(f.url + "/api/runners")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "GET /api/runners without the API's token")

	f.allow(t, pa)
	f.allow(t, pb)
	assert.Equal(t, "done", strings.TrimSpace(toolOutput(t, f.api, "toolu_a")))
	assert.Equal(t, "done", strings.TrimSpace(toolOutput(t, f.api, "toolu_b")))
	waitEvent(t, f.url, "web:a", "wrote it")
	waitEvent(t, f.url, "web:b", "wrote it")
	wrote := func(name string) string {
		for _, r := range []*runnerProc{r1, r2} {
			if _, err := os.Stat(filepath.Join(r.workdir, name)); err == nil {
				return r.name
			}
		}
		return ""
	}
	assert.NotEmpty(t, wrote("a.txt"), "a.txt is in a runner's working directory")
	assert.NotEmpty(t, wrote("b.txt"))
	assert.NotEqual(t, wrote("a.txt"), wrote("b.txt"), "the chats ran on different runners")
}

// runnerOf is the runner a chat's agent runs on now ("" for none).
func (f *fleet) runnerOf(t *testing.T, chat string) string {
	t.Helper()
	for name, r := range f.runners(t) {
		if slices.Contains(r.Chats, chat) {
			return name
		}
	}
	return ""
}

// TestRunnerKilledMidTurnIsToldAndTheNextPromptRunsElsewhere: the runner
// holding a chat's agent (waiting for an approval) is SIGKILLed; after the
// grace period the chat is told which runner was lost, the approval ends
// saying so, and the next prompt runs on the other runner.
func TestRunnerKilledMidTurnIsToldAndTheNextPromptRunsElsewhere(t *testing.T) {
	f := startFleet(t, 3)
	r1 := f.runner(t, "r1", 1, runnerToken)
	f.waitRunner(t, "r1", connected, "connected")
	p := f.askBash(t, "web:k", "k.txt", "toolu_k")
	require.Equal(t, "r1", f.runnerOf(t, "web:k"))
	r2 := f.runner(t, "r2", 1, runnerToken)
	f.waitRunner(t, "r2", connected, "connected")

	require.NoError(t, r1.cmd.Process.Signal(syscall.SIGKILL))
	waitEvent(t, f.url, "web:k", "Runner r1 was lost")
	// The approval's message says which runner took it, not a generic
	// "the agent stopped".
	waitEvent(t, f.url, "web:k", `"text":"Runner r1 was lost (disconnected for longer than LEASHD_RUNNER_GRACE_SECONDS); this request ended with its agent.`)
	require.Eventually(t, func() bool {
		var list []pendingView
		getJSON(t, f.url+"/api/interactions?chat=web:k", &list)
		return !slices.ContainsFunc(list, func(q pendingView) bool { return q.ID == p.ID })
	}, 60*time.Second, 50*time.Millisecond, "the approval still waits for the lost agent")
	_, ok := f.runners(t)["r1"]
	assert.False(t, ok, "the lost runner is no longer listed")

	p2 := f.askBash(t, "web:k", "k2.txt", "toolu_k2")
	assert.Equal(t, "r2", f.runnerOf(t, "web:k"))
	f.allow(t, p2)
	assert.Equal(t, "done", strings.TrimSpace(toolOutput(t, f.api, "toolu_k2")))
	_, err := os.Stat(filepath.Join(r2.workdir, "k2.txt"))
	assert.NoError(t, err, "the command ran on r2")
}

// TestFullRunnersQueueChats: with no local agents and the one runner's
// one slot busy, new chats queue and are told their place; a runner
// connecting starts the first, the busy one finishing starts the next.
func TestFullRunnersQueueChats(t *testing.T) {
	f := startFleet(t, 30)
	r1 := f.runner(t, "r1", 1, runnerToken)
	f.waitRunner(t, "r1", connected, "connected")
	pa := f.askBash(t, "web:qa", "qa.txt", "toolu_qa")

	f.postBash(t, "web:qb", "qb.txt", "toolu_qb")
	waitEvent(t, f.url, "web:qb", "All 1 agent slots (on the runners and this server) are busy; you are number 1 in the queue. Your prompt runs as soon as one frees up or another runner connects.")
	f.postBash(t, "web:qc", "qc.txt", "toolu_qc")
	waitEvent(t, f.url, "web:qc", "you are number 2 in the queue")

	r2 := f.runner(t, "r2", 1, runnerToken)
	pb := f.waitBash(t, "web:qb")
	assert.Equal(t, "r2", f.runnerOf(t, "web:qb"), "the runner that connected took the first in the queue")
	f.allow(t, pa)
	waitEvent(t, f.url, "web:qa", "wrote it")
	pc := f.waitBash(t, "web:qc")
	assert.Equal(t, "r1", f.runnerOf(t, "web:qc"), "the slot web:qa's agent freed")
	f.allow(t, pb)
	f.allow(t, pc)
	waitEvent(t, f.url, "web:qb", "wrote it")
	waitEvent(t, f.url, "web:qc", "wrote it")
	for file, r := range map[string]*runnerProc{"qa.txt": r1, "qb.txt": r2, "qc.txt": r1} {
		_, err := os.Stat(filepath.Join(r.workdir, file))
		assert.NoError(t, err, "%s on %s", file, r.name)
	}
}

// TestLinkDownShorterThanGraceCarriesOn: the runner's link is down for a
// few seconds while its agent waits for an approval; the answer given
// after it is back reaches the same agent.
func TestLinkDownShorterThanGraceCarriesOn(t *testing.T) {
	f := startFleet(t, 60)
	r1 := f.runner(t, "r1", 1, runnerToken)
	f.waitRunner(t, "r1", connected, "connected")
	p := f.askBash(t, "web:l", "l.txt", "toolu_l")
	pid := pidOnRunner.FindStringSubmatch(r1.logs.String())
	require.NotNil(t, pid)
	r1.ns.SetLink(t, false)
	time.Sleep(3 * time.Second) // the cut to test, not a wait for a condition
	r1.ns.SetLink(t, true)
	f.allow(t, p)
	assert.Equal(t, "done", strings.TrimSpace(toolOutput(t, f.api, "toolu_l")))
	waitEvent(t, f.url, "web:l", "wrote it")
	assert.Len(t, pidOnRunner.FindAllString(r1.logs.String(), -1), 1, "the same agent finished the turn")
	assert.NotContains(t, f.logs.String(), "runner lost")
}

// TestLinkDownLongerThanGraceIsLost: the link stays down until the server
// gives the runner up: the chat is told, and the runner, back, carries
// on with a fresh registration.
func TestLinkDownLongerThanGraceIsLost(t *testing.T) {
	f := startFleet(t, 2)
	r1 := f.runner(t, "r1", 1, runnerToken)
	f.waitRunner(t, "r1", connected, "connected")
	f.askBash(t, "web:d", "d.txt", "toolu_d")
	r1.ns.SetLink(t, false)
	// The server notices a silent link by its keepalives (within 25 s).
	require.Eventually(t, func() bool { return strings.Contains(f.logs.String(), "runner lost") },
		120*time.Second, 100*time.Millisecond, "the runner never given up; server log:\n%s", f.logs)
	waitEvent(t, f.url, "web:d", "Runner r1 was lost")
	r1.ns.SetLink(t, true)
	f.waitRunner(t, "r1", connected, "connected again")
	p := f.askBash(t, "web:d", "d2.txt", "toolu_d2")
	f.allow(t, p)
	assert.Equal(t, "done", strings.TrimSpace(toolOutput(t, f.api, "toolu_d2")))
}

// TestRunnerWithAWrongTokenIsRefused: the runner says to check its token,
// the server logs the refusal without the token, and lists no runner.
func TestRunnerWithAWrongTokenIsRefused(t *testing.T) {
	f := startFleet(t, 30)
	r := f.runner(t, "bad", 1, "not-the-runner-secret-123")
	require.Eventually(t, func() bool {
		return strings.Contains(r.logs.String(), "check --token against the server's LEASHD_RUNNER_TOKENS")
	}, 60*time.Second, 50*time.Millisecond, "runner log:\n%s", r.logs)
	assert.Contains(t, f.logs.String(), "a runner was refused: wrong or missing token")
	assert.NotContains(t, f.logs.String(), "not-the-runner-secret-123")
	assert.Empty(t, f.runners(t))
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := api.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// TestRunnerSettingsAreChecked: `leashd runner` names what is wrong with
// its server URL, token and name before dialing anything.
func TestRunnerSettingsAreChecked(t *testing.T) {
	cleanEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"runner", "--token", runnerToken}, `LEASHD_RUNNER_SERVER="" (--server): accepted: the server's http:// or https:// URL`},
		{[]string{"runner", "--server", "ftp://x", "--token", runnerToken}, `accepted: the server's http:// or https:// URL`},
		{[]string{"runner", "--server", "https://x", "--token", "CHANGE-ME"}, "shorter than 16 characters"},
		{[]string{"runner", "--server", "https://x", "--token", runnerToken, "--name", "a b"}, `accepted are letters, digits`},
		{[]string{"runner", "--server", "https://x", "--token", runnerToken, "--labels", "ok,b/d"}, `label "b/d"`},
	} {
		err := run(t.Context(), tc.args, nil, io.Discard, io.Discard)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want, "%v", tc.args)
	}
}
