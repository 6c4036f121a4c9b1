// Package docker runs each agent in a container of its own
// (LEASHD_SANDBOX=docker), through the Docker Engine API: a read-only
// image, writable only the chat's working directory, the agent's home and
// a private /tmp, leashd's state hidden, no capabilities, leashd's own uid,
// CPU and memory limits, and no network unless the operator allows it.
//
// It speaks to the daemon with github.com/moby/moby/client, the Engine
// API's maintained Go client (the github.com/docker/docker module it was
// split from is frozen at v28 as "+incompatible"); the client negotiates
// the API version, so Debian's docker.io 20.10 (API 1.41) works.
package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// Labels on every container this package creates: the leashd it belongs
// to (Options.Instance), and the chat.
const (
	LabelInstance = "leashd.sandbox"
	LabelChat     = "leashd.chat"
)

// BuildHint says how to build the agent image.
const BuildHint = "docker build -t leashd-agent -f deploy/agent.Dockerfile deploy/"

// Options says what each container gets.
type Options struct {
	Image   string   // the agent image (LEASHD_SANDBOX_IMAGE)
	Home    string   // the agent's home, mounted read-write at the same path ("" = a private /tmp as HOME)
	Hide    []string // paths the agent must not see (leashd's state): empty where they lie inside a mounted path
	Network bool     // false: NetworkMode "none"
	// NetworkMode, when Network is on, replaces the daemon's default
	// bridge: "host" gives the agent the host's network, loopback
	// included (every local service, leashd's own API among them); the
	// tests use it to reach their fake model API on 127.0.0.1.
	NetworkMode string
	CPUs        float64  // CPUs per container (0 = no limit)
	Memory      int64    // bytes per container (0 = no limit)
	AgentEnv    []string // LEASHD_AGENT_ENV
	// Instance names this leashd (e.g. a hash of its state directory):
	// New removes the containers a previous run of the same instance left,
	// and only those.
	Instance string
}

// Sandbox implements sandbox.Sandbox with a container per agent process.
type Sandbox struct {
	opts   Options
	cli    *client.Client
	user   string
	reaped int
}

// New makes the agent's home when it is missing, connects to the daemon
// DOCKER_HOST names (or the default socket), checks that the image and the
// network are there, and removes the containers a leashd of
// the same Instance left behind when it died. A daemon that does not
// answer, or a missing image, is an error wrapping sandbox.ErrUnavailable
// that says what to do.
func New(ctx context.Context, o Options) (*Sandbox, error) {
	if strings.TrimSpace(o.Image) == "" {
		return nil, fmt.Errorf("%w: no agent image given (LEASHD_SANDBOX_IMAGE; build one: %s)", sandbox.ErrUnavailable, BuildHint)
	}
	if o.Instance == "" {
		o.Instance = "leashd"
	}
	if o.Home != "" {
		// Mounted into every container; a home that is not there would
		// leave the agent a HOME it cannot write (the image is read-only).
		if err := os.MkdirAll(o.Home, 0o700); err != nil {
			return nil, fmt.Errorf("%w: the agent's home: %v", sandbox.ErrUnavailable, err)
		}
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("%w: docker client: %v", sandbox.ErrUnavailable, err)
	}
	s := &Sandbox{opts: o, cli: cli, user: strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())}
	if err := s.check(ctx); err != nil {
		cli.Close()
		return nil, err
	}
	if s.reaped, err = s.reap(ctx); err != nil {
		cli.Close()
		return nil, fmt.Errorf("%w: removing the containers a previous leashd left: %v", sandbox.ErrUnavailable, err)
	}
	return s, nil
}

// check pings the daemon (negotiating the API version) and inspects the image.
func (s *Sandbox) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	host := s.cli.DaemonHost()
	if _, err := s.cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return fmt.Errorf("%w: no Docker daemon answers at %s (set DOCKER_HOST, or start dockerd): %v", sandbox.ErrUnavailable, host, err)
	}
	if _, err := s.cli.ImageInspect(ctx, s.opts.Image); err != nil {
		if cerrdefs.IsNotFound(err) {
			return fmt.Errorf("%w: the agent image %q is not on the Docker daemon at %s; build it: %s (or set LEASHD_SANDBOX_IMAGE to an image that has the agent)",
				sandbox.ErrUnavailable, s.opts.Image, host, BuildHint)
		}
		return fmt.Errorf("%w: inspecting the agent image %q: %v", sandbox.ErrUnavailable, s.opts.Image, err)
	}
	return s.checkNetwork(ctx)
}

