// Package netns gives a test network namespaces joined to the host by veth
// pairs, so that a process inside reaches the host only over the host's
// address on its pair (like a machine on the LAN), and the test can cut
// the link. It needs root (CI runs as root): elsewhere the test skips, and
// fails when CI=true. Everything made is removed when the test ends, even
// when it fails.
package netns

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/leashd/leashd/config/testenv"
)

// NS is one namespace: HostIP is the host's end of its veth pair, IP its
// own (a /30 in 10.213.0.0/16).
type NS struct {
	Name   string
	HostIP string
	IP     string
	hostIf string
}

var seq atomic.Int32

// New makes a namespace and its link to the host.
func New(t testing.TB) *NS {
	t.Helper()
	if os.Geteuid() != 0 {
		if testenv.InCI() {
			t.Fatalf("network namespaces need root, and CI runs as root")
		}
		t.Skip("skipping: network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		testenv.Require(t, "LEASHD_TEST_IP", "ip")
	}
	n := int(seq.Add(1)) + (os.Getpid()%60)*64
	ns := &NS{
		Name:   fmt.Sprintf("lrt%d-%d", os.Getpid(), n),
		HostIP: fmt.Sprintf("10.213.%d.%d", n/64, (n%64)*4+1),
		IP:     fmt.Sprintf("10.213.%d.%d", n/64, (n%64)*4+2),
		hostIf: fmt.Sprintf("lrh%d", n),
	}
	nsIf := fmt.Sprintf("lrn%d", n)
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", ns.Name).Run()
		_ = exec.Command("ip", "link", "del", ns.hostIf).Run()
	})
	for _, args := range [][]string{
		{"netns", "add", ns.Name},
		{"link", "add", ns.hostIf, "type", "veth", "peer", "name", nsIf},
		{"link", "set", nsIf, "netns", ns.Name},
		{"addr", "add", ns.HostIP + "/30", "dev", ns.hostIf},
		{"link", "set", ns.hostIf, "up"},
		{"-n", ns.Name, "addr", "add", ns.IP + "/30", "dev", nsIf},
		{"-n", ns.Name, "link", "set", nsIf, "up"},
		{"-n", ns.Name, "link", "set", "lo", "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return ns
}

// Command runs a program inside the namespace.
func (ns *NS) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
}

// SetLink brings the host's end of the link down (a cable pulled) or up.
func (ns *NS) SetLink(t testing.TB, up bool) {
	t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	if out, err := exec.Command("ip", "link", "set", ns.hostIf, state).CombinedOutput(); err != nil {
		t.Fatalf("ip link set %s %s: %v: %s", ns.hostIf, state, err, out)
	}
	if up { // the address goes with the link on some kernels
		_ = exec.Command("ip", "addr", "add", ns.HostIP+"/30", "dev", ns.hostIf).Run()
	}
}

// Forward listens on the host's end (ns.HostIP, any port) and forwards
// every connection to target (e.g. a fake API on the host's loopback);
// it returns the address to use inside the namespace.
func (ns *NS) Forward(t testing.TB, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", ns.HostIP+":0")
	if err != nil {
		t.Fatalf("listening on %s: %v", ns.HostIP, err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, u)
			mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
	return ln.Addr().String()
}
