package remote

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/sandbox"
)

// ErrNoRunner is wrapped by a start that found no runner with room; it is
// an agent.ErrNoRoom: the engine keeps the chat's prompt for later.
var ErrNoRunner error = noRoom("no runner has a free agent slot")

// noRoom is an error saying there is no room now, which may change.
type noRoom string

func (e noRoom) Error() string        { return string(e) }
func (e noRoom) Is(target error) bool { return target == agent.ErrNoRoom }

// Start starts spec on a runner: the chat's own (it stays on the runner
// that ran it, where its session files are), or else the least busy
// connected runner whose labels include the chat's.
func (h *Hub) Start(spec sandbox.Spec) (sandbox.Process, error) {
	h.mu.Lock()
	o := h.orphanLocked(spec.Name)
	h.mu.Unlock()
	if o != nil && spec.Name != "" {
		// Two agents of one chat would share its session: the one an
		// earlier server let go of is not adopted now.
		h.dropOrphan(o, "a new agent starts for its chat")
	}
	rs, err := h.pick(spec.Name)
	if err != nil {
		return nil, err
	}
	id := newID()
	// Known before it starts: its exit may be reported at once.
	p := newProc(h, id, spec.Name, rs.name)
	h.mu.Lock()
	h.procs[id] = p
	h.mu.Unlock()
	st, resp, err := rs.conn.open(openReq{Op: opStart, ID: id, Spec: &spec}, 60*time.Second)
	if err != nil {
		h.forget(p)
		return nil, err
	}
	// A process that already ended has no stderr to give.
	errSt, _, _ := rs.conn.open(openReq{Op: opStderr, ID: id}, 30*time.Second)
	p.run(rs.conn, resp, st, errSt)
	h.mu.Lock()
	if spec.Name != "" && spec.Name != "version" {
		h.pinned[spec.Name] = rs.name
	}
	h.mu.Unlock()
	h.log.Info("agent started on a runner", "runner", rs.name, "chat", spec.Name, "pid", resp.PID)
	return p, nil
}

// pick chooses the runner for a chat.
func (h *Hub) pick(chat string) (*runnerState, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	load := h.loadLocked()
	if name, ok := h.pinned[chat]; ok {
		rs := h.runners[name]
		switch {
		case rs == nil:
			delete(h.pinned, chat) // lost: go elsewhere
		case rs.conn == nil:
			return nil, noRoom(fmt.Sprintf("this chat's runner %s is disconnected (waiting up to %s for it)", name, h.grace))
		case load[name] >= rs.max:
			return nil, fmt.Errorf("%w: this chat's runner %s is full (%d agents)", ErrNoRunner, name, rs.max)
		default:
			return rs, nil
		}
	}
	want := h.labels[chat]
	var best *runnerState
	anyConnected := false
	for _, rs := range h.runners {
		anyConnected = anyConnected || rs.conn != nil
		if rs.conn == nil || load[rs.name] >= rs.max || !hasAll(rs.labels, want) {
			continue
		}
		if best == nil || load[rs.name]*best.max < load[best.name]*rs.max ||
			load[rs.name]*best.max == load[best.name]*rs.max && rs.name < best.name {
			best = rs
		}
	}
	if best == nil {
		if !anyConnected {
			return nil, fmt.Errorf("%w: no runner is connected", ErrNoRunner)
		}
		if len(want) > 0 {
			return nil, fmt.Errorf("%w with labels %s", ErrNoRunner, strings.Join(want, ","))
		}
		return nil, ErrNoRunner
	}
	return best, nil
}

// loadLocked counts each runner's live agents, the orphans among them.
func (h *Hub) loadLocked() map[string]int {
	load := map[string]int{}
	for _, p := range h.procs {
		load[p.runner]++
	}
	for _, o := range h.orphans {
		load[o.runner]++
	}
	return load
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Capacity is how many agents the runners may hold now: each connected
// runner's maximum, and the agents a runner away within its grace period
// still holds.
func (h *Hub) Capacity() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	load := h.loadLocked()
	n := 0
	for _, rs := range h.runners {
		if rs.conn != nil {
			n += max(rs.max, load[rs.name])
		} else {
			n += load[rs.name]
		}
	}
	return n
}

