// Package bwrap confines an agent's process with bubblewrap: the system
// read-only, writable only the chat's working directory, the agent's home
// and a private /tmp, leashd's state not there at all, and a process
// namespace of its own, so leashd's process (its environment, its memory)
// cannot be seen or signalled.
package bwrap

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// Options says what an agent may write and what it may not see.
type Options struct {
	Program string   // bwrap's path or name (default "bwrap")
	Home    string   // the agent's home, writable ("" = none)
	Hide    []string // paths the agent must not see: a directory becomes an empty one, a file an empty file; those missing at a start are skipped
	Network bool     // false: no network at all (--unshare-net)
}

// Wrapper implements sandbox.Wrapper.
type Wrapper struct {
	opts Options
	path string
}

// New finds bwrap. It does not try it; Check does.
func New(o Options) (*Wrapper, error) {
	if o.Program == "" {
		o.Program = "bwrap"
	}
	path, err := exec.LookPath(o.Program)
	if err != nil {
		return nil, fmt.Errorf("%w: %s not found (on Debian and Ubuntu: apt-get install bubblewrap): %v", sandbox.ErrUnavailable, o.Program, err)
	}
	return &Wrapper{opts: o, path: path}, nil
}

// Name implements sandbox.Wrapper.
func (w *Wrapper) Name() string { return "bwrap" }

// Wrap implements sandbox.Wrapper.
func (w *Wrapper) Wrap(spec sandbox.Spec, path string) (string, []string, error) {
	dir := spec.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", nil, err
		}
		dir = wd
	}
	args := w.args(dir, path)
	args = append(args, "--", path)
	return w.path, append(args, spec.Args...), nil
}

// args are bwrap's arguments for an agent working in dir. bwrap applies
// them in order: the read-only system, the private /tmp, the writable
// places, then leashd's state hidden over them, and last the working
// directory again when it lies inside what was hidden (a chat's worktree
// lives in leashd's state directory, beside the other chats').
func (w *Wrapper) args(dir, program string) []string {
	args := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		// leashd may run as root: without this the agent could unmount
		// what hides leashd's state.
		"--cap-drop", "ALL",
		"--die-with-parent",
		"--setenv", "TMPDIR", "/tmp",
	}
	if !w.opts.Network {
		args = append(args, "--unshare-net")
	}
	writable := []string{dir}
	if common := sandbox.GitCommonDir(dir); common != "" {
		writable = append(writable, common) // commits from a worktree land there
	}
	// A program kept under /tmp (a build's output) would be hidden by the
	// private /tmp: its directory is there, read-only.
	for _, d := range programDirs(program) {
		args = append(args, "--ro-bind", d, d)
	}
	if w.opts.Home != "" && sandbox.Exists(w.opts.Home) {
		args = append(args, "--bind", w.opts.Home, w.opts.Home)
	}
	for _, p := range writable {
		args = append(args, "--bind", p, p)
	}
	hidden := sandbox.Hidden(w.opts.Hide)
	args = hideArgs(args, hidden)
	for _, p := range writable {
		if !sandbox.Under(p, hidden) {
			continue
		}
		// The working directory lies in what was hidden: bring it back,
		// then hide again what of leashd's lies inside it (the database
		// when it sits in the working directory itself).
		args = append(args, "--bind", p, p)
		var inside []string
		for _, h := range hidden {
			if h != p && sandbox.Under(h, []string{p}) {
				inside = append(inside, h)
			}
		}
		args = hideArgs(args, inside)
	}
	return append(args, "--chdir", dir)
}

// hideArgs hides each path: a directory behind an empty tmpfs, a file
// behind an empty one.
func hideArgs(args, hidden []string) []string {
	for _, h := range hidden {
		if fi, err := os.Stat(h); err == nil && fi.IsDir() {
			args = append(args, "--tmpfs", h)
		} else if err == nil {
			args = append(args, "--ro-bind", "/dev/null", h)
		}
	}
	return args
}

// Check runs a trial: bwrap starts a shell that can write its working
// directory. Inside a container bwrap often cannot create namespaces; the
// error then says what bwrap said.
func (w *Wrapper) Check(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "leashd-bwrap-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	args := append(w.args(dir, "/bin/sh"), "--", "/bin/sh", "-c", "echo ok > probe")
	out, err := exec.CommandContext(ctx, w.path, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: a trial run of %s failed: %v: %s", sandbox.ErrUnavailable, w.path, err, strings.TrimSpace(string(out)))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "probe")); err != nil || strings.TrimSpace(string(b)) != "ok" {
		return fmt.Errorf("%w: a trial run of %s could not write its working directory", sandbox.ErrUnavailable, w.path)
	}
	return nil
}

// programDirs are the directories under /tmp holding program (as named
// and after symbolic links).
func programDirs(program string) []string {
	var dirs []string
	paths := []string{program}
	if real, err := filepath.EvalSymlinks(program); err == nil && real != program {
		paths = append(paths, real)
	}
	for _, p := range paths {
		if d := filepath.Dir(p); sandbox.Under(d, []string{"/tmp"}) && d != "/tmp" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}
