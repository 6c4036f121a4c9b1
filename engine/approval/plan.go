package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/leashd/leashd/engine/agent"
)

// MaxPlanBytes bounds a plan read from a plan file; a longer plan is shown
// cut, with a note saying so (the agent keeps the whole file).
const MaxPlanBytes = 256 << 10

// PlanOf reads ExitPlanMode's plan: its "plan", else the file at
// "planFilePath" — only when planDir is given (the plan directory of the
// agent leashd runs, agent.PermissionRequest.PlanDir) and the file is a
// regular file inside it once symlinks are resolved. A request from a
// program (planDir "") never makes leashd open a file. shown is the plan as
// people review it: cut at MaxPlanBytes with a note (a plan file is read
// only that far, so then plan is cut too; an inline plan reaches the agent
// whole). refusal is what the agent is told when there is none, and notice
// what the chat is told then ("" when nothing needs saying).
func PlanOf(input json.RawMessage, planDir string) (plan, shown, refusal, notice string) {
	var in planInput
	if err := json.Unmarshal(input, &in); err != nil {
		return "", "", "leashd could not read the ExitPlanMode input: " + err.Error(),
			"The agent sent a plan leashd could not read (" + err.Error() + "); it was told so."
	}
	plan = in.Plan
	if strings.TrimSpace(plan) == "" && in.PlanFilePath != "" {
		p, err := readPlanFile(in.PlanFilePath, planDir)
		if err != nil {
			return "", "", "leashd could not read the plan file (" + err.Error() + "); call ExitPlanMode again with the whole plan in \"plan\".",
				"The agent's plan file could not be read (" + err.Error() + "); it was told to send the plan as text."
		}
		if strings.TrimSpace(p) != "" {
			return p, p, "", "" // already cut to maxPlanBytes
		}
	}
	if strings.TrimSpace(plan) == "" {
		return "", "", "The plan is empty; write the plan before asking for review.", ""
	}
	shown = plan
	if len(shown) > MaxPlanBytes { // cut like a plan file: megabytes would be hundreds of chat messages
		const noteRoom = 200 // the note fits in too: people are shown at most MaxPlanBytes
		part, cut := CapText(shown, MaxPlanBytes-noteRoom)
		shown = part + "\n\n" + agent.TruncatedNote(cut) + " — the plan is longer than leashd shows for review"
	}
	return plan, shown, "", ""
}

type planInput struct {
	Plan         string `json:"plan"`
	PlanFilePath string `json:"planFilePath"`
}

// errNoPlanFiles is why a plan file is not read for a request that has no
// plan directory: a program's.
var errNoPlanFiles = errors.New("leashd reads no plan file for this request; only the plan given inline")

// readPlanFile reads the plan file at path (relative: to planDir), which
// must be a regular file inside planDir after resolving symlinks, at most
// MaxPlanBytes of it. Errors name the path as given, nothing of the file.
func readPlanFile(path, planDir string) (string, error) {
	if planDir == "" {
		return "", errNoPlanFiles
	}
	real, checked, err := confinedPlanFile(path, planDir)
	if err != nil {
		return "", err
	}
	// Non-blocking: a FIFO put there after the check does not hang the turn.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", fmt.Errorf("%s: cannot be opened", path)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(st, checked) {
		return "", fmt.Errorf("%s: changed while it was read", path) // swapped after the check
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxPlanBytes+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > MaxPlanBytes { // the note fits in too: people are shown at most MaxPlanBytes
		note := fmt.Sprintf("\n\n… (plan cut at %d KiB for display; the full plan is in %s)", MaxPlanBytes>>10, path)
		part, _ := CapText(string(b), max(MaxPlanBytes-len(note), 0))
		return part + note, nil
	}
	return string(b), nil
}

// confinedPlanFile is path's real location, refused unless it is a regular
// file inside planDir's real location (so no "..", no symlink out of the
// directory, no device, FIFO or directory).
func confinedPlanFile(path, planDir string) (string, os.FileInfo, error) {
	dir, err := filepath.EvalSymlinks(planDir)
	if err != nil {
		return "", nil, fmt.Errorf("%s: the agent's plan directory %s is not there", path, planDir)
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(planDir, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", nil, fmt.Errorf("%s: no such plan file", path)
	}
	rel, err := filepath.Rel(dir, real)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", nil, fmt.Errorf("%s: not in the agent's plan directory %s", path, planDir)
	}
	st, err := os.Lstat(real)
	if err != nil || !st.Mode().IsRegular() {
		return "", nil, fmt.Errorf("%s: not a regular file", path)
	}
	return real, st, nil
}

// CapText returns the part of text that fits in room bytes (cut at a rune
// boundary) and how many bytes were left out.
func CapText(text string, room int) (string, int) {
	if room >= len(text) {
		return text, 0
	}
	room = max(room, 0)
	for room > 0 && !utf8.RuneStart(text[room]) {
		room--
	}
	return text[:room], len(text) - room
}
