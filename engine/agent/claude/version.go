package claude

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// The Claude Code versions leashd is tested with: CI runs the real-CLI
// tests against both ends (.ci/versions.env: CLAUDE_CODE_OLDEST_VERSION and
// CLAUDE_CODE_VERSION; TestTestedRangeMatchesCI keeps them equal).
const (
	OldestTestedVersion = "2.1.197"
	NewestTestedVersion = "2.1.332"
)

// Version is a Claude Code release number, major.minor.patch.
type Version struct{ Major, Minor, Patch int }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than o.
func (v Version) Compare(o Version) int {
	for _, d := range [3]int{v.Major - o.Major, v.Minor - o.Minor, v.Patch - o.Patch} {
		switch {
		case d < 0:
			return -1
		case d > 0:
			return 1
		}
	}
	return 0
}

// ParseVersion reads the version `claude --version` prints
// ("2.1.332 (Claude Code)") or a bare "2.1.332".
func ParseVersion(s string) (Version, error) {
	field, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	parts := strings.Split(field, ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("claude version %q: want major.minor.patch, such as %q", truncate(s, 80), NewestTestedVersion+" (Claude Code)")
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 || p != strconv.Itoa(x) {
			return Version{}, fmt.Errorf("claude version %q: %q is not a number (want major.minor.patch)", truncate(s, 80), truncate(p, 20))
		}
		n[i] = x
	}
	return Version{n[0], n[1], n[2]}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func mustVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// TestedRange reports whether v lies within the tested versions.
func TestedRange(v Version) bool {
	return v.Compare(mustVersion(OldestTestedVersion)) >= 0 && v.Compare(mustVersion(NewestTestedVersion)) <= 0
}

// Version runs `claude --version` (in the sandbox, where sessions run it)
// and parses what it prints.
func (a *Agent) Version(ctx context.Context) (Version, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	proc, err := a.sandbox.Start(sandbox.Spec{Path: a.path, Args: []string{"--version"}, Env: a.env, Name: "version"})
	if err != nil {
		return Version{}, fmt.Errorf("%s --version: %w", a.path, err)
	}
	_ = proc.Stdin().Close()
	go func() { _, _ = io.Copy(io.Discard, proc.Stderr()) }()
	out := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(proc.Stdout(), 4<<10))
		out <- b
	}()
	var b []byte
	select {
	case b = <-out:
	case <-ctx.Done():
		_ = proc.Signal(syscall.SIGKILL)
	}
	err = proc.Wait()
	proc.End(time.Second) // a child holding stdout open does not hold us
	proc.Stdout().Close()
	proc.Stderr().Close()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return Version{}, fmt.Errorf("%s --version: %w", a.path, err)
	}
	return ParseVersion(string(b))
}

// LogVersion logs the CLI's version at start, with a warning when it is
// outside the tested range (leashd may still work: it decides by what the
// CLI advertises, not by its number) or cannot be read.
func (a *Agent) LogVersion(ctx context.Context) {
	tested := OldestTestedVersion + "–" + NewestTestedVersion
	v, err := a.Version(ctx)
	switch {
	case err != nil:
		a.log.Warn("could not read the Claude Code version", "path", a.path, "err", err, "tested", tested)
	case !TestedRange(v):
		a.log.Warn("Claude Code version is outside the range leashd is tested with; if something misbehaves, install a tested one (npm install -g @anthropic-ai/claude-code@"+NewestTestedVersion+")",
			"version", v.String(), "tested", tested, "path", a.path)
	default:
		a.log.Info("Claude Code", "version", v.String(), "tested", tested, "path", a.path)
	}
}
