package testenv

import (
	"strings"
	"testing"
)

// OneProblem checks a refused configuration's error: it reports exactly one
// problem (one line), says each of want, and prints none of secrets (those
// of 6 characters or more; shorter ones occur in any text).
func OneProblem(t testing.TB, err error, want, secrets []string) {
	t.Helper()
	if err == nil {
		t.Fatal("the configuration was accepted")
	}
	msg := err.Error()
	if n := len(strings.Split(msg, "\n")); n != 1 {
		t.Errorf("exactly one problem, got %d lines: %v", n, err)
	}
	for _, s := range want {
		if !strings.Contains(msg, s) {
			t.Errorf("the error does not say %q: %v", s, err)
		}
	}
	for _, secret := range secrets {
		if len(strings.TrimSpace(secret)) >= 6 && strings.Contains(msg, secret) {
			t.Errorf("a secret was printed: %v", err)
		}
	}
}
