package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leashd/leashd/config/testenv"
)

// BenchmarkHugeAgentLineRSS runs leashd (this test binary running main, in
// a child process) with the web page and a CLI that prints one 50 MB
// assistant line per prompt, and reports its resident memory: idle, and
// the peak (VmHWM) after the turn. The figures are for the README's
// Performance table; nothing here asserts a bound.
func BenchmarkHugeAgentLineRSS(b *testing.B) {
	for b.Loop() {
		idle, peak := floodRSS(b, 50<<20)
		b.ReportMetric(float64(idle)/(1<<20), "idle-RSS-MB")
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
	}
}

func floodRSS(b *testing.B, size int) (idle, peak int64) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	dir := testenv.PrivateDir(b)
	cmd := exec.CommandContext(b.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainArgs+"=",
		"LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH="+writeFloodCLI(b, dir),
		"FLOOD_BYTES="+strconv.Itoa(size), "LEASHD_AGENT_ENV=FLOOD_BYTES",
		"LEASHD_WEB_ADDR=127.0.0.1:0", "LEASHD_DB_PATH="+filepath.Join(dir, "leashd.db"), "LEASHD_WORKDIR="+dir)
	logs := &testenv.Buffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, logs
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url := ""
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := webURL.FindStringSubmatch(logs.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		b.Fatalf("leashd did not start: %s", logs)
	}
	useToken(b, url, dir)
	time.Sleep(time.Second) // settle
	idle = procStatus(b, cmd.Process.Pid, "VmRSS")
	resp, err := api.Post(url+"/api/chats/flood/messages", "application/json", strings.NewReader(`{"text":"write a lot"}`))
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	for deadline := time.Now().Add(5 * time.Minute); scrapeMetric(b, url, "leashd_agent_turns_total") != "1"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("the turn did not end: %s", logs)
		}
	}
	return idle, procStatus(b, cmd.Process.Pid, "VmHWM")
}

// procStatus reads a /proc/PID/status field in bytes (Linux).
func procStatus(b *testing.B, pid int, field string) int64 {
	b.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
