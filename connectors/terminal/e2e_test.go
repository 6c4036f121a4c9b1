package terminal_test

// End-to-end tests: they build the real leashd binary, run `leashd chat`
// with the demo agent under a pseudo-terminal (creack/pty), type keys into
// it and read the screen through a terminal emulator (vt_test.go).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Keys as a terminal sends them.
const (
	keyUp    = "\x1b[A"
	keyDown  = "\x1b[B"
	keyEnter = "\r"
	keyCtrlC = "\x03"
	keyCtrlD = "\x04"

	rejected = "Rejected. Agent response cancelled."
	spinner  = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
)

// raceEnabled is set by race_test.go: the binary is then built with -race
// too, and a race it reports fails the test.
var raceEnabled bool

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// leashd builds cmd/leashd once per test binary.
func leashd(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "leashd-chat-e2e")
		if buildErr != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "leashd")
		// go test puts its own GOROOT/bin first on the test's PATH.
		goBin := "go"
		args := []string{"build", "-o", buildPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		if os.Getenv("LEASHD_E2E_COVERDIR") != "" {
			// Coverage of the real program: go tool covdata percent -i=DIR
			args = append(args, "-cover", "-coverpkg=github.com/leashd/leashd/...")
		}
		cmd := exec.Command(goBin, append(args, "github.com/leashd/leashd/cmd/leashd")...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return buildPath
}

// session is one `leashd chat` under a pseudo-terminal.
type session struct {
	t    *testing.T
	dir  string
	cmd  *exec.Cmd
	ptmx *os.File

	mu      sync.Mutex
	vt      *vt
	raw     bytes.Buffer
	exited  chan struct{}
	waitErr error
}

const rows, cols = 50, 110

// baseEnv is a clean environment: only what the test sets reaches leashd.
func baseEnv(dir string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"TERM=xterm-256color",
		"LEASHD_AGENT=demo",
		"LEASHD_WORKDIR=" + dir,
		"LEASHD_DB_PATH=" + filepath.Join(dir, "leashd.db"),
		"GORACE=halt_on_error=1 log_path=" + filepath.Join(dir, "race"),
		"GOCOVERDIR=" + os.Getenv("LEASHD_E2E_COVERDIR"),
	}
}

func start(t *testing.T, args []string, env ...string) *session {
	t.Helper()
	bin := leashd(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, append([]string{"chat"}, args...)...)
	cmd.Env = append(baseEnv(dir), env...)
	cmd.Dir = dir
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: rows, Cols: cols})
	require.NoError(t, err)
	s := &session{t: t, dir: dir, cmd: cmd, ptmx: ptmx, vt: newVT(rows, cols), exited: make(chan struct{})}
	go func() {
		buf := make([]byte, 8192)
		for {
			n, err := ptmx.Read(buf)
			s.mu.Lock()
			s.vt.Write(buf[:n])
			s.raw.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		s.waitErr = err
		s.mu.Unlock()
		close(s.exited)
	}()
	t.Cleanup(func() {
		// Quit as a person would (erase the line, Ctrl+D), so the program
		// ends cleanly; kill it only if it does not.
		_, _ = ptmx.Write([]byte("\x15" + keyCtrlD))
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-s.exited
		}
		ptmx.Close()
		races, _ := filepath.Glob(filepath.Join(dir, "race*"))
		for _, r := range races {
			b, _ := os.ReadFile(r)
			t.Errorf("the race detector reported in leashd chat:\n%s", b)
		}
		if t.Failed() {
			t.Logf("screen:\n%s", s.screen())
		}
		s.mu.Lock()
		unknown := s.vt.Unknown
		s.mu.Unlock()
		assert.Empty(t, unknown, "leashd sent escape sequences a terminal may not understand")
	})
	s.waitText("leashd chat (terminal:")
	s.waitCursor("> ")
	return s
}

func (s *session) send(keys ...string) {
	s.t.Helper()
	for _, k := range keys {
		_, err := s.ptmx.Write([]byte(k))
		require.NoError(s.t, err)
	}
}

func (s *session) screen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vt.Text()
}

func (s *session) cursorLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vt.CursorLine()
}

func (s *session) attrOf(sub string) attr {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.vt.AttrOf(sub)
	require.True(s.t, ok, "%q is not on the screen", sub)
	return a
}

func (s *session) rawOutput() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw.String()
}

