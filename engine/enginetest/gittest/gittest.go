// Package gittest makes real git repositories for tests, with an identity
// of their own so that no global git configuration is needed (CI machines
// have none).
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Identity is who the test commits are by.
const (
	Name  = "Test"
	Email = "test@example.com"
)

// Git runs git in dir and returns its trimmed output; a failure fails t.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	cmd := exec.Command("git", append([]string{"-c", "user.name=" + Name, "-c", "user.email=" + Email, "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME="+Name, "GIT_AUTHOR_EMAIL="+Email,
		"GIT_COMMITTER_NAME="+Name, "GIT_COMMITTER_EMAIL="+Email, "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Repo makes a repository on branch main with one commit holding README
// ("hello\n") and f.txt ("one\ntwo\nthree\n").
func Repo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	Git(t, dir, "init", "-q", "-b", "main")
	Write(t, dir, "README", "hello\n")
	Write(t, dir, "f.txt", "one\ntwo\nthree\n")
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// Write writes a file under dir, making its directories.
func Write(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Read reads a file under dir; a failure fails t.
func Read(t testing.TB, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// HoldMerges installs a pre-merge-commit hook in repo that, when a merge
// has written its files and is about to commit, creates the file it
// returns and then waits (up to a minute) until ReleaseMerges: a slow
// hook, during which a test kills the merging process (KillWhenHeld).
func HoldMerges(t testing.TB, repo string) (marker string) {
	t.Helper()
	marker = filepath.Join(t.TempDir(), "merge-held")
	hook := "#!/bin/sh\n: > '" + marker + "'\ni=0\nwhile [ ! -e '" + marker + ".release' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n"
	if err := os.WriteFile(filepath.Join(repo, ".git", "hooks", "pre-merge-commit"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	return marker
}

// ReleaseMerges lets the merges HoldMerges holds go on.
func ReleaseMerges(t testing.TB, marker string) {
	t.Helper()
	if err := os.WriteFile(marker+".release", nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// KillWhenHeld starts cmd in a process group of its own, waits until the
// hook of HoldMerges has run (marker exists), and kills the whole group
// with SIGKILL, as the OOM killer or docker stop would: nothing in it
// gets to clean up. With onlyCmd, only cmd's own process is killed (kill
// -9 of its PID): the git it started runs on. cmd's output is returned
// for failure messages.
func KillWhenHeld(t testing.TB, cmd *exec.Cmd, marker string, onlyCmd bool) string {
	t.Helper()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the merging process ended before its merge was held: %v\n%s", err, out.String())
		case <-deadline:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("the merge was not held within 30s:\n%s", out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	target := -cmd.Process.Pid
	if onlyCmd {
		target = cmd.Process.Pid
	}
	if err := syscall.Kill(target, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	return out.String()
}
