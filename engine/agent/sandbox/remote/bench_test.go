package remote

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// benchStart starts spec directly (no runner) or through a runner behind
// the rig's proxy, with delay added each way.
func benchStart(b *testing.B, via string, delay time.Duration, spec sandbox.Spec) sandbox.Process {
	b.Helper()
	if via == "direct" {
		p, err := (&sandbox.Host{}).Start(spec)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	r := newBenchRig(b, delay)
	p, err := r.hub.Start(spec)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func newBenchRig(b *testing.B, delay time.Duration) *rig {
	b.Helper()
	r := newRigTB(b, time.Minute)
	r.proxy.delay = delay
	r.runnerTB(b, "bench", 1000)
	return r
}

// BenchmarkRoundTrip is a line to the agent and its answer back: what a
// tap's answer costs on its way to the agent and the agent's reply on its
// way back. Agent: cat.
func BenchmarkRoundTrip(b *testing.B) {
	for _, c := range []struct {
		via   string
		delay time.Duration
	}{{"direct", 0}, {"runner-loopback", 0}, {"runner-20ms-each-way", 20 * time.Millisecond}} {
		b.Run(c.via, func(b *testing.B) {
			p := benchStart(b, strings.Split(c.via, "-")[0], c.delay, shSpec("bench", "cat"))
			defer p.End(time.Second)
			out := bufio.NewReader(p.Stdout())
			line := []byte(`{"type":"control_response","response":{"subtype":"success","request_id":"x","response":{"behavior":"allow"}}}` + "\n")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := p.Stdin().Write(line); err != nil {
					b.Fatal(err)
				}
				if _, err := out.ReadSlice('\n'); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOutput is the agent's output read by the server. Agent: head
// -c of /dev/zero.
func BenchmarkOutput(b *testing.B) {
	const size = 64 << 20
	for _, via := range []string{"direct", "runner"} {
		b.Run(via, func(b *testing.B) {
			b.SetBytes(size)
			for i := 0; i < b.N; i++ {
				p := benchStart(b, via, 0, shSpec("bench", fmt.Sprintf("head -c %d /dev/zero", size)))
				n, err := io.Copy(io.Discard, p.Stdout())
				if err != nil || n != size {
					b.Fatalf("read %d bytes: %v", n, err)
				}
				_ = p.Wait()
			}
		})
	}
}

// BenchmarkSessions200Over4Runners holds 200 idle agents (cat) over 4
// runners, in this one process (server and runners), and reports the Go
// heap per agent, beside 200 agents started directly.
func BenchmarkSessions200Over4Runners(b *testing.B) {
	for _, via := range []string{"direct", "runner"} {
		b.Run(via, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var hub *Hub
				if via == "runner" {
					r := newRigTB(b, time.Minute)
					for k := 0; k < 4; k++ {
						r.runnerTB(b, fmt.Sprintf("r%d", k), 50)
					}
					hub = r.hub
				}
				before := heap()
				var procs []sandbox.Process
				for k := 0; k < 200; k++ {
					spec := shSpec(fmt.Sprintf("chat%d", k), "cat")
					var p sandbox.Process
					var err error
					if hub != nil {
						p, err = hub.Start(spec)
					} else {
						p, err = (&sandbox.Host{}).Start(spec)
					}
					if err != nil {
						b.Fatal(err)
					}
					procs = append(procs, p)
				}
				for _, p := range procs { // each one answers
					_, _ = p.Stdin().Write([]byte("hi\n"))
					if _, err := bufio.NewReader(p.Stdout()).ReadString('\n'); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(heap()-before)/200/1024, "KiB-heap/agent")
				for _, p := range procs {
					_ = p.Stdin().Close()
					_ = p.Wait()
				}
			}
		})
	}
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkSendFile is one file from an agent on a runner to Hub.Files,
// over loopback and over a 20 ms link each way: what send_file costs.
func BenchmarkSendFile(b *testing.B) {
	for _, c := range []struct {
		name  string
		delay time.Duration
		size  int
	}{{"1KiB-loopback", 0, 1 << 10}, {"4MiB-loopback", 0, 4 << 20}, {"1KiB-20ms-each-way", 20 * time.Millisecond, 1 << 10}, {"4MiB-20ms-each-way", 20 * time.Millisecond, 4 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			r := newRigHooked(b, time.Minute, func(h *Hub) {
				h.Files = func(_ context.Context, _ string, f FileUpload) (string, error) { return "ok", nil }
			})
			r.proxy.delay = c.delay
			run := r.runnerTB(b, "bench", 1)
			f := FileUpload{Name: "bench.bin", Data: make([]byte, c.size)}
			b.SetBytes(int64(c.size))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := run.SendFile(context.Background(), f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