// waitFor waits until cond holds for the screen; the deadline only bounds
// the wait, it is not what is tested.
func (s *session) waitFor(what string, cond func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		scr := s.screen()
		if cond(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s; screen:\n%s", what, scr)
		}
		select {
		case <-s.exited:
			if scr := s.screen(); cond(scr) {
				return scr
			}
			s.t.Fatalf("leashd chat exited (%v) while waiting for %s; screen:\n%s", s.waitErr, what, s.screen())
		case <-time.After(15 * time.Millisecond):
		}
	}
}

func (s *session) waitText(sub string) string {
	s.t.Helper()
	return s.waitFor(fmt.Sprintf("%q", sub), func(scr string) bool { return strings.Contains(scr, sub) })
}

func (s *session) waitCount(sub string, n int) string {
	s.t.Helper()
	return s.waitFor(fmt.Sprintf("%d× %q", n, sub), func(scr string) bool { return strings.Count(scr, sub) == n })
}

// waitCursor waits until the line with the cursor is exactly line.
func (s *session) waitCursor(line string) {
	s.t.Helper()
	line = strings.TrimRight(line, " ")
	s.waitFor(fmt.Sprintf("cursor line %q", line), func(string) bool { return s.cursorLine() == line })
}

// waitIdle waits for the normal prompt after a turn.
func (s *session) waitIdle() { s.t.Helper(); s.waitCursor(">") }

func (s *session) waitExit() error {
	s.t.Helper()
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		s.t.Fatalf("leashd chat did not exit; screen:\n%s", s.screen())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waitErr
}

// after returns the screen text after the last occurrence of marker.
func after(scr, marker string) string {
	if i := strings.LastIndex(scr, marker); i >= 0 {
		return scr[i+len(marker):]
	}
	return ""
}

const (
	green   = 32
	red     = 31
	cyan    = 36
	yellow  = 33
	magenta = 35
)

func TestChatQuestionsAsListsAndMultiSelect(t *testing.T) {
	s := start(t, nil)
	s.send("ask me a question", keyEnter)

	// A question is a choice, whatever its number of options: a numbered
	// list with a Reject line, not an approval.
	s.waitText("Choose 1-2 (↑/↓ Enter, r rejects) or type your answer:")
	scr := s.screen()
	assert.Contains(t, scr, "I have two questions before I start.")
	assert.Contains(t, scr, "Database · question 1 of 2\nWhich database?\n"+
		"❯ 1) Postgres — A server, for many users\n"+
		"  2) SQLite — A file, nothing to run\n"+
		"  r) Reject\n"+
		"Choose 1-2 (↑/↓ Enter, r rejects) or type your answer:")
	assert.NotContains(t, scr, "a/1", "no approval keys for a question")
	assert.Equal(t, cyan, s.attrOf("1) Postgres").fg, "numbers are coloured")
	assert.Equal(t, cyan, s.attrOf("2) SQLite").fg, "SQLite is an option like Postgres, not a red reject")
	assert.Equal(t, red, s.attrOf("r) Reject").fg)
	assert.NotContainsf(t, s.cursorLine(), string([]rune(spinner)[0]), "no spinner while input is needed")
	assert.False(t, strings.ContainsAny(scr, spinner), "the spinner stops when input is needed")

	// A number out of range, or two numbers, re-prompts with the valid range.
	s.send("0", keyEnter)
	s.waitText(`0 is out of range: type a number from 1 to 2 (or ↑/↓ and Enter), r rejects. Other text is your own answer ("in quotes" if it is a number or r).`)
	assert.Equal(t, yellow, s.attrOf(`0 is out of range`).fg)
	s.send("1 2", keyEnter)
	scr = s.waitText(`"1 2" names 2 options, this takes one: type a number from 1 to 2`)
	assert.NotContains(t, scr, `0 is out of range`, "the new hint replaces the old one")
	s.send("2", keyEnter)
	s.waitText("  → SQLite")

	// Multi-select: a numbered list with coloured numbers and a Reject line.
	s.waitText("Features · question 2 of 2")
	s.waitText("  r) Reject")
	scr = s.screen()
	assert.Contains(t, scr, "Which features?\n"+
		"❯ 1) [ ] Auth — Sign-in and sessions\n"+
		"  2) [ ] Search — Full-text search\n"+
		"  3) [ ] Billing — Plans and invoices\n"+
		"  r) Reject\n"+
		"Space toggles, Enter confirms (1-3 toggles, r rejects) or type your answer:")
	assert.NotContains(t, scr, "is not an answer", "the old question's hint is gone")
	assert.Equal(t, cyan, s.attrOf("1) [ ] Auth").fg, "numbers are coloured")
	assert.Equal(t, cyan, s.attrOf("3) [ ] Billing").fg)
	assert.Equal(t, red, s.attrOf("r) Reject").fg)

	s.send(keyDown)
	s.waitText("❯ 2) [ ] Search")
	s.send(" ")
	s.waitText("❯ 2) [x] Search")
	assert.Equal(t, green, s.attrOf("[x] Search").fg)
	s.send("3", keyEnter) // a number toggles too, and moves the pointer
	scr = s.waitText("❯ 3) [x] Billing")
	assert.Contains(t, scr, "  2) [x] Search")
	s.send("9", keyEnter)
	s.waitText("9 is out of range: type a number from 1 to 3 (several: 1 3) to toggle it (or Space), Enter confirms, r rejects.")
	s.send("14", keyEnter)
	s.waitText("14 is out of range: type a number from 1 to 3 (several: 1 3)")
	s.send(keyUp, keyUp)
	s.waitText("❯ 1) [ ] Auth")
	s.send(" ")
	s.waitText("❯ 1) [x] Auth")
	s.send(" ") // toggles back off
	s.waitText("❯ 1) [ ] Auth")
	s.send(keyEnter)

	// What the agent received, as Claude Code would read it.
	s.waitText(`Thanks. Your answers: Which database? SQLite; Which features? Search, Billing`)
	scr = s.waitText("Done · asked you · 2 steps")
	assert.Contains(t, scr, "  → Search, Billing")
	s.waitIdle()
}

