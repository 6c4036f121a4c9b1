package remote

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzHello feeds anything to the server's hello reader: it never panics,
// and a hello it accepts is within every bound.
func FuzzHello(f *testing.F) {
	f.Add([]byte(`{"version":1,"name":"box1","labels":["gpu"],"max_agents":4,"procs":[{"id":"a","chat":"c","pid":"12"}]}` + "\n"))
	f.Add([]byte("\x00garbage\n"))
	f.Add([]byte(`{"version":1,"name":"","max_agents":1}` + "\n"))
	f.Add([]byte(`{"version":1,"name":"box1","max_agents":1,"procs":[{"id":"a","chat":"c","pid":"12","acking":true,"acked":4096}]}` + "\n"))
	f.Add([]byte(`{"version":1,"name":"box1","max_agents":1,"procs":[{"id":"a","acking":true,"acked":-1}]}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h hello
		if err := readMsg(bufio.NewReader(bytes.NewReader(b)), &h); err != nil {
			return
		}
		if h.check() != nil {
			return
		}
		if len(h.Name) > maxWord || len(h.Labels) > maxLabels || len(h.Procs) > maxHelloProcs || h.MaxAgents < 1 {
			t.Fatalf("accepted out of bounds: %+v", h)
		}
		for _, p := range h.Procs {
			if p.Acked < 0 {
				t.Fatalf("accepted a negative ack: %+v", p)
			}
		}
	})
}
