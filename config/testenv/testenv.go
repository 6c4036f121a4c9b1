// Package testenv finds the outside programs some tests need (the Claude
// Code CLI, Chromium, tmux). Where one is missing, a test skips with a clear
// message on a developer's machine and fails when CI=true, so CI can never
// pass by skipping.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether CI=true.
func InCI() bool { return os.Getenv("CI") == "true" }

// Require returns the path of a program: the value of envVar if set, else
// the first of names found on PATH. Missing, it skips the test (fails in CI).
func Require(t testing.TB, envVar string, names ...string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		missing(t, envVar+"="+p+" does not exist")
		return ""
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	missing(t, "none of "+joinNames(names)+" is on PATH and "+envVar+" is not set (.ci/test installs it)")
	return ""
}

func missing(t testing.TB, why string) {
	t.Helper()
	if InCI() {
		t.Fatalf("required tool missing in CI: %s", why)
	}
	t.Skipf("skipping: %s", why)
}

func joinNames(ns []string) string {
	s := ""
	for i, n := range ns {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// Claude returns the pinned Claude Code CLI (LEASHD_TEST_CLAUDE, set by
// .ci/test), never whatever claude happens to be on PATH.
func Claude(t testing.TB) string { t.Helper(); return Require(t, "LEASHD_TEST_CLAUDE") }

// Chromium returns a headless-capable Chromium.
func Chromium(t testing.TB) string {
	t.Helper()
	return Require(t, "LEASHD_TEST_CHROMIUM", "chromium", "chromium-browser", "google-chrome")
}

// ACPAgent returns the pinned Claude ACP adapter, claude-agent-acp
// (LEASHD_TEST_ACP_AGENT, set by .ci/test), never whatever is on PATH.
func ACPAgent(t testing.TB) string { t.Helper(); return Require(t, "LEASHD_TEST_ACP_AGENT") }

// Gemini returns the pinned Gemini CLI (LEASHD_TEST_GEMINI, set by
// .ci/test), the second real ACP agent the tests run.
func Gemini(t testing.TB) string { t.Helper(); return Require(t, "LEASHD_TEST_GEMINI") }

// Bwrap returns bubblewrap (Debian's bubblewrap, installed by .ci/test).
func Bwrap(t testing.TB) string { t.Helper(); return Require(t, "LEASHD_TEST_BWRAP", "bwrap") }