func TestChatEnterTakesThePointerAndConfirmNeedsASelection(t *testing.T) {
	s := start(t, nil)
	s.send("question", keyEnter)
	s.waitText("Choose 1-2")
	s.send(keyEnter) // the pointer starts on the first option
	s.waitText("  → Postgres")
	s.waitText("  r) Reject")
	s.send(keyEnter)
	s.waitText("Not accepted: invalid reply: select at least one option before confirming")
	s.send("1", keyEnter)
	s.waitText("❯ 1) [x] Auth")
	s.send(keyEnter)
	s.waitText(`Thanks. Your answers: Which database? Postgres; Which features? Auth`)
	s.waitIdle()
}

func TestChatPlanReviewWithArrows(t *testing.T) {
	s := start(t, nil)
	s.send("make a plan", keyEnter)
	s.waitText("Choose 1-4 (↑/↓ Enter, r rejects):")
	scr := s.screen()
	assert.Contains(t, scr, "The agent's plan:\n  # Plan: add a greeting")
	assert.Contains(t, scr, "Approve this plan?\n"+
		"❯ 1) Approve, fresh session (recommended) — Starts afresh with only the plan; edits files without asking\n"+
		"  2) Approve, auto-accept edits — Keeps its context; edits files without asking\n"+
		"  3) Approve, review edits — Keeps its context; asks you before each file edit\n"+
		"  4) Adjust — Not yet: type what should change and it keeps planning\n"+
		"  r) Reject\n")
	assert.Equal(t, cyan, s.attrOf("4) Adjust").fg)

	for in, hint := range map[string]string{
		"0":   "0 is out of range: type a number from 1 to 4 (or ↑/↓ and Enter), r rejects.",
		"5":   "5 is out of range: type a number from 1 to 4",
		"yes": `"yes" is not a choice: type a number from 1 to 4`,
	} {
		s.send(in, keyEnter)
		s.waitText(hint)
	}
	s.send(keyDown, keyDown)
	s.waitText("❯ 3) Approve, review edits")
	s.send(keyUp)
	s.waitText("❯ 2) Approve, auto-accept edits")
	s.send(keyUp, keyUp) // wraps round to the Reject line
	s.waitText("❯ r) Reject")
	s.send(keyDown) // and back to the top
	s.waitText("❯ 1) Approve, fresh session (recommended)")
	s.send(keyDown, keyDown)
	s.waitText("❯ 3) Approve, review edits")
	s.send(keyEnter)
	s.waitText("  → Approve, review edits")
	s.waitText("Plan approved. Mode: default — each edit asks for approval.")
	s.waitText("Going ahead with the plan.")
	s.waitIdle()
}

