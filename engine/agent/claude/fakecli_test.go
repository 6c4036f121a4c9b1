package claude

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a fake Claude Code CLI: with
// FAKECLI_CLAUDE set it speaks the stream-json protocol instead of
// running tests. FAKECLI_CLAUDE selects start-up behaviour; what a turn
// does is chosen by its prompt's first word.
func TestMain(m *testing.M) {
	if mode := os.Getenv("FAKECLI_CLAUDE"); mode != "" {
		os.Exit(fakeCLI(mode))
	}
	os.Exit(m.Run())
}

// Size of the huge (but acceptable) line the "garbage" turn prints.
const hugeText = 16<<20 + 1

// fakeLimit is the line limit the tests give the driver, so that the
// over-long line need not be 64 MiB.
const fakeLimit = 16<<20 + 64<<10

// floodBytes is the size of each huge line the "flood" turn prints
// (FAKECLI_FLOOD_BYTES, default 50 MB).
func floodBytes() int {
	if n, err := strconv.Atoi(os.Getenv("FAKECLI_FLOOD_BYTES")); err == nil && n > 0 {
		return n
	}
	return 50 << 20
}

// fakeCLI is the fake CLI's main: mode is its start-up behaviour, and it
// returns the exit code.
func fakeCLI(mode string) int {
	f := &fakeClaude{mode: mode, w: bufio.NewWriterSize(os.Stdout, 1<<20), permMode: "default", interrupted: make(chan struct{}, 1)}
	switch mode {
	case "exit-early":
		fmt.Fprintln(os.Stderr, "error: unknown option '--bogus'\nRun claude --help for usage.")
		return 2
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
	case "close-stdin": // answers the handshake, then stops reading but lives on
		line, _ := bufio.NewReader(os.Stdin).ReadBytes('\n')
		var m struct {
			RequestID string `json:"request_id"`
		}
		json.Unmarshal(line, &m)
		f.respond(m.RequestID, map[string]any{})
		os.Stdin.Close()
		select {}
	}
	f.in = readFakeInput()
	if mode == "garbage-at-start" {
		f.raw("Debugger listening on ws://127.0.0.1:9229")
		f.raw("{not json")
	}
	for m := range f.in {
		if m.Type != "user" {
			f.handleControl(m)
			continue
		}
		f.out(map[string]any{"type": "system", "subtype": "init", "session_id": fakeSID, "cwd": "ignored"})
		word, rest, _ := strings.Cut(m.Message.Content, " ")
		turn, ok := fakeTurns[word]
		if !ok {
			f.result("unknown prompt", true, "success")
			continue
		}
		if code, exit := turn(f, rest); exit {
			return code
		}
	}
	// stdin closed
	if mode == "ignore-term" || mode == "term-exits" {
		select {} // only a signal ends this
	}
	return 0
}

// fakeSID is the session ID the fake CLI reports.
const fakeSID = "fake-session-1"

// fakeMsg is one line the fake CLI reads from stdin.
type fakeMsg struct {
	Type      string          `json:"type"`
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	Response  json.RawMessage `json:"response"`
	Message   struct {
		Content string `json:"content"`
	} `json:"message"`
	raw string
}

// readFakeInput reads stdin into the channel it returns, closed at EOF.
func readFakeInput() chan fakeMsg {
	in := make(chan fakeMsg)
	go func() {
		defer close(in)
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m fakeMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				fmt.Fprintln(os.Stderr, "fake claude: bad input line:", err)
				continue
			}
			m.raw = sc.Text()
			in <- m
		}
	}()
	return in
}

// fakeClaude is the fake CLI's state while it runs.
type fakeClaude struct {
	mode        string
	w           *bufio.Writer
	in          chan fakeMsg
	permMode    string        // the permission mode set_permission_mode set
	interrupted chan struct{} // an interrupt arrived
}

func (f *fakeClaude) out(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	f.w.Write(b)
	f.w.WriteByte('\n')
	f.w.Flush()
}

func (f *fakeClaude) raw(s string) {
	f.w.WriteString(s)
	f.w.WriteByte('\n')
	f.w.Flush()
}

func fakeSubtype(m fakeMsg) string {
	var r struct {
		Subtype string `json:"subtype"`
	}
	json.Unmarshal(m.Request, &r)
	return r.Subtype
}

func (f *fakeClaude) respond(id string, body any) {
	f.out(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id, "response": body}})
}

func (f *fakeClaude) result(text string, isErr bool, sub string) {
	f.out(map[string]any{"type": "result", "subtype": sub, "is_error": isErr, "result": text, "session_id": fakeSID, "total_cost_usd": 0.25, "num_turns": 2, "duration_ms": 7})
}

func (f *fakeClaude) askTool(id, tool string, input any) {
	f.out(map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{
		"subtype": "can_use_tool", "tool_name": tool, "input": input, "tool_use_id": "toolu_" + id,
		"permission_suggestions": []any{map[string]any{"type": "addRules", "rules": []any{map[string]string{"toolName": tool}}, "behavior": "allow", "destination": "localSettings"}},
	}})
}

func (f *fakeClaude) assistantText(text string) {
	f.out(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}})
}

// waitResponse waits for the control_response to id, handling other
// control requests meanwhile; it returns the raw response body.
func (f *fakeClaude) waitResponse(id string, d time.Duration) (string, bool) {
	timeout := time.After(d)
	for {
		select {
		case m, ok := <-f.in:
			if !ok {
				return "", false
			}
			if m.Type == "control_response" {
				var r struct {
					RequestID string `json:"request_id"`
				}
				json.Unmarshal(m.Response, &r)
				if r.RequestID == id {
					return string(m.Response), true
				}
				continue
			}
			f.handleControl(m)
		case <-timeout:
			return "", false
		}
	}
}

// handleControl answers the control requests the driver sends.
func (f *fakeClaude) handleControl(m fakeMsg) {
	if m.Type != "control_request" {
		return
	}
	switch fakeSubtype(m) {
	case "initialize":
		if f.mode == "no-init" {
			return
		}
		f.respond(m.RequestID, map[string]any{"commands": []any{}, "models": []any{}})
	case "set_permission_mode":
		var r struct {
			Mode string `json:"mode"`
		}
		json.Unmarshal(m.Request, &r)
		if r.Mode == "bogus" {
			f.out(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": m.RequestID, "error": "Invalid permission mode: bogus"}})
			return
		}
		f.permMode = r.Mode
		f.respond(m.RequestID, map[string]any{})
	case "interrupt":
		f.respond(m.RequestID, map[string]any{})
		select {
		case f.interrupted <- struct{}{}:
		default:
		}
	}
}
