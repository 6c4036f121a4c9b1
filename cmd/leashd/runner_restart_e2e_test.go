package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// serverProc is the leashd server as its own process (this test binary
// running main), on a fixed port so that runners find it again after a
// restart, on one database.
type serverProc struct {
	dir, port string
	cmd       *exec.Cmd
	logs      *testenv.Buffer
	all       *testenv.Buffer // every run's log, for a failure
}

func startServerProc(t *testing.T, dir, port string) *serverProc {
	t.Helper()
	s := &serverProc{dir: dir, port: port, all: &testenv.Buffer{}}
	s.start(t)
	t.Cleanup(func() {
		s.stop(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("server log:\n%s", s.all)
		}
	})
	return s
}

func (s *serverProc) start(t *testing.T) {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LEASHD_") {
			env = append(env, kv)
		}
	}
	env = append(env, runMainEnv+"=1", runMainArgs+"=",
		"LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH=claude-is-on-the-runners",
		"LEASHD_WEB_ADDR=0.0.0.0:"+s.port, "LEASHD_WEB_TOKEN="+runnersWebAuth,
		"LEASHD_RUNNER_TOKENS="+runnerToken, "LEASHD_LOCAL_AGENTS=0", "LEASHD_RUNNER_GRACE_SECONDS=60",
		"LEASHD_DB_PATH="+filepath.Join(s.dir, "leashd.db"), "LEASHD_WORKDIR="+s.dir, "LEASHD_LOG_LEVEL=debug")
	s.logs = &testenv.Buffer{}
	s.cmd = exec.Command(os.Args[0], "-test.run=^$")
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	require.NoError(t, s.cmd.Start())
	require.Eventually(t, func() bool { return webURL.MatchString(s.logs.String()) }, 60*time.Second, 20*time.Millisecond, "the server did not start: %s", s.logs)
}

// stop ends the server with sig and waits for it.
func (s *serverProc) stop(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(sig)
	_ = s.cmd.Wait()
	_, _ = s.all.Write([]byte(s.logs.String() + "\n--- stopped with " + sig.String() + " ---\n"))
	s.cmd = nil
}

// restartJob is the fake model of the restart test: a Bash call that
// takes a while (A), then — once it has A's output — text and a second
// Bash call (B), then the last words.
func restartJob(req *fakeapi.Request) fakeapi.Reply {
	switch {
	case has(req, "toolu_rb"):
		return fakeapi.Text("all done after the restarts")
	case has(req, "toolu_ra"):
		return fakeapi.Reply{Text: "halfway there", Tools: []fakeapi.ToolUse{{ID: "toolu_rb", Name: "Bash",
			Input: map[string]string{"command": "echo two > b.txt && cat b.txt", "description": "the second step"}}}}
	case req.HasUserText("carry on through restarts"):
		return fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: "toolu_ra", Name: "Bash",
			Input: map[string]string{"command": "sleep 3 && echo one > a.txt && cat a.txt", "description": "the first step"}}}}
	}
	return fakeapi.Text("ok")
}

func has(req *fakeapi.Request, toolID string) bool {
	_, ok := req.ToolResult(toolID)
	return ok
}

var agentStarted = regexp.MustCompile(`msg="agent started" id=\S+ chat=web:r pid=(\d+)`)

// TestServerRestartInterruptsNobody: the server restarts twice — with
// SIGTERM, and with SIGKILL — while its one chat's agent works on a
// runner in its own network namespace. After the first restart, output
// the CLI wrote while no server was there reaches the chat, in order
// (the text, then its next approval); after the second, the approval
// pending at the restart is shown again and a tap reaches the same CLI
// process (one start on the runner, the same pid adopted), which
// completes the turn: the model gets both commands' output.
func TestServerRestartInterruptsNobody(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) { serverRestartInterruptsNobody(t, sig) })
	}
}

func serverRestartInterruptsNobody(t *testing.T, sig syscall.Signal) {
	claudePath := testenv.Claude(t)
	cleanEnv(t)
	f := &fleet{api: fakeapi.New(t), claude: claudePath}
	f.api.Otherwise(restartJob)
	l, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	f.port = strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	f.url = "http://127.0.0.1:" + f.port
	tokens.Set(f.url, runnersWebAuth)
	srv := startServerProc(t, testenv.PrivateDir(t), f.port)
	f.logs = srv.all
	r1 := f.runner(t, "r1", 2, runnerToken)
	f.waitRunner(t, "r1", connected, "connected")

	code, body := postJSON(t, f.url+"/api/chats/web:r/messages", `{"text":"carry on through restarts"}`)
	require.Equal(t, 202, code, body)
	a := f.waitBash(t, "web:r")
	f.allow(t, a)
	// The server goes while the command runs: what the CLI writes next
	// (its text, the second call's request) is held by the runner.
	time.Sleep(500 * time.Millisecond) // the answer's ack goes out
	srv.stop(sig)
	toolOutput(t, f.api, "toolu_ra") // the CLI carried on without a server
	srv.start(t)
	f.waitRunner(t, "r1", connected, "connected again")

	waitEventWithin(t, f.url, "web:r", "halfway there", 90*time.Second)
	b := f.waitBash(t, "web:r")
	assert.NotEqual(t, a.ID, b.ID)
	found, before := eventsUntil(t.Context(), f.url, "web:r", b.ID, time.Now().Add(10*time.Second))
	require.True(t, found, "the request is among the chat's events")
	assert.Contains(t, before, "halfway there", "the text before the request that followed it")

	srv.stop(sig)
	srv.start(t)
	f.waitRunner(t, "r1", connected, "connected again")
	again := waitPendingWithin(t, f.url, "web:r", 90*time.Second, func(p pendingView) bool { return p.ID == b.ID })
	assert.Equal(t, "Bash", again.ToolName, "the approval pending at the restart is shown again")
	f.allow(t, again)
	assert.Equal(t, "two", strings.TrimSpace(toolOutput(t, f.api, "toolu_rb")))
	waitEventWithin(t, f.url, "web:r", "all done after the restarts", 90*time.Second)

	starts := agentStarted.FindAllStringSubmatch(r1.logs.String(), -1)
	require.Len(t, starts, 1, "one CLI process for the whole turn; runner log:\n%s", r1.logs)
	adopted := regexp.MustCompile(fmt.Sprintf(`msg="claude adopted from the last run of leashd" chat=web:r pid=r1/%s\b`, starts[0][1]))
	assert.Len(t, adopted.FindAllString(srv.all.String()+srv.logs.String(), -1), 2, "each restarted server adopted that process")
	assert.Equal(t, "one", strings.TrimSpace(toolOutput(t, f.api, "toolu_ra")))
}