func TestChatPlanCleanApprovalGoesOnInAFreshSession(t *testing.T) {
	s := start(t, nil)
	s.send("plan", keyEnter)
	s.waitText("Choose 1-4")
	s.send("1", keyEnter)
	s.waitText("  → Approve, fresh session (recommended)")
	s.waitText("• Plan approved. Starting a fresh session to implement it (mode: acceptEdits).")
	s.waitText("Working through the plan: writing hello.txt, then running `echo hello`.")
	// Edits are accepted in that mode; the command still asks.
	s.waitText("The agent wants to run a command:")
	assert.NotContains(t, s.screen(), "The agent wants to write a file:")
	s.send("1", keyEnter)
	s.waitText("Bash `echo hello` allowed. Output: hello")
	s.waitText("Done · wrote 1 file, ran 1 command")
	s.waitIdle()
}

func TestChatPlanAdjustIsAskedAsText(t *testing.T) {
	s := start(t, nil)
	s.send("plan", keyEnter)
	s.waitText("4) Adjust")
	s.send("4", keyEnter)
	s.waitText("  → Adjust\nWhat should change in the plan?\nType your feedback and press Enter; r or /reject rejects.")
	s.waitCursor("?")
	assert.Equal(t, magenta, s.attrOf("?").fg, "a distinct ? prompt")
	assert.True(t, s.attrOf("?").bold)
	s.send(keyEnter)
	s.waitText("Nothing typed: type your answer and press Enter (r or /reject rejects).")
	s.send("   ", keyEnter)
	s.waitCursor("?")
	s.send("add tests first", keyEnter)
	s.waitText(`Plan not approved, so I stay in plan mode. Your feedback: "add tests first"`)
	s.waitIdle()
}

func TestChatToolApprovalsOneAfterAnother(t *testing.T) {
	s := start(t, nil)
	// Two requests in one turn: a Write, then a Bash approval.
	s.send("edit and bash", keyEnter)
	s.waitText("The agent wants to write a file:")
	// A tool approval is an approval: a/1 allows, r/2 rejects, s/3 allows
	// for the session and d/4 denies with a reason.
	s.waitText("[a/r/s/d]")
	assert.Contains(t, s.screen(), "Allow it?\n  a/1 Allow   r/2 Reject   s/3 Allow for this session   d/4 Deny with a reason\n[a/r/s/d]")
	assert.NotContains(t, s.screen(), "r) Reject", "no list")
	assert.Equal(t, green, s.attrOf("a/1 Allow").fg)
	assert.Equal(t, red, s.attrOf("r/2 Reject").fg)
	assert.Equal(t, green, s.attrOf("s/3 Allow for this session").fg)
	assert.Equal(t, yellow, s.attrOf("d/4 Deny with a reason").fg)
	// Anything else, or Enter alone, re-prompts with the valid inputs.
	s.send(keyEnter)
	s.waitText("Nothing typed: type a or 1 for Allow, r or 2 for Reject, s or 3 for Allow for this session, d or 4 for Deny with a reason (Ctrl+C or /reject rejects).")
	s.send("5", keyEnter)
	scr := s.waitText(`"5" is not an answer: type a or 1 for Allow, r or 2 for Reject, s or 3 for Allow for this session, d or 4 for Deny with a reason`)
	assert.NotContains(t, scr, "Nothing typed", "the new hint replaces the old one")
	s.send("yes", keyEnter)
	s.waitText(`"yes" is not an answer`)
	s.send("a", keyEnter)
	s.waitText("  → Allow")
	s.waitText("Write of " + s.dir + "/hello.txt allowed. (The demo writes nothing to disk.)")
	s.waitText("The agent wants to run a command:\n  echo hello\n  # Print hello\nAllow it?")
	s.waitText("[a/r/s/d]")
	s.send("d", keyEnter)
	s.waitText("  → Deny\nWhy deny it? The agent reads your reason.")
	s.waitCursor("?")
	s.send(keyEnter)
	s.waitText("Nothing typed")
	s.send("not today", keyEnter)
	s.waitText("Bash `echo hello` denied: not today")
	s.waitText("Done · wrote 1 file, ran 1 command · 3 steps")
	s.waitIdle()

	s.send("bash", keyEnter)
	s.waitText("[a/r/s/d]")
	s.send("s", keyEnter)
	s.waitText("  → Allow for this session")
	s.waitText("Bash `echo hello` allowed for the session. Output: hello")
	s.waitIdle()
	s.send("bash again", keyEnter) // allowed for the session: not asked again
	s.waitCount("Bash `echo hello` allowed", 2)
	s.waitIdle()
}

