// Package dockertest is the test rig of the docker sandbox: it finds the
// Docker daemon the tests may use and the agent image they run, building
// the image with .ci/docker-test-image when it is missing (the same
// script .ci/test runs, so tests and CI share one recipe).
//
// The tests use a daemon only when LEASHD_TEST_DOCKER says which: its
// address (unix:///…/docker.sock; .ci/test starts a dockerd of its own and
// sets it), or 1 for the one DOCKER_HOST names. A developer's own daemon
// is not used by accident, and other tests (deploy/) do not take the test
// daemon for one that can pull images. Without it, or without a daemon
// that answers, a test skips, and fails when CI=true.
package dockertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/leashd/leashd/config/testenv"
)

// Switch is the variable that lets tests use a Docker daemon: its
// address, or 1 for DOCKER_HOST's.
const Switch = "LEASHD_TEST_DOCKER"

var build struct {
	once sync.Once
	tag  string
	err  error
	out  string
	took time.Duration
}

// Client returns a client of the daemon the tests may use, closed when the
// test ends. It sets DOCKER_HOST for the test, so that what the test
// starts (docker.New, the image script) finds the same daemon.
func Client(t testing.TB) *client.Client {
	t.Helper()
	switch host := os.Getenv(Switch); host {
	case "":
		missing(t, Switch+" is not set (.ci/test starts a dockerd and sets it to its socket)")
		return nil
	case "1":
	default:
		t.Setenv("DOCKER_HOST", host)
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		missing(t, "docker client: "+err.Error())
		return nil
	}
	t.Cleanup(func() { cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		missing(t, "no Docker daemon answers at "+cli.DaemonHost()+": "+err.Error())
		return nil
	}
	return cli
}

// Image returns the test agent image's tag, building it once per test
// binary when the daemon does not have it (about half a minute).
func Image(t testing.TB) string {
	t.Helper()
	Client(t)
	build.once.Do(func() {
		start := time.Now()
		script := filepath.Join(moduleRoot(), ".ci", "docker-test-image")
		var out, errs bytes.Buffer
		cmd := exec.Command(script)
		cmd.Stdout, cmd.Stderr = &out, &errs
		build.err = cmd.Run()
		build.tag, build.out, build.took = strings.TrimSpace(out.String()), errs.String(), time.Since(start)
	})
	if build.err != nil || build.tag == "" {
		missing(t, "building the test agent image failed: "+errString(build.err)+": "+build.out)
		return ""
	}
	if build.out != "" {
		t.Logf("%s (%s)", strings.TrimSpace(build.out), build.took.Round(time.Millisecond))
	}
	return build.tag
}

// Instance is a fresh sandbox instance name, so that tests running at the
// same time on one daemon never reap each other's containers.
func Instance() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:])
}

// moduleRoot is the repository's root (this file is four levels below).
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "..")
}

func errString(err error) string {
	if err == nil {
		return "no tag printed"
	}
	return err.Error()
}

func missing(t testing.TB, why string) {
	t.Helper()
	if testenv.InCI() {
		t.Fatalf("docker missing in CI: %s", why)
	}
	t.Skipf("skipping: %s", why)
}
