//go:build !linux

package testenv

import "testing"

// Tmpfs needs Linux: elsewhere the test skips (fails when CI=true).
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	missing(t, "tmpfs mounts need Linux")
	return ""
}

// Fill needs Linux (see Tmpfs).
func Fill(t testing.TB, dir string) string {
	t.Helper()
	missing(t, "needs Linux")
	return ""
}

// Immutable needs Linux's chattr.
func Immutable(t testing.TB, path string) (undo func()) {
	t.Helper()
	missing(t, "chattr needs Linux")
	return func() {}
}