// TestChatToolApprovalRRejectsAtOnce: r (or 2) at a tool approval rejects at
// once, as Ctrl+C does: no reason is asked, the agent is told the person
// rejected, the turn stops, and the prompt is back.
func TestChatToolApprovalRRejectsAtOnce(t *testing.T) {
	s := start(t, []string{"--log", "chat.log"}, "LEASHD_LOG_LEVEL=info")
	s.send("edit and bash", keyEnter)
	s.waitText("The agent wants to write a file:")
	s.waitText("[a/r/s/d]")
	s.send("r", keyEnter)
	scr := s.waitText(rejected)
	s.waitIdle()
	assert.Equal(t, red, s.attrOf(rejected).fg)
	assert.NotContains(t, scr, "Why deny it?", "no reason is asked")
	for _, gone := range []string{"The agent wants to run a command:", "denied", "Done ·", "Stopped."} {
		assert.NotContains(t, scr, gone, "the turn stopped at the rejection")
	}
	log, err := os.ReadFile(filepath.Join(s.dir, "chat.log"))
	require.NoError(t, err)
	assert.Regexp(t, `msg="interaction resolved" .*kind=tool_approval status=rejected`, string(log), "the agent was told the user rejected")

	s.send("hello", keyEnter) // the next prompt works
	s.waitText(`You said: "hello".`)
	s.waitIdle()
}

// TestChatQuestionTextAnswerAndSeveralNumbers: at a question, typed text is
// the person's own answer ("Other"); in a multi-select, "1 3" toggles both
// and "23" (of three options) 2 and 3.
func TestChatQuestionTextAnswerAndSeveralNumbers(t *testing.T) {
	s := start(t, nil)
	s.send("question", keyEnter)
	s.waitText("Choose 1-2 (↑/↓ Enter, r rejects) or type your answer:")
	s.send("MySQL, as in prod", keyEnter)
	s.waitText("  → MySQL, as in prod")
	s.waitText("Space toggles, Enter confirms (1-3 toggles, r rejects) or type your answer:")
	s.send("1 3", keyEnter)
	scr := s.waitText("❯ 3) [x] Billing")
	assert.Contains(t, scr, "  1) [x] Auth — Sign-in and sessions\n  2) [ ] Search")
	s.send("23", keyEnter) // of three options: 2 and 3
	scr = s.waitText("❯ 3) [ ] Billing")
	assert.Contains(t, scr, "  1) [x] Auth — Sign-in and sessions\n  2) [x] Search")
	s.send(keyEnter)
	s.waitText(`Thanks. Your answers: Which database? MySQL, as in prod; Which features? Auth, Search`)
	s.waitIdle()

	// In quotes a number is text; text answers a multi-select too.
	s.send("question", keyEnter)
	s.waitText("Choose 1-2")
	s.send(`"3"`, keyEnter)
	s.waitText("  → 3")
	s.waitText("Space toggles")
	s.send("none of these", keyEnter)
	s.waitText(`Thanks. Your answers: Which database? 3; Which features? none of these`)
	s.waitIdle()
}

func TestChatCtrlCRejectsAndStopsTheTurn(t *testing.T) {
	s := start(t, []string{"--log", "chat.log"}, "LEASHD_LOG_LEVEL=info")
	s.send("question", keyEnter)
	s.waitText("Choose 1-2")
	s.send(keyCtrlC)
	s.waitText(rejected)
	s.waitIdle()
	assert.Equal(t, red, s.attrOf(rejected).fg)

	// The next prompt works; the rejected turn said nothing more.
	s.send("hello", keyEnter)
	scr := s.waitText("Done · 1 step")
	assert.Contains(t, scr, "I have two questions before I start.", "what the agent said stays")
	assert.Contains(t, scr, `You said: "hello".`)
	for _, gone := range []string{"You did not answer", "Stopped.", "Interrupted by the user", "Failed", "Which features?"} {
		assert.NotContains(t, scr, gone)
	}
	// The agent was told the user rejected.
	log, err := os.ReadFile(filepath.Join(s.dir, "chat.log"))
	require.NoError(t, err)
	assert.Regexp(t, `msg="interaction resolved" .*kind=question status=rejected`, string(log))
	assert.NotContains(t, scr, "level=", "logs went to the file, not over the prompt")
}

