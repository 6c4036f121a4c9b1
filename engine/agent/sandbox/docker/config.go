package docker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// pidsLimit bounds the processes of one container: far above what an
// agent and its tools run (a build with -j, a test runner's workers), low
// enough that a fork bomb a person allowed stays inside its container.
var pidsLimit int64 = 4096

// config is the container for spec: its program as the entrypoint (the
// image's own entrypoint and command do not run), the minimal environment,
// stdio attached without a terminal, the file system read-only but for
// the mounts, no capabilities, no privilege gain, leashd's uid and gid, a
// small init (docker-init) as PID 1 that forwards signals and reaps
// zombies, and the limits (CPUs, memory, processes).
func (s *Sandbox) config(spec sandbox.Spec) (*container.Config, *container.HostConfig) {
	yes := true
	cfg := &container.Config{
		Image:        s.opts.Image,
		Entrypoint:   []string{spec.Path},
		Cmd:          spec.Args,
		Env:          s.environ(spec),
		WorkingDir:   spec.Dir,
		User:         s.user,
		OpenStdin:    true,
		StdinOnce:    true,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		Labels:       map[string]string{LabelInstance: s.opts.Instance, LabelChat: spec.Name},
	}
	hc := &container.HostConfig{
		Mounts:         s.mounts(spec.Dir),
		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		NetworkMode:    s.networkMode(),
		Init:           &yes,
		Resources: container.Resources{
			NanoCPUs:  int64(s.opts.CPUs * 1e9),
			Memory:    s.opts.Memory,
			PidsLimit: &pidsLimit,
		},
	}
	return cfg, hc
}

// environ is sandbox.Environ without the host's PATH and SHELL (paths on
// the host: the image's own win), with HOME the mounted home and TMPDIR
// the private /tmp.
func (s *Sandbox) environ(spec sandbox.Spec) []string {
	var host []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "PATH" && name != "SHELL" {
			host = append(host, kv)
		}
	}
	home := s.opts.Home
	if home == "" {
		home = "/tmp"
	}
	var out []string
	for _, kv := range sandbox.Environ(host, s.opts.AgentEnv, spec.Env) {
		if name, _, _ := strings.Cut(kv, "="); name != "HOME" && name != "TMPDIR" {
			out = append(out, kv)
		}
	}
	return append(out, "HOME="+home, "TMPDIR=/tmp")
}

// mounts are the container's writable places — a private /tmp, the
// agent's home, the working directory and, for a linked worktree, the
// repository's git directory, each at its own path — and over them what
// must stay hidden. Docker mounts shallow paths first, so a working
// directory inside the hidden state directory (a chat's worktree) is
// mounted over the empty one.
func (s *Sandbox) mounts(dir string) []mount.Mount {
	var writable []string
	add := func(p string) {
		if p != "" && sandbox.Exists(p) && !slices.Contains(writable, filepath.Clean(p)) {
			writable = append(writable, filepath.Clean(p))
		}
	}
	add(s.opts.Home)
	add(dir)
	if dir != "" {
		add(sandbox.GitCommonDir(dir))
	}
	ms := []mount.Mount{{Type: mount.TypeTmpfs, Target: "/tmp"}}
	for _, p := range writable {
		ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: p, Target: p})
	}
	for _, h := range sandbox.Hidden(s.opts.Hide) {
		if !sandbox.Under(h, writable) || slices.Contains(writable, h) {
			continue // not in the container, or the agent's own place
		}
		if fi, err := os.Stat(h); err == nil && fi.IsDir() {
			ms = append(ms, mount.Mount{Type: mount.TypeTmpfs, Target: h})
		} else if err == nil {
			ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: os.DevNull, Target: h, ReadOnly: true})
		}
	}
	return ms
}
