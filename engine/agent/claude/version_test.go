package claude_test

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent/claude"
)

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]claude.Version{
		"2.1.332 (Claude Code)\n": {2, 1, 332},
		"2.1.197":                 {2, 1, 197},
		" 10.0.3 (Claude Code)":   {10, 0, 3},
	} {
		got, err := claude.ParseVersion(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for in, msg := range map[string]string{
		"":                      "want major.minor.patch",
		"Claude Code":           "want major.minor.patch",
		"2.1 (Claude Code)":     "want major.minor.patch",
		"2.1.x (Claude Code)":   `"x" is not a number`,
		"2.-1.3":                `"-1" is not a number`,
		"2.01.3":                `"01" is not a number`,
		"2.1.3.4 (Claude Code)": "want major.minor.patch",
	} {
		_, err := claude.ParseVersion(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
	}
}

func TestVersionCompareAndTestedRange(t *testing.T) {
	v := func(s string) claude.Version { x, err := claude.ParseVersion(s); require.NoError(t, err); return x }
	assert.Equal(t, -1, v("2.1.197").Compare(v("2.1.332")))
	assert.Equal(t, 1, v("2.2.0").Compare(v("2.1.332")))
	assert.Equal(t, 0, v("2.1.332").Compare(v("2.1.332")))
	assert.Equal(t, -1, v("1.9.999").Compare(v("2.0.0")))
	assert.True(t, claude.TestedRange(v(claude.OldestTestedVersion)))
	assert.True(t, claude.TestedRange(v(claude.NewestTestedVersion)))
	assert.True(t, claude.TestedRange(v("2.1.250")))
	assert.False(t, claude.TestedRange(v("2.1.196")))
	assert.False(t, claude.TestedRange(v("2.1.333")))
}

func FuzzParseVersion(f *testing.F) {
	f.Add("2.1.332 (Claude Code)")
	f.Add("2.1")
	f.Add("99999999999999999999.1.1")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := claude.ParseVersion(s)
		if err != nil {
			return
		}
		again, err := claude.ParseVersion(v.String())
		if err != nil || again != v {
			t.Fatalf("%q parsed as %v, which reads back as %v (%v)", s, v, again, err)
		}
	})
}

// The Go constants and CI's pins are one range: CI tests exactly the
// versions leashd calls tested.
func TestTestedRangeMatchesCI(t *testing.T) {
	f, err := os.Open("../../../.ci/versions.env")
	require.NoError(t, err)
	defer f.Close()
	pins := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			pins[k] = v
		}
	}
	assert.Equal(t, claude.NewestTestedVersion, pins["CLAUDE_CODE_VERSION"], ".ci/versions.env CLAUDE_CODE_VERSION (the newest tested)")
	assert.Equal(t, claude.OldestTestedVersion, pins["CLAUDE_CODE_OLDEST_VERSION"], ".ci/versions.env CLAUDE_CODE_OLDEST_VERSION")
}

func logTo(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// The real CLI's version is read and logged; it is within the range CI
// tests, so there is no warning.
func TestRealCLIVersionIsLoggedAndTested(t *testing.T) {
	path := testenv.Claude(t)
	var buf bytes.Buffer
	a := claude.New(path, claude.WithLogger(logTo(&buf)))
	v, err := a.Version(context.Background())
	require.NoError(t, err)
	t.Logf("%s is %s", path, v)
	assert.True(t, claude.TestedRange(v))
	a.LogVersion(context.Background())
	assert.Contains(t, buf.String(), "level=INFO msg=\"Claude Code\" version="+v.String())
	assert.NotContains(t, buf.String(), "WARN")
}

// A CLI newer (or older) than the tested range is named in a warning.
func TestUntestedVersionWarns(t *testing.T) {
	for _, out := range []string{"9.0.0 (Claude Code)", "2.0.1 (Claude Code)", "not a version"} {
		bin := filepath.Join(t.TempDir(), "claude")
		require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho '"+out+"'\n"), 0o755))
		var buf bytes.Buffer
		claude.New(bin, claude.WithLogger(logTo(&buf))).LogVersion(context.Background())
		assert.Contains(t, buf.String(), "level=WARN", out)
		assert.Contains(t, buf.String(), "tested="+claude.OldestTestedVersion+"–"+claude.NewestTestedVersion, out)
		if out != "not a version" {
			assert.Contains(t, buf.String(), "outside the range leashd is tested with", out)
			assert.Contains(t, buf.String(), "version="+strings.Fields(out)[0], out)
		} else {
			assert.Contains(t, buf.String(), "could not read the Claude Code version", out)
		}
	}
}

// Ready is what /readyz shows for the agent: the CLI must be an executable.
func TestReadyNeedsTheCLI(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "claude")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	assert.NoError(t, claude.New(bin).Ready())
	err := claude.New(filepath.Join(dir, "missing")).Ready()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing not found")
}
