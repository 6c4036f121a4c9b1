package remote

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// moveTo makes the runner behind r's proxy come back to next's server
// after its connection breaks, as a runner whose server was restarted.
func (r *rig) moveTo(next *rig) {
	r.proxy.mu.Lock()
	r.proxy.target = strings.TrimPrefix(next.srv.URL, "http://")
	r.proxy.mu.Unlock()
}

// heldOf is the runner's record of process id, or nil.
func heldOf(run *Runner, id string) *held {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.procs[id]
}

// ackedOn is what the runner heard acknowledged of id's stdout.
func ackedOn(run *Runner, id string) int64 {
	h := heldOf(run, id)
	if h == nil {
		return -1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.acked
}

// readLines reads n lines.
func readLines(t *testing.T, out *bufio.Reader, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		line, err := out.ReadString('\n')
		require.NoError(t, err)
		b.WriteString(line)
	}
	return b.String()
}

// adoptableRig is a rig whose hub sends the chats Adoptable names.
func adoptableRig(t *testing.T, grace time.Duration) (*rig, chan string) {
	ch := make(chan string, 16)
	return newRigHooked(t, grace, func(h *Hub) { h.Adoptable = func(chat string) { ch <- chat } }), ch
}

// restartScript writes five lines, then one more once the file go
// exists, then echoes its input until it ends.
func restartScript(dir string) string {
	return `i=0; while [ $i -lt 5 ]; do echo "line $i"; i=$((i+1)); done
while [ ! -e ` + filepath.Join(dir, "go") + ` ]; do sleep 0.05; done; echo "while away"
while read l; do echo "echo $l"; done; echo "stdin closed"; exit 7`
}

// TestServerRestartAdoptsTheSameProcess: the first server reads five lines
// and acks two, lets go of the agent and goes away; the agent writes on
// while no server is there; the new server hears it is adoptable, adopts
// the same process and reads exactly from the ack on; its input reaches
// the agent, a network blip is carried over, and its exit is reported.
func TestServerRestartAdoptsTheSameProcess(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, time.Minute)
	run := r.runner(t, "box1", 1)
	p1, err := r.hub.Start(shSpec("chat1", restartScript(dir)))
	require.NoError(t, err)
	out := bufio.NewReader(p1.Stdout())
	require.Equal(t, "line 0\nline 1\nline 2\nline 3\nline 4\n", readLines(t, out, 5))
	p1.(sandbox.Resumable).Ack(int64(len("line 0\nline 1\n")))
	id := p1.(*proc).id
	p1.(sandbox.Resumable).Detach()
	waitFor(t, "the runner heard the ack", func() bool { return ackedOn(run, id) == 14 })
	require.ErrorIs(t, p1.Wait(), sandbox.ErrDetached)

	r2, adopt := adoptableRig(t, time.Minute)
	r.moveTo(r2)
	r.proxy.pause(true) // the server is gone
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o600))
	waitFor(t, "the agent wrote while no server was there", func() bool {
		h := heldOf(run, id)
		h.mu.Lock()
		defer h.mu.Unlock()
		return strings.HasSuffix(string(h.out), "while away\n")
	})
	r.proxy.pause(false)
	require.Equal(t, "chat1", <-adopt)
	require.Equal(t, []RunnerInfo{{Name: "box1", MaxAgents: 1, Agents: 1, Connected: true, Chats: []string{"chat1"}}},
		stripSince(r2.hub.Runners()), "the orphan counts on its runner")
	p2, err := r2.hub.Adopt("chat1")
	require.NoError(t, err)
	require.Equal(t, p1.ID(), p2.ID(), "the same process")
	out2 := bufio.NewReader(p2.Stdout())
	require.Equal(t, "line 2\nline 3\nline 4\nwhile away\n", readLines(t, out2, 4))
	_, err = io.WriteString(p2.Stdin(), "hello\n")
	require.NoError(t, err)
	require.Equal(t, "echo hello\n", readLines(t, out2, 1))
	r.proxy.cut() // a blip: the adopted agent carries on
	_, err = io.WriteString(p2.Stdin(), "after the blip\n")
	require.NoError(t, err)
	require.Equal(t, "echo after the blip\n", readLines(t, out2, 1))
	require.NoError(t, p2.Stdin().Close())
	require.Equal(t, "stdin closed\n", readLines(t, out2, 1))
	require.EqualError(t, p2.Wait(), "exit status 7")
	require.Contains(t, r2.logs.String(), "agent adopted")
}

