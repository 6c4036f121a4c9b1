package remote

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strings"
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

// FuzzFileHead feeds anything to the server's reader and check of a file
// stream's first line: it never panics, and a request it accepts is a
// file request within every bound.
func FuzzFileHead(f *testing.F) {
	f.Add([]byte(`{"op":"file","name":"a.txt","caption":"hi","size":3,"credential":"c"}` + "\n"))
	f.Add([]byte(`{"op":"file","name":"../a","size":3}` + "\n"))
	f.Add([]byte(`{"op":"file","name":"a","size":-1}` + "\n"))
	f.Add([]byte(`{"op":"file","name":"a","size":100000}` + "\n"))
	f.Add([]byte(`{"op":"start","id":"x"}` + "\n"))
	f.Add([]byte("\x00garbage\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		const limit = 4096
		fh, err := readFileHead(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			return
		}
		if fh.Op != opFile {
			t.Fatalf("read a request that is no file request: %q", fh.Op)
		}
		if fh.check(limit) != nil {
			return
		}
		if fh.Size < 0 || fh.Size > limit || len(fh.Caption) > maxCaption {
			t.Fatalf("accepted out of bounds: size %d, caption %d bytes", fh.Size, len(fh.Caption))
		}
		if fh.Name == "" || len(fh.Name) > maxFileName || fh.Name == "." || fh.Name == ".." ||
			strings.ContainsAny(fh.Name, "/\\\x00\n\r") || filepath.Base(fh.Name) != fh.Name {
			t.Fatalf("accepted a name that is no base name: %q", fh.Name)
		}
	})
}
