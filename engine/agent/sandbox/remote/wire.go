package remote

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// Limits on what one side accepts from the other.
const (
	// maxLine bounds every JSON line read: a hello, a stream's header, a
	// control message. A spec with long arguments fits; less than a stream window.
	maxLine = 128 << 10
	// maxHelloProcs bounds the processes a hello may list.
	maxHelloProcs = 4096
	// maxLabels and maxWord bound a runner's labels and its name.
	maxLabels = 32
	maxWord   = 64
	// protocolVersion is what this side speaks.
	protocolVersion = 1
)

// MaxHeld is how many bytes of an agent's output a runner holds that the
// server has not read yet; then it stops reading the agent's stdout.
const MaxHeld = 8 << 20

// Stream kinds (openReq.Op).
const (
	opStart  = "start"
	opAttach = "attach"
	opStderr = "stderr"
	// opPut writes a file a person sent into the runner's working
	// directory (put.go).
	opPut = "put"
)

// Control message kinds (ctlMsg.Op).
const (
	ctlSignal = "signal"
	ctlEnd    = "end"
	ctlExit   = "exit"
	// ctlAck (server → runner): the stdout bytes before Off are handled
	// for good; the runner may drop them, and a later server reads on
	// from Off.
	ctlAck = "ack"
	// ctlDetach (server → runner): the server lets go of the process
	// (sandbox.Resumable.Detach); its current io stream ends without
	// closing the agent's stdin.
	ctlDetach = "detach"
)

// hello is what a runner says first on the control stream.
type hello struct {
	Version   int        `json:"version"`
	Name      string     `json:"name"`
	Labels    []string   `json:"labels,omitempty"`
	MaxAgents int        `json:"max_agents"`
	Procs     []procInfo `json:"procs,omitempty"`
}

// procInfo is a process a runner holds.
type procInfo struct {
	ID     string `json:"id"`
	Chat   string `json:"chat,omitempty"`
	PID    string `json:"pid,omitempty"`
	Exited bool   `json:"exited,omitempty"`
	Err    string `json:"err,omitempty"` // its exit error, "" for success
	// Acking says a server acknowledged its output (ctlAck): a restarted
	// server may adopt it from Acked on instead of ending it.
	Acking bool  `json:"acking,omitempty"`
	Acked  int64 `json:"acked,omitempty"`
}

// welcome is the server's answer to a hello.
type welcome struct {
	Error string `json:"error,omitempty"`
	// End lists the held processes this server does not know (it
	// restarted) and will not adopt: the runner ends them before it
	// takes a new start, so they never hold a slot the server counts as
	// free.
	End []string `json:"end,omitempty"`
	// MaxFileBytes is the largest file the server takes from the
	// runner: the runner refuses a larger one itself.
	MaxFileBytes int64 `json:"max_file_bytes,omitempty"`
}

// openReq is the header the server writes on a stream it opens.
type openReq struct {
	Op   string        `json:"op"`
	ID   string        `json:"id"`
	Spec *sandbox.Spec `json:"spec,omitempty"`
	// StdoutFrom is, on attach, how many stdout bytes the server has.
	StdoutFrom int64 `json:"stdout_from,omitempty"`
	// Path and Size are, on put, where the file goes (relative to the
	// working directory) and how many bytes follow the runner's answer.
	Path string `json:"path,omitempty"`
	Size int64  `json:"size,omitempty"`
}

// openResp is the runner's answer to an openReq.
type openResp struct {
	Error string `json:"error,omitempty"`
	PID   string `json:"pid,omitempty"`
	// StdinHave is, on attach, how many stdin bytes the agent was given.
	StdinHave int64 `json:"stdin_have,omitempty"`
	// Gen names the attach (start or attach) the stream is, for a
	// detach to name the one it lets go of.
	Gen int `json:"gen,omitempty"`
}

// ctlMsg is a message on the control stream after the hello.
type ctlMsg struct {
	Op      string `json:"op"`
	ID      string `json:"id"`
	Sig     int    `json:"sig,omitempty"`
	GraceMS int64  `json:"grace_ms,omitempty"`
	Err     string `json:"err,omitempty"`
	Off     int64  `json:"off,omitempty"` // ctlAck's offset
	// Gen is, on ctlDetach, the attach let go of (openResp.Gen): a detach
	// that arrives after a newer attach (another server's adoption) does
	// not end that one. 0 (an older server): the current one.
	Gen int `json:"gen,omitempty"`
}

// errLineTooLong is returned for a line over maxLine.
var errLineTooLong = fmt.Errorf("a message longer than %d bytes", maxLine)

// readLine reads one newline-terminated line of at most maxLine bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(line) >= maxLine { // no room left for its newline
				return nil, errLineTooLong
			}
		case errors.Is(err, io.EOF) && len(line) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// readMsg reads one JSON line into v; anything else is an error naming
// what was wrong.
func readMsg(r *bufio.Reader, v any) error {
	line, err := readLine(r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("not a JSON message: %w", err)
	}
	return nil
}

// writeMsg writes v as one JSON line.
func writeMsg(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// check says what is wrong with a hello, or nil.
func (h *hello) check() error {
	if h.Version != protocolVersion {
		return fmt.Errorf("protocol version %d (accepted: %d)", h.Version, protocolVersion)
	}
	if err := checkWord("name", h.Name); err != nil {
		return err
	}
	if len(h.Labels) > maxLabels {
		return fmt.Errorf("%d labels (accepted: at most %d)", len(h.Labels), maxLabels)
	}
	for _, l := range h.Labels {
		if err := checkWord("label", l); err != nil {
			return err
		}
	}
	if h.MaxAgents < 1 || h.MaxAgents > 10000 {
		return fmt.Errorf("max agents %d (accepted: 1 to 10000)", h.MaxAgents)
	}
	if len(h.Procs) > maxHelloProcs {
		return fmt.Errorf("%d processes (accepted: at most %d)", len(h.Procs), maxHelloProcs)
	}
	for _, p := range h.Procs {
		if p.Acked < 0 {
			return fmt.Errorf("process %q acked at %d (accepted: 0 or more)", p.ID, p.Acked)
		}
	}
	return nil
}

// checkWord accepts names and labels: 1 to maxWord letters, digits, '.',
// '-' and '_'.
func checkWord(what, s string) error {
	if s == "" || len(s) > maxWord {
		return fmt.Errorf("%s %q: must be 1 to %d characters", what, s, maxWord)
	}
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_')
	}) >= 0 {
		return fmt.Errorf("%s %q: accepted are letters, digits, '.', '-' and '_'", what, s)
	}
	return nil
}

// CheckName says what is wrong with a runner name or label, or nil.
func CheckName(what, s string) error { return checkWord(what, s) }