// RunnerInfo describes a runner for /api/runners, /metrics and /status.
type RunnerInfo struct {
	Name      string    `json:"name"`
	Labels    []string  `json:"labels"`
	MaxAgents int       `json:"max_agents"`
	Agents    int       `json:"agents"`
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since"` // connected, or away, since
	Chats     []string  `json:"chats"`
}

// Runners lists the runners known now, by name.
func (h *Hub) Runners() []RunnerInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	load := h.loadLocked()
	var out []RunnerInfo
	for _, rs := range h.runners {
		ri := RunnerInfo{Name: rs.name, Labels: slices.Clone(rs.labels), MaxAgents: rs.max, Agents: load[rs.name],
			Connected: rs.conn != nil, Since: rs.since, Chats: []string{}}
		for _, p := range h.procs {
			if p.runner == rs.name && p.chat != "" {
				ri.Chats = append(ri.Chats, p.chat)
			}
		}
		for _, o := range h.orphans {
			if o.runner == rs.name {
				ri.Chats = append(ri.Chats, o.chat)
			}
		}
		sort.Strings(ri.Chats)
		out = append(out, ri)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Placement says where a chat's agent runs or will run: its runner ("" for
// none yet) and the labels it asks for.
func (h *Hub) Placement(chat string) (runner string, labels []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pinned[chat], slices.Clone(h.labels[chat])
}

// Pin makes a chat's next agent start on runner (which must be known);
// "" unpins it. A running agent is not moved.
func (h *Hub) Pin(chat, runner string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if runner == "" {
		delete(h.pinned, chat)
		return nil
	}
	if h.runners[runner] == nil {
		return fmt.Errorf("no runner named %q is connected", runner)
	}
	h.pinned[chat] = runner
	return nil
}

// SetLabels sets the labels a chat's runner must have (none: any runner).
func (h *Hub) SetLabels(chat string, labels []string) error {
	for _, l := range labels {
		if err := checkWord("label", l); err != nil {
			return err
		}
	}
	if len(labels) > maxLabels {
		return fmt.Errorf("%d labels (accepted: at most %d)", len(labels), maxLabels)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(labels) == 0 {
		delete(h.labels, chat)
	} else {
		h.labels[chat] = slices.Clone(labels)
	}
	return nil
}

// Placer is the sandbox.Sandbox the drivers get when runners are on: up
// to LocalMax agents run on the server itself (Local), the others on
// runners. A chat whose agent ran on a runner, or that asked for one,
// stays on runners.
type Placer struct {
	Local    sandbox.Sandbox
	LocalMax int
	Hub      *Hub

	mu    sync.Mutex
	local int
}

// Name implements sandbox.Sandbox: the local sandbox's mode.
func (p *Placer) Name() string { return p.Local.Name() }

// LookPath implements sandbox.Sandbox: runners find their own program, so
// with no local agents any name is accepted as it is.
func (p *Placer) LookPath(file string) (string, error) {
	if p.LocalMax > 0 {
		return p.Local.LookPath(file)
	}
	return file, nil
}

// Start implements sandbox.Sandbox.
func (p *Placer) Start(spec sandbox.Spec) (sandbox.Process, error) {
	runner, labels := p.Hub.Placement(spec.Name)
	p.mu.Lock()
	local := runner == "" && len(labels) == 0 && p.local < p.LocalMax
	if local {
		p.local++
	}
	p.mu.Unlock()
	if !local {
		return p.Hub.Start(spec)
	}
	proc, err := p.Local.Start(spec)
	if err != nil {
		p.release()
		return nil, err
	}
	return &localProc{Process: proc, release: sync.OnceFunc(p.release)}, nil
}

func (p *Placer) release() {
	p.mu.Lock()
	p.local--
	p.mu.Unlock()
}

// LocalAgents is how many agents run on the server now.
func (p *Placer) LocalAgents() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.local
}

// localProc frees its local slot once it has exited.
type localProc struct {
	sandbox.Process
	release func()
}

func (l *localProc) Wait() error {
	defer l.release()
	return l.Process.Wait()
}