func TestChatRejectFromEveryMode(t *testing.T) {
	s := start(t, nil)
	n := 0
	reject := func(prompt, ready string, keys ...string) {
		t.Helper()
		s.send(prompt, keyEnter)
		s.waitText(ready)
		s.send(keys...)
		n++
		s.waitCount(rejected, n)
		s.waitIdle()
	}
	reject("question", "Choose 1-2", "r", keyEnter)             // a question: r rejects, it picks no option
	reject("bash", "[a/r/s/d]", "/reject", keyEnter)            // approval: /reject
	reject("bash", "[a/r/s/d]", keyCtrlC)                       // approval: Ctrl+C
	reject("plan", "Choose 1-4", "r", keyEnter)                 // choice: r
	reject("plan", "Choose 1-4", keyUp, keyEnter)               // choice: Enter on the Reject line
	reject("plan", "Choose 1-4", keyCtrlC)                      // choice: Ctrl+C
	reject("plan", "Choose 1-4", "4", keyEnter, "r", keyEnter)  // text: r
	reject("bash", "[a/r/s/d]", "d", keyEnter, keyCtrlC)        // text: Ctrl+C
	reject("bash", "[a/r/s/d]", "4", keyEnter, "/reject", "\r") // text: /reject
	reject("bash", "[a/r/s/d]", "r", keyEnter)                  // approval: r
	reject("bash", "[a/r/s/d]", "2", keyEnter)                  // approval: 2
	s.send("question", keyEnter)
	s.waitText("Choose 1-2")
	s.send("1", keyEnter)
	s.waitText("Space toggles")
	s.send(" ", keyCtrlC) // multi-select: Ctrl+C after a toggle
	n++
	scr := s.waitCount(rejected, n)
	s.waitIdle()
	for _, gone := range []string{"You did not answer", "Plan not approved", "Plan rejected", "denied", "Stopped.", "Failed"} {
		assert.NotContains(t, scr, gone, "a rejected turn's response is cancelled")
	}
	s.send("hello", keyEnter)
	s.waitText(`You said: "hello".`)
	s.waitIdle()
}

func TestChatExpiredQuestion(t *testing.T) {
	s := start(t, nil, "LEASHD_APPROVAL_TIMEOUT_SECONDS=1")
	s.send("bash", keyEnter)
	s.waitText("[a/r/s/d]")
	s.waitText("✗ Expired: No answer came within 1s; the user did not respond.")
	s.waitText("Bash `echo hello` denied:")
	s.waitIdle()
}

func TestChatSpinnerAndCtrlCWhileWorking(t *testing.T) {
	s := start(t, nil)
	long := strings.Repeat("word ", 400) // the demo echoes it slowly
	s.send(long, keyEnter)
	s.waitFor("the spinner", func(string) bool { return strings.ContainsAny(s.cursorLine(), spinner) })
	s.send(keyCtrlC)
	s.waitText("• Stopped.")
	scr := s.waitText("Failed · 1 step")
	s.waitIdle()
	assert.False(t, strings.ContainsAny(s.cursorLine(), spinner))
	assert.NotContains(t, after(scr, "You said"), "to see how leashd asks you", "the turn stopped before its end")
}

func TestChatNoColor(t *testing.T) {
	s := start(t, nil, "NO_COLOR=1")
	s.send("question", keyEnter)
	s.waitText("Choose 1-2")
	s.send("2", keyEnter)
	s.waitText("❯ 1) [ ] Auth") // the pointer is still shown
	s.send(keyCtrlC)
	s.waitText(rejected)
	sgr := regexp.MustCompile(`\x1b\[[0-9;]*m`)
	assert.Empty(t, sgr.FindAllString(s.rawOutput(), 3), "NO_COLOR: no colours")
}

func TestChatChatIDAndQuit(t *testing.T) {
	s := start(t, []string{"--chat", "work"})
	s.waitText("leashd chat (terminal:work)")
	s.send("/status", keyEnter)
	s.waitText("• Agent: the built-in demo agent")
	s.send("/reject", keyEnter)
	s.waitText("Nothing to reject: no question is waiting for an answer.")
	s.send("abc", keyCtrlC) // Ctrl+C clears the line
	s.waitIdle()
	s.send(keyCtrlD)
	require.NoError(t, s.waitExit(), "Ctrl+D on an empty line quits cleanly")

	s = start(t, nil)
	s.send("/exit", keyEnter)
	require.NoError(t, s.waitExit())
}

