//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/interactions"
)

// child is leashd (the real main, in this test binary) run in its own
// process with an open-file limit, as a service manager would start it.
type child struct {
	cmd  *exec.Cmd
	url  string
	logs *testenv.Buffer
}

func startChild(t testing.TB, nofile int, env ...string) *child {
	t.Helper()
	dir := testenv.PrivateDir(t)
	// `ulimit -n` sets the soft and the hard limit; Go cannot raise it.
	cmd := exec.Command("sh", "-c", `ulimit -n "$LEASHD_TEST_NOFILE" && exec "$0" -test.run='^$'`, os.Args[0])
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainArgs+"=", "LEASHD_TEST_NOFILE="+strconv.Itoa(nofile),
		"LEASHD_AGENT=demo", "LEASHD_WEB_ADDR=127.0.0.1:0", "LEASHD_LOG_FORMAT=json",
		"LEASHD_DB_PATH="+filepath.Join(dir, "leashd.db"), "LEASHD_WORKDIR="+dir)
	cmd.Env = append(cmd.Env, env...)
	c := &child{cmd: cmd, logs: &testenv.Buffer{}}
	cmd.Stdout, cmd.Stderr = io.Discard, c.logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	ok := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ok = webURL.MatchString(c.logs.String()); ok {
			break
		}
	}
	require.True(t, ok, "leashd did not start; log:\n%s", c.logs)
	c.url = webURL.FindStringSubmatch(c.logs.String())[1]
	useToken(t, c.url, dir)
	return c
}

func (c *child) stop(t testing.TB) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, c.cmd.Wait(), "exit status after SIGTERM; log:\n%s", c.logs)
}

// fds and rssKB read the child's open descriptors and resident memory.
func (c *child) fds() int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", c.cmd.Process.Pid))
	return len(ents)
}

func (c *child) rssKB() int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// flood opens n connections to addr (loopback), each sending one
// keep-alive request for path that it never reads the answer of, and
// returns them; connections the server does not take are left in the
// kernel's queue, as a flooding client leaves them.
func flood(t testing.TB, addr, path string, n int) []net.Conn {
	t.Helper()
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
		sem   = make(chan struct{}, 64)
	)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				return
			}
			_ = c.SetWriteDeadline(time.Now().Add(2 * time.Second))
			if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
				c.Close()
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

// Issue 15 item 3: a flood of idle keep-alive connections to /healthz (no
// token needed) used to take every file descriptor: leashd then could not
// accept a health check, nor open anything else. With an open-file limit
// of 256 and 600 flooding connections, leashd holds at most its cap (192
// here), a new client's health check is answered, the API and the agent
// work, and no descriptor runs out.
func TestServeUnderAConnectionFlood(t *testing.T) {
	cleanEnv(t)
	c := startChild(t, 256)
	addr := strings.TrimPrefix(c.url, "http://")
	assert.Contains(t, c.logs.String(), "serving at most 192 connections")

	flood(t, addr, "/healthz", 600)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(c.url + "/healthz")
	require.NoError(t, err, "a health check during the flood; log:\n%s", c.logs)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Less(t, c.fds(), 256, "descriptors left for the store, agents and outgoing connections")

	st, body := postJSON(t, c.url+"/api/chats/flood/messages", `{"text":"hello"}`)
	require.Equal(t, http.StatusAccepted, st, body)
	waitEvent(t, c.url, "flood", `You said: \"hello\"`)
	assert.NotContains(t, c.logs.String(), "too many open files")
	assert.Contains(t, c.logs.String(), "at the connection cap (192, LEASHD_WEB_MAX_CONNECTIONS)", "the operator is told")
	c.stop(t)
}

