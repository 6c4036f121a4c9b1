package testenv

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes on a new temporary directory and
// unmounts it when the test ends (after the test's later cleanups, so close
// what you open there in t.Cleanup). It makes a real "disk full". Mounting
// needs root (CI runs as root); where it cannot mount, the test skips, and
// fails when CI=true.
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.FormatInt(size, 10)+",mode=0700"); err != nil {
		missing(t, "cannot mount a tmpfs (needs root): "+err.Error())
		return ""
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}

// Fill writes a file in dir until its file system is full, and returns
// its path: remove it to make room again.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "fill-*")
	if err != nil {
		t.Fatalf("filling %s: %v", dir, err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break // ENOSPC
		}
	}
	for len(buf) > 1 { // the last partial blocks
		buf = buf[:len(buf)/2]
		_, _ = f.Write(buf)
	}
	return f.Name()
}

// Immutable makes path immutable (chattr +i: even root cannot write it,
// through descriptors already open too) until the returned function or the
// test's end undoes it. Where chattr is missing or the file system does
// not support it, the test skips (fails when CI=true).
func Immutable(t testing.TB, path string) (undo func()) {
	t.Helper()
	chattr := Require(t, "LEASHD_TEST_CHATTR", "chattr")
	if out, err := exec.Command(chattr, "+i", path).CombinedOutput(); err != nil {
		missing(t, "chattr +i "+path+": "+string(out)+err.Error())
		return func() {}
	}
	done := false
	undo = func() {
		if !done {
			done = true
			if out, err := exec.Command(chattr, "-i", path).CombinedOutput(); err != nil {
				t.Errorf("chattr -i %s: %s%v", path, out, err)
			}
		}
	}
	t.Cleanup(undo)
	return undo
}