func TestChatPipedInputIsPlain(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(leashd(t), "chat")
	cmd.Env = baseEnv(dir)
	cmd.Dir = dir
	// Answers wait for their questions: 2 → SQLite, then toggle 1 and 3
	// (a line's spaces are not Space keys) and confirm, then a prompt of
	// its own; the end of input quits.
	cmd.Stdin = strings.NewReader("question\n2\n 1, 3\n\nhello\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	done := make(chan error, 1)
	require.NoError(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "stderr: %s", errOut.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("leashd chat did not finish; output:\n%s", out.String())
	}
	o := out.String()
	assert.NotContains(t, o, "\x1b", "no escape sequences without a terminal")
	assert.Contains(t, o, `Thanks. Your answers: Which database? SQLite; Which features? Auth, Billing`)
	assert.Contains(t, o, `You said: "hello".`)
	assert.Equal(t, 2, strings.Count(o, "Done · "), "both turns ran to the end:\n%s", o)
	assert.Empty(t, errOut.String(), "without --log only warnings are logged (to stderr)")
	races, _ := filepath.Glob(filepath.Join(dir, "race*"))
	assert.Empty(t, races)
}

// TestChatPipedInputEndsAtAQuestion: the input ends while a question waits:
// nobody is left to answer it, so it is rejected and leashd chat ends
// cleanly.
func TestChatPipedInputEndsAtAQuestion(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(leashd(t), "chat")
	cmd.Env = baseEnv(dir)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("plan\n")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "  - **Risk:** none, it is a demo.\nApprove this plan?\nThe input has ended: nobody can answer this.\n"+rejected)
	assert.NotContains(t, string(out), "Plan approved")
}

// TestChatOutputRedirectedFromATerminal: typing at a terminal with the
// output redirected (leashd chat > file): the terminal's own line editing is
// used, and the file gets plain text.
func TestChatOutputRedirectedFromATerminal(t *testing.T) {
	dir := t.TempDir()
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer ptmx.Close()
	outPath := filepath.Join(dir, "out.txt")
	out, err := os.Create(outPath)
	require.NoError(t, err)
	defer out.Close()
	cmd := exec.Command(leashd(t), "chat")
	cmd.Env = baseEnv(dir)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	require.NoError(t, cmd.Start())
	tty.Close()
	echo := &screenWriter{vt: newVT(rows, cols)}
	go func() { _, _ = io.Copy(echo, ptmx) }() // what the person sees
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitFile := func(sub string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			b, _ := os.ReadFile(outPath)
			if strings.Contains(string(b), sub) {
				return
			}
			require.True(t, time.Now().Before(deadline), "no %q in the file:\n%s", sub, b)
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFile("leashd chat (terminal:local)") // the terminal is set up
	_, err = ptmx.Write([]byte("hello\r"))
	require.NoError(t, err)
	waitFile("Done · 1 step")
	_, err = ptmx.Write([]byte(keyCtrlD)) // end of input at the start of a line
	require.NoError(t, err)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("leashd chat did not end at the end of input")
	}
	b, err := os.ReadFile(outPath)
	require.NoError(t, err)
	assert.Contains(t, string(b), `You said: "hello".`)
	assert.NotContains(t, string(b), "\x1b", "plain text in the file")
	echo.mu.Lock()
	defer echo.mu.Unlock()
	assert.Contains(t, echo.vt.Text(), "hello", "what was typed was echoed by the terminal")
}

func TestChatHelp(t *testing.T) {
	cmd := exec.Command(leashd(t), "chat", "-h")
	cmd.Env = baseEnv(t.TempDir())
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "Usage: leashd chat [--chat ID] [--log FILE]")
	assert.Contains(t, string(out), "runs its own engine in this process")
}

func TestChatBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"--chat", ""}, {"--chat", "a b"}, {"extra"}} {
		cmd := exec.Command(leashd(t), append([]string{"chat"}, args...)...)
		cmd.Env = baseEnv(t.TempDir())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "args %q: %v", args, err)
		assert.Equal(t, 2, ee.ExitCode(), "args %q", args)
		assert.Contains(t, stderr.String(), "leashd chat: ", "args %q", args)
		assert.Contains(t, stderr.String(), "Usage: leashd chat [--chat ID]", "args %q", args)
	}
}