// TestDetachLeavesTheAgentRunning: a process let go of is no longer this
// server's (Wait, Stdout and Write say so, End does nothing), but the
// agent runs on with its stdin open, and is adopted again, here by the
// same server, from the last ack; again after a second let-go, by a third
// server.
func TestDetachLeavesTheAgentRunning(t *testing.T) {
	r := newRig(t, time.Minute)
	run := r.runner(t, "box1", 1)
	p1, err := r.hub.Start(shSpec("chat1", `while read l; do echo "echo $l"; done; echo "stdin closed"`))
	require.NoError(t, err)
	out := bufio.NewReader(p1.Stdout())
	_, err = io.WriteString(p1.Stdin(), "one\n")
	require.NoError(t, err)
	require.Equal(t, "echo one\n", readLines(t, out, 1))
	p1.(sandbox.Resumable).Ack(int64(len("echo one\n")))
	p1.(sandbox.Resumable).Detach()
	require.ErrorIs(t, p1.Wait(), sandbox.ErrDetached)
	_, err = out.ReadString('\n')
	require.ErrorIs(t, err, sandbox.ErrDetached)
	_, err = io.WriteString(p1.Stdin(), "lost\n")
	require.ErrorIs(t, err, sandbox.ErrDetached)
	require.NoError(t, p1.Stdin().Close(), "closes nothing")
	p1.End(time.Second)
	require.Equal(t, 1, r.hub.Runners()[0].Agents, "still counted, as an orphan")

	p2, err := (&Placer{Hub: r.hub}).Adopt("chat1")
	require.NoError(t, err)
	require.Equal(t, p1.ID(), p2.ID())
	out2 := bufio.NewReader(p2.Stdout())
	_, err = io.WriteString(p2.Stdin(), "two\n")
	require.NoError(t, err)
	require.Equal(t, "echo two\n", readLines(t, out2, 1), "its stdin stayed open")
	p2.(sandbox.Resumable).Ack(int64(len("echo two\n")))
	p2.(sandbox.Resumable).Detach()
	id := p2.(*proc).id
	waitFor(t, "the runner heard the ack", func() bool { return ackedOn(run, id) == 18 })

	r3, adopt := adoptableRig(t, time.Minute)
	r.moveTo(r3)
	r.proxy.cut()
	require.Equal(t, "chat1", <-adopt)
	p3, err := r3.hub.Adopt("chat1")
	require.NoError(t, err)
	require.Equal(t, p1.ID(), p3.ID())
	_, err = io.WriteString(p3.Stdin(), "three\n")
	require.NoError(t, err)
	require.NoError(t, p3.Stdin().Close())
	b, err := io.ReadAll(p3.Stdout())
	require.NoError(t, err)
	require.Equal(t, "echo three\nstdin closed\n", string(b))
	require.NoError(t, p3.Wait())
	_, err = r3.hub.Adopt("chat1")
	require.ErrorIs(t, err, sandbox.ErrNotHeld)
}

// exitedOn says whether the runner saw process id exit (or forgot it).
func exitedOn(run *Runner, id string) bool {
	h := heldOf(run, id)
	if h == nil {
		return true
	}
	select {
	case <-h.exited:
		return true
	default:
		return false
	}
}

// TestServerRestartedEndsWhatItDoesNotKnow: a runner that comes back to a
// restarted server ends, before the new server's first start, the agents
// whose output nobody acknowledged (they cannot be resumed): that start
// finds the slot free. An acking agent is kept, counted, and offered for
// adoption instead.
func TestServerRestartedEndsWhatItDoesNotKnow(t *testing.T) {
	r := newRig(t, time.Minute)
	run := r.runner(t, "box1", 2)
	plain, err := r.hub.Start(shSpec("chat1", "sleep 600"))
	require.NoError(t, err)
	acking, err := r.hub.Start(shSpec("chat2", "echo hi; sleep 600"))
	require.NoError(t, err)
	_, err = bufio.NewReader(acking.Stdout()).ReadString('\n')
	require.NoError(t, err)
	acking.(sandbox.Resumable).Ack(3)
	waitFor(t, "the runner heard the ack", func() bool { return ackedOn(run, acking.(*proc).id) == 3 })
	r2, adopt := adoptableRig(t, time.Minute)
	r.moveTo(r2)
	r.proxy.cut() // the old server died without letting go of anything
	require.Equal(t, "chat2", <-adopt)
	p, err := r2.hub.Start(shSpec("chat3", "echo again"))
	require.NoError(t, err, "the plain agent's slot is free")
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "again\n", line)
	waitFor(t, "the plain agent ended", func() bool { return exitedOn(run, plain.(*proc).id) })
	require.False(t, exitedOn(run, acking.(*proc).id), "the acking agent runs on")
	require.Contains(t, r2.logs.String(), "the runner ends an agent this server does not know")
	require.Contains(t, r2.logs.String(), "an agent an earlier server let go of waits to be adopted")
	name, _ := r2.hub.Placement("chat2")
	require.Equal(t, "box1", name, "the orphan's chat stays on its runner")
	_, err = r2.hub.Adopt("chat1")
	require.ErrorIs(t, err, sandbox.ErrNotHeld)
	a, err := r2.hub.Adopt("chat2")
	require.NoError(t, err)
	require.Equal(t, acking.ID(), a.ID())
	require.NoError(t, a.Signal(syscall.SIGTERM))
	require.ErrorContains(t, a.Wait(), "terminated", "signalled, its exit reported")
	a.End(time.Second)
}