// checkNetwork makes sure the network containers join exists: a daemon
// started with --bridge=none has no default bridge, and every agent would
// fail to start.
func (s *Sandbox) checkNetwork(ctx context.Context) error {
	name := string(s.networkMode())
	switch {
	case name == "none" || strings.Contains(name, ":"): // none, container:<id>
		return nil
	case name == "":
		name = "bridge"
	}
	if _, err := s.cli.NetworkInspect(ctx, name, client.NetworkInspectOptions{}); err != nil {
		if cerrdefs.IsNotFound(err) {
			return fmt.Errorf("%w: agents' containers join the network %q, which the Docker daemon at %s does not have (started with --bridge=none?); give the daemon a bridge, or set LEASHD_SANDBOX_NETWORK=off",
				sandbox.ErrUnavailable, name, s.cli.DaemonHost())
		}
		return fmt.Errorf("%w: inspecting the network %q: %v", sandbox.ErrUnavailable, name, err)
	}
	return nil
}

// reap removes every container labelled with this instance: New runs
// before this leashd started any, so they are a dead leashd's.
func (s *Sandbox) reap(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	list, err := s.cli.ContainerList(ctx, client.ContainerListOptions{
		All: true, Filters: client.Filters{}.Add("label", LabelInstance+"="+s.opts.Instance),
	})
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, c := range list.Items {
		_, err := s.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return len(list.Items), errors.Join(errs...)
}

// Reaped is how many containers of a previous leashd New removed.
func (s *Sandbox) Reaped() int { return s.reaped }

// APIVersion is the Engine API version agreed with the daemon.
func (s *Sandbox) APIVersion() string { return s.cli.ClientVersion() }

// DaemonHost is the daemon's address.
func (s *Sandbox) DaemonHost() string { return s.cli.DaemonHost() }

// Close closes the connection to the daemon; containers still running
// keep running (their sessions end them).
func (s *Sandbox) Close() error { return s.cli.Close() }

// Name implements sandbox.Sandbox.
func (s *Sandbox) Name() string { return "docker" }

// LookPath implements sandbox.Sandbox: the program is found by the
// image's PATH when the container starts, so file is returned as it is
// and nothing on this host is looked at.
func (s *Sandbox) LookPath(file string) (string, error) { return file, nil }

// Start implements sandbox.Sandbox: it creates the container, attaches
// its stdio, and starts it.
func (s *Sandbox) Start(spec sandbox.Spec) (sandbox.Process, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, hc := s.config(spec)
	created, err := s.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: cfg, HostConfig: hc, Name: containerName(spec.Name),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the agent's container from %s: %w", s.opts.Image, err)
	}
	p, err := s.run(ctx, created.ID)
	if err != nil {
		rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer rcancel()
		_, _ = s.cli.ContainerRemove(rctx, created.ID, client.ContainerRemoveOptions{Force: true})
		return nil, fmt.Errorf("starting the agent's container: %w", err)
	}
	return p, nil
}

// containerName is "leashd-<chat>-<random>", in the characters Docker
// accepts in a name.
func containerName(chat string) string {
	clean := strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return r
		}
		return '-'
	}, chat)
	if len(clean) > 40 {
		clean = clean[:40]
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	if clean == "" {
		return "leashd-" + hex.EncodeToString(b[:])
	}
	return "leashd-" + clean + "-" + hex.EncodeToString(b[:])
}

// networkMode is the container's network.
func (s *Sandbox) networkMode() container.NetworkMode {
	switch {
	case !s.opts.Network:
		return "none"
	case s.opts.NetworkMode != "":
		return container.NetworkMode(s.opts.NetworkMode)
	}
	return "" // the daemon's default bridge
}
