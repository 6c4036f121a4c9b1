//go:build linux

package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leashd/leashd/config/testenv"
)

// BenchmarkAskFlood is issue #30 item 9's flood against leashd (the real
// main in its own process, demo agent, SQLite store): 40,000 programs'
// asks over 50 chats, 32 at a time, with the page's token. Before the
// caps the same flood took leashd to 2.38 GB RSS and a 707 MB database,
// GET /api/interactions failed and the next start took 34 s. It reports
// what was accepted, the RSS and database size after the flood, the time
// of GET /api/interactions, and the time to serve again after a restart.
// Run with -benchtime=1x.
//
//   - rate=default: LEASHD_API_RATE and LEASHD_API_BURST as shipped.
//   - rate=off: no rate limit, so that the caps on pending requests
//     (LEASHD_API_MAX_PENDING_PER_CHAT, LEASHD_API_MAX_PENDING) bound it.
func BenchmarkAskFlood(b *testing.B) {
	for _, tc := range []struct{ name, rate string }{{"rate=default", ""}, {"rate=off", "0"}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				askFlood(b, tc.rate, 40000)
			}
		})
	}
}

func askFlood(b *testing.B, rate string, n int) {
	dir := testenv.PrivateDir(b)
	tok := "flood-t0ken-3e8a1f5c7b"
	b.Setenv("LEASHD_WEB_TOKEN", tok)
	env := []string{"LEASHD_DB_PATH=" + filepath.Join(dir, "leashd.db"), "LEASHD_WORKDIR=" + dir}
	if rate != "" {
		env = append(env, "LEASHD_API_RATE="+rate)
	}
	c := startChild(b, 20000, env...)
	idle := c.rssKB()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	post := func(body string) int {
		req, _ := http.NewRequest("POST", c.url+"/api/interactions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var next atomic.Int64
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				st := post(fmt.Sprintf(`{"chat_id":"flood-%d","question":"Deploy build %d?","options":[{"label":"Yes"},{"label":"No"}]}`, i%50, i))
				mu.Lock()
				statuses[st]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	rss := c.rssKB()
	t0 := time.Now()
	req, _ := http.NewRequest("GET", c.url+"/api/interactions", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := client.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("GET /api/interactions after the flood: %v %v", err, resp)
	}
	resp.Body.Close()
	list := time.Since(t0)
	c.stop(b)
	db := dirSize(dir)
	t0 = time.Now()
	c = startChild(b, 20000, env...)
	start := time.Since(t0)
	c.stop(b)
	b.ReportMetric(float64(statuses[http.StatusCreated]), "accepted")
	b.ReportMetric(float64(statuses[http.StatusTooManyRequests]), "429s")
	b.ReportMetric(float64(statuses[http.StatusServiceUnavailable]), "503s")
	b.ReportMetric(float64(idle)/1024, "idle-RSS-MB")
	b.ReportMetric(float64(rss)/1024, "flood-RSS-MB")
	b.ReportMetric(float64(db)/(1<<20), "DB-MB")
	b.ReportMetric(float64(list.Milliseconds()), "list-ms")
	b.ReportMetric(start.Seconds(), "restart-s")
	b.Logf("statuses %v", statuses)
}

// dirSize is the bytes of the files in dir (the database with its WAL).
func dirSize(dir string) int64 {
	var n int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}