// TestOrphanNotAdoptedIsEnded: an acking agent the new server does not
// adopt within its grace period is ended, and its slot is free again.
func TestOrphanNotAdoptedIsEnded(t *testing.T) {
	r := newRig(t, time.Minute)
	run := r.runner(t, "box1", 1)
	p, err := r.hub.Start(shSpec("chat1", "echo hi; sleep 600"))
	require.NoError(t, err)
	_, err = bufio.NewReader(p.Stdout()).ReadString('\n')
	require.NoError(t, err)
	p.(sandbox.Resumable).Ack(3)
	p.(sandbox.Resumable).Detach()
	id := p.(*proc).id
	waitFor(t, "the runner heard the ack", func() bool { return ackedOn(run, id) == 3 })
	r2, adopt := adoptableRig(t, 300*time.Millisecond)
	r.moveTo(r2)
	r.proxy.cut()
	require.Equal(t, "chat1", <-adopt)
	waitFor(t, "the orphan ended", func() bool { return exitedOn(run, id) })
	require.Contains(t, r2.logs.String(), "ending an agent an earlier server let go of: not adopted within the grace period")
	_, err = r2.hub.Adopt("chat1")
	require.ErrorIs(t, err, sandbox.ErrNotHeld)
	waitFor(t, "its slot free", func() bool { return r2.hub.Runners()[0].Agents == 0 })
	p2, err := r2.hub.Start(shSpec("chat1", "echo new"))
	require.NoError(t, err)
	line, err := bufio.NewReader(p2.Stdout()).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "new\n", line)
}

// TestAcksBoundTheRunnersMemory: an acking agent whose output the server
// reads but does not acknowledge is paused once MaxHeld bytes wait
// unacknowledged: the runner drops none of them (a new server could read
// them all again) and holds no more; acks let it go on, and no line is
// lost or repeated.
func TestAcksBoundTheRunnersMemory(t *testing.T) {
	r := newRig(t, time.Minute)
	run := r.runner(t, "box1", 1)
	p, err := r.hub.Start(shSpec("flood", "echo 0; read x; seq 1 100000000"))
	require.NoError(t, err)
	defer p.End(time.Second)
	id := p.(*proc).id
	read := &countReader{r: p.Stdout()}
	out := bufio.NewReader(read)
	require.Equal(t, "0\n", readLines(t, out, 1))
	p.(sandbox.Resumable).Ack(2) // from now on it is acking
	waitFor(t, "the runner heard the ack", func() bool { return ackedOn(run, id) == 2 })
	_, err = io.WriteString(p.Stdin(), "flood\n")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- readSeq(out, MaxHeld+MaxHeld/2) }() // past the pause, short of the next
	var end, base, acked int64
	waitFor(t, "the agent paused with MaxHeld unacknowledged, all of it read", func() bool {
		h := heldOf(run, id)
		h.mu.Lock()
		defer h.mu.Unlock()
		end, base, acked = h.base+int64(len(h.out)), h.base, h.acked
		return end-acked >= MaxHeld && read.n.Load() == end
	})
	require.Equal(t, int64(2), acked)
	require.LessOrEqual(t, base, acked, "nothing unacknowledged dropped")
	require.LessOrEqual(t, end-acked, int64(MaxHeld+32<<10), "no more held than MaxHeld and one read")
	p.(sandbox.Resumable).Ack(end)
	require.NoError(t, <-done, "after the ack it went on, every line in order")
	waitFor(t, "the acknowledged output dropped", func() bool {
		h := heldOf(run, id)
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.base >= end-keepSent
	})
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// readSeq reads seq's lines, checking each follows the last, until upto
// bytes.
func readSeq(out *bufio.Reader, upto int) error {
	for want, read := 1, 0; read < upto; want++ {
		line, err := out.ReadString('\n')
		if err != nil {
			return err
		}
		if got, _ := strconv.Atoi(strings.TrimSuffix(line, "\n")); got != want {
			return fmt.Errorf("line %q, want %d", line, want)
		}
		read += len(line)
	}
	return nil
}