// Issue 15 item 10: an event stream open when leashd is stopped gets the
// interruption of the pending question — resolved as interrupted with the
// "leashd restarted" notice — and a last server.stopping event, then ends.
func TestServeShutdownEventsReachOpenStreams(t *testing.T) {
	url, logs, stop := startServe(t, testenv.PrivateDir(t))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/events?chat=sd", nil)
	require.NoError(t, err)
	resp, err := api.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	st, body := postJSON(t, url+"/api/chats/sd/messages", `{"text":"question"}`)
	require.Equal(t, http.StatusAccepted, st, body)
	var seen []string
	next := func(substr string) {
		t.Helper()
		for l := range lines {
			seen = append(seen, l)
			if strings.Contains(l, substr) {
				return
			}
		}
		t.Fatalf("the stream ended without %q; it had:\n%s\nlog:\n%s", substr, strings.Join(seen, "\n"), logs)
	}
	next("event: interaction.requested")
	require.NoError(t, stop())
	next(`"status":"interrupted"`)
	assert.Contains(t, seen[len(seen)-1], interactions.InterruptedNotice)
	next("event: server.stopping")
	for range lines { // then it ends
	}
}

// BenchmarkServeFlood measures leashd (the real main in its own process,
// demo agent, default settings) under the floods of issue 15: its resident
// memory and open descriptors while flooded, next to the same figures idle.
// Run with -benchtime=1x (each run floods once); see .ci/bench.
//
//   - idle-conns: 2,000 connections that each send a keep-alive /healthz
//     and never read the answer (the connection cap holds 1,024 at most).
//   - stuck-streams: 100 event streams asking for the whole replay (8 MiB
//     kept) through receive buffers of 2 KiB, never read.
func BenchmarkServeFlood(b *testing.B) {
	b.Run("idle-conns=2000", func(b *testing.B) {
		for b.Loop() {
			c := startChild(b, 20000)
			idleRSS, idleFDs := c.rssKB(), c.fds()
			flood(b, strings.TrimPrefix(c.url, "http://"), "/healthz", 2000)
			time.Sleep(time.Second) // let leashd take what it takes
			rss, fds := c.rssKB(), c.fds()
			resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(c.url + "/healthz")
			if err != nil {
				b.Fatalf("health check under the flood: %v", err)
			}
			resp.Body.Close()
			report(b, idleRSS, idleFDs, rss, fds)
			c.stop(b)
		}
	})
	b.Run("stuck-streams=100", func(b *testing.B) {
		for b.Loop() {
			c := startChild(b, 20000)
			fillKept(b, c.url)
			idleRSS, idleFDs := c.rssKB(), c.fds()
			addr := strings.TrimPrefix(c.url, "http://")
			for range 100 {
				conn := dialSmall(b, addr)
				if _, err := io.WriteString(conn, "GET /api/events?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
					b.Fatal(err)
				}
			}
			time.Sleep(2 * time.Second) // every stream is stuck writing its replay
			rss, fds := c.rssKB(), c.fds()
			report(b, idleRSS, idleFDs, rss, fds)
			c.stop(b)
		}
	})
}

func report(b *testing.B, idleRSS, idleFDs, rss, fds int) {
	b.ReportMetric(float64(idleRSS)/1024, "idle-RSS-MB")
	b.ReportMetric(float64(rss)/1024, "flood-RSS-MB")
	b.ReportMetric(float64(idleFDs), "idle-fds")
	b.ReportMetric(float64(fds), "flood-fds")
}

// fillKept makes leashd keep about 8 MiB of events: prompts of 60 KiB,
// each shown as the person's message and echoed by the demo agent.
func fillKept(b *testing.B, url string) {
	const prompts = 72
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/events", nil)
	resp, err := api.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	text := strings.Repeat("w", 60<<10) // one word: the demo echoes it in one chunk
	var wg sync.WaitGroup
	for i := range prompts {
		wg.Go(func() {
			resp, err := api.Post(fmt.Sprintf("%s/api/chats/fill%d/messages", url, i), "application/json",
				strings.NewReader(`{"text":"`+text+`"}`))
			if err != nil {
				b.Error(err)
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for done := 0; done < prompts && sc.Scan(); {
		if sc.Text() == "event: agent.done" {
			done++
		}
	}
	if ctx.Err() != nil {
		b.Fatal("the demo agent did not answer every prompt in time")
	}
}

// dialSmall connects with a 2 KiB receive buffer set before connecting.
func dialSmall(b *testing.B, addr string) net.Conn {
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}
