package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/sqlite"
)

// Run with:
//
//	go test -run '^$' -bench KnownChats -benchtime 3x ./cmd/leashd
//
// BenchmarkStartKnownChats: leashd (this test binary running main, in a
// child process, with the demo agent and the web page) starting on a
// database of 10,000 chats (sessions) and 100,000 audited interactions,
// from exec to /readyz answering 200, beside the same start on an empty
// database (the reference, measured in the same run).
//
// BenchmarkIdleKnownChats: the same leashd, after each of the 10,000 known
// chats sent a prompt and its turn ended (the chats idle, their agent
// sessions closed): resident memory per chat, (RSS after − RSS before) /
// 10,000, and the Go heap per chat, read from /metrics.
const (
	knownChats        = 10_000
	knownInteractions = 100_000
)

var (
	seedOnce sync.Once
	seedDir  string
	seedErr  error
)

// seededDB returns the path of a copy of the database with the known chats
// and interactions (seeded once per test binary run).
func seededDB(b *testing.B) string {
	b.Helper()
	seedOnce.Do(func() {
		seedDir, seedErr = os.MkdirTemp("", "leashd-known-chats")
		if seedErr == nil {
			seedErr = seed(filepath.Join(seedDir, "seed.db"))
		}
	})
	if seedErr != nil {
		b.Fatal(seedErr)
	}
	dst := filepath.Join(testenv.PrivateDir(b), "leashd.db")
	src, err := os.ReadFile(filepath.Join(seedDir, "seed.db"))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(dst, src, 0o600); err != nil {
		b.Fatal(err)
	}
	return dst
}

// seed writes the schema (through the store) and the rows (in one
// transaction, as a long-running leashd would have written them one by one).
func seed(path string) error {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	t0 := time.Now().Add(-30 * 24 * time.Hour).UTC()
	ts := func(d time.Duration) string { return t0.Add(d).Format("2006-01-02T15:04:05.000000000Z") }
	for i := range knownChats {
		if _, err := tx.Exec(`INSERT INTO sessions (chat_id, agent_session_id, mode, workdir, last_active) VALUES (?, ?, 'default', '', ?)`,
			knownChat(i), fmt.Sprintf("sess-%d", i), ts(time.Duration(i)*time.Second)); err != nil {
			return err
		}
	}
	for i := range knownInteractions {
		id := fmt.Sprintf("k%07d", i)
		at := time.Duration(i) * 10 * time.Second
		if _, err := tx.Exec(`INSERT INTO interactions (id, chat_id, kind, question, options, asked_at, status, answer, resolved_by, resolved_at)
			VALUES (?, ?, 'question', 'Which database?', '[{"label":"Postgres"},{"label":"SQLite"}]', ?, 'answered', 'SQLite', 'web', ?)`,
			id, knownChat(i%knownChats), ts(at), ts(at+time.Second)); err != nil {
			return err
		}
		for _, ev := range [][2]string{{"requested", ts(at)}, {"resolved", ts(at + time.Second)}} {
			if _, err := tx.Exec(`INSERT INTO events (interaction_id, type, at) VALUES (?, ?, ?)`, id, ev[0], ev[1]); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

func knownChat(i int) string { return "known-" + strconv.Itoa(i) }

// knownLeashd is a running leashd child process.
type knownLeashd struct {
	cmd  *exec.Cmd
	url  string
	logs *testenv.Buffer
}

// startKnown starts leashd on db and returns once /readyz answers 200,
// with how long that took from exec.
func startKnown(b *testing.B, db string, env ...string) (*knownLeashd, time.Duration) {
	b.Helper()
	dir := filepath.Dir(db)
	cmd := exec.CommandContext(b.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainArgs+"=",
		"LEASHD_AGENT=demo", "LEASHD_WEB_ADDR=127.0.0.1:0", "LEASHD_DB_PATH="+db, "LEASHD_WORKDIR="+dir)
	cmd.Env = append(cmd.Env, env...)
	l := &knownLeashd{cmd: cmd, logs: &testenv.Buffer{}}
	cmd.Stdout, cmd.Stderr = io.Discard, l.logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	client := &http.Client{Timeout: time.Second}
	for deadline := start.Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if l.url == "" {
			if m := webURL.FindStringSubmatch(l.logs.String()); m != nil {
				l.url = m[1]
				useToken(b, l.url, dir)
			}
			continue
		}
		resp, err := client.Get(l.url + "/readyz")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return l, time.Since(start)
		}
	}
	b.Fatalf("leashd did not become ready within a minute: %s", l.logs)
	return nil, 0
}

func (l *knownLeashd) stop(b *testing.B) {
	b.Helper()
	_ = l.cmd.Process.Signal(os.Interrupt)
	_ = l.cmd.Wait()
}

func BenchmarkStartKnownChats(b *testing.B) {
	db := seededDB(b)
	var known, empty time.Duration
	for b.Loop() {
		l, d := startKnown(b, db)
		l.stop(b)
		known += d
		l, d = startKnown(b, filepath.Join(testenv.PrivateDir(b), "empty.db"))
		l.stop(b)
		empty += d
	}
	b.ReportMetric(float64(known.Milliseconds())/float64(b.N), "start-ms")
	b.ReportMetric(float64(empty.Milliseconds())/float64(b.N), "empty-db-start-ms")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkIdleKnownChats(b *testing.B) {
	for b.Loop() {
		db := seededDB(b)
		// The demo agent's sessions live in this process: at most 64 (the
		// slots) stay open, idle; every other chat's was closed to free its
		// slot, so what stays is leashd's own state of an idle chat.
		l, _ := startKnown(b, db, "LEASHD_MAX_CONCURRENT_AGENTS=64")
		before := procStatus(b, l.cmd.Process.Pid, "VmRSS")
		heapBefore := scrapeFloat(b, l.url, "go_memstats_heap_inuse_bytes")
		var wg sync.WaitGroup
		work := make(chan int)
		for range 32 {
			wg.Go(func() {
				for i := range work {
					resp, err := api.Post(l.url+"/api/chats/"+knownChat(i)+"/messages", "application/json", strings.NewReader(`{"text":"hello"}`))
					if err != nil {
						b.Error(err)
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
		for i := range knownChats {
			work <- i
		}
		close(work)
		wg.Wait()
		for deadline := time.Now().Add(10 * time.Minute); scrapeMetric(b, l.url, "leashd_agent_turns_total") != strconv.Itoa(knownChats); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatalf("the turns did not end: %s", l.logs)
			}
		}
		time.Sleep(2 * time.Second) // settle: the last turns' output and closes
		after := procStatus(b, l.cmd.Process.Pid, "VmRSS")
		heapAfter := scrapeFloat(b, l.url, "go_memstats_heap_inuse_bytes")
		b.ReportMetric(float64(after-before)/knownChats/1024, "RSS-KB/chat")
		b.ReportMetric((heapAfter-heapBefore)/knownChats/1024, "heap-KB/chat")
		b.ReportMetric(float64(before)/(1<<20), "RSS-before-MB")
		b.ReportMetric(float64(after)/(1<<20), "RSS-after-MB")
		l.stop(b)
	}
	b.ReportMetric(0, "ns/op")
}

func scrapeFloat(b *testing.B, url, series string) float64 {
	b.Helper()
	v, err := strconv.ParseFloat(scrapeMetric(b, url, series), 64)
	if err != nil {
		b.Fatal(err)
	}
	return v
}