// TestHelloSortsWhatItDoesNotKnow: of the processes a restarted server
// does not know, those with a chat whose output was acknowledged wait
// for adoption, the first one for a chat wins; the others are ended, as
// are those a runner may not claim (a chat pinned elsewhere or needing
// labels it lacks, more than its MaxAgents).
func TestHelloSortsWhatItDoesNotKnow(t *testing.T) {
	h := NewHub(nil, time.Minute, nil)
	h.runners["box2"] = &runnerState{name: "box2"}
	require.NoError(t, h.Pin("c4", "box2"))
	require.NoError(t, h.SetLabels("c5", []string{"gpu"}))
	end, adopt := h.sortUnknown(hello{Name: "box1", MaxAgents: 2, Procs: []procInfo{
		{ID: "a", Chat: "c1", Acking: true, Acked: 5},
		{ID: "b", Chat: "c1", Acking: true, Acked: 9}, // a second one for c1
		{ID: "c", Chat: "c2"},                         // never acked
		{ID: "d", Acking: true},                       // no chat
		{ID: "e", Chat: "c3", Acking: true, Exited: true},
		{ID: "f", Chat: "c4", Acking: true}, // pinned to another runner
		{ID: "g", Chat: "c5", Acking: true}, // needs a label box1 lacks
		{ID: "h", Chat: "c6", Acking: true},
		{ID: "i", Chat: "c7", Acking: true}, // past MaxAgents
	}})
	require.Equal(t, []string{"b", "c", "d", "f", "g", "i"}, end)
	require.Equal(t, []string{"c1", "c6"}, adopt)
	runner, _ := h.Placement("c1")
	require.Equal(t, "box1", runner)
	h.mu.Lock()
	require.Equal(t, int64(5), h.orphans["a"].acked)
	for _, o := range h.orphans {
		o.timer.Stop()
	}
	h.mu.Unlock()
}

// TestLostRunnersAgentsAreEndedNotAdopted: once a runner was given up
// (its chats were told their agent is gone), its acking agents coming back
// with it are ended, never adopted: the chat's next prompt starts afresh.
func TestLostRunnersAgentsAreEndedNotAdopted(t *testing.T) {
	r := newRig(t, 300*time.Millisecond)
	adopted := make(chan string, 1)
	r.hub.Adoptable = func(chat string) { adopted <- chat }
	run := r.runner(t, "box1", 1)
	p, err := r.hub.Start(shSpec("chat1", "echo hi; sleep 600"))
	require.NoError(t, err)
	_, err = bufio.NewReader(p.Stdout()).ReadString('\n')
	require.NoError(t, err)
	p.(sandbox.Resumable).Ack(3)
	id := p.(*proc).id
	waitFor(t, "the runner heard the ack", func() bool { return ackedOn(run, id) == 3 })
	r.proxy.pause(true)
	require.ErrorContains(t, p.Wait(), "runner box1 was lost")
	r.proxy.pause(false)
	waitFor(t, "the lost runner's agent ended", func() bool { return exitedOn(run, id) })
	select {
	case chat := <-adopted:
		t.Fatalf("the agent of a lost runner was offered for adoption (%s)", chat)
	default:
	}
	_, err = r.hub.Adopt("chat1")
	require.ErrorIs(t, err, sandbox.ErrNotHeld)
}

// TestLateDetachSparesANewerAttach: a detach that reaches the runner
// after another server (or the same one) attached anew names the attach
// it lets go of, so the newer one keeps its stream.
func TestLateDetachSparesANewerAttach(t *testing.T) {
	proc, err := (&sandbox.Host{}).Start(shSpec("chat1", `cat`))
	require.NoError(t, err)
	h := newHeld("p1", "chat1", proc)
	t.Cleanup(func() { proc.End(time.Second) })
	_, old, run1, err := h.attach(0)
	require.NoError(t, err)
	a, _ := net.Pipe()
	run1(a)
	_, newer, run2, err := h.attach(0)
	require.NoError(t, err)
	b, _ := net.Pipe()
	run2(b)
	require.NotEqual(t, old, newer)

	h.detach(old)
	h.mu.Lock()
	cur, letGo := h.cur, h.letGo
	h.mu.Unlock()
	assert.Equal(t, b, cur, "the newer attach keeps its stream")
	assert.Zero(t, letGo, "nothing let go of")

	h.detach(newer)
	h.mu.Lock()
	cur, letGo = h.cur, h.letGo
	h.mu.Unlock()
	assert.Nil(t, cur)
	assert.Equal(t, newer, letGo)
}
