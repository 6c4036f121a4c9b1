package approval

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/leashd/leashd/engine/agent"
)

// MaxPlanBytes bounds a plan read from a plan file; a longer plan is shown
// cut, with a note saying so (the agent keeps the whole file).
const MaxPlanBytes = 256 << 10

// PlanOf reads ExitPlanMode's plan: its "plan", else the file at
// "planFilePath". shown is the plan as people review it: cut at
// MaxPlanBytes with a note (a plan file is read only that far, so then plan
// is cut too; an inline plan reaches the agent whole). refusal is what the
// agent is told when there is none, and notice what the chat is told then
// ("" when nothing needs saying).
func PlanOf(input json.RawMessage, workDir string) (plan, shown, refusal, notice string) {
	var in planInput
	if err := json.Unmarshal(input, &in); err != nil {
		return "", "", "leashd could not read the ExitPlanMode input: " + err.Error(),
			"The agent sent a plan leashd could not read (" + err.Error() + "); it was told so."
	}
	plan = in.Plan
	if strings.TrimSpace(plan) == "" && in.PlanFilePath != "" {
		p, err := readPlanFile(in.PlanFilePath, workDir)
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
		part, cut := CapText(shown, MaxPlanBytes)
		shown = part + "\n\n" + agent.TruncatedNote(cut) + " — the plan is longer than leashd shows for review"
	}
	return plan, shown, "", ""
}

type planInput struct {
	Plan         string `json:"plan"`
	PlanFilePath string `json:"planFilePath"`
}

func readPlanFile(path, workDir string) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(workDir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxPlanBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxPlanBytes {
		cut := b[:MaxPlanBytes]
		for len(cut) > 0 && !utf8.Valid(cut) {
			cut = cut[:len(cut)-1]
		}
		return string(cut) + fmt.Sprintf("\n\n… (plan cut at %d KiB for display; the full plan is in %s)", MaxPlanBytes>>10, path), nil
	}
	return string(b), nil
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
