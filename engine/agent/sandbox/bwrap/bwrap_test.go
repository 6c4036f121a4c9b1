package bwrap_test

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent/sandbox"
	"github.com/leashd/leashd/engine/agent/sandbox/bwrap"
	"github.com/leashd/leashd/engine/enginetest/gittest"
)

// layout is a machine as leashd sees it: a home holding leashd's state
// (its database, its token, every chat's worktree) and a project.
type layout struct {
	home, state, db, work, other string
}

func newLayout(t *testing.T) layout {
	t.Helper()
	root := t.TempDir()
	l := layout{home: filepath.Join(root, "home"), work: filepath.Join(root, "project")}
	l.state = filepath.Join(l.home, ".local", "state", "leashd")
	l.db = filepath.Join(l.state, "leashd.db")
	l.other = filepath.Join(l.state, "worktrees", "other-chat")
	for _, d := range []string{l.state, l.work, l.other} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	require.NoError(t, os.WriteFile(l.db, []byte("the database"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(l.state, "web-token"), []byte("tok"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(l.other, "theirs.txt"), []byte("another chat's work"), 0o600))
	return l
}

func (l layout) sandbox(t *testing.T, network bool) *sandbox.Host {
	t.Helper()
	w, err := bwrap.New(bwrap.Options{Program: testenv.Bwrap(t), Home: l.home, Hide: []string{l.state}, Network: network})
	require.NoError(t, err)
	require.NoError(t, w.Check(t.Context()), "bwrap works on this machine")
	return &sandbox.Host{Wrap: w}
}

// run runs a shell script in the sandbox and returns what it printed.
func run(t *testing.T, sb sandbox.Sandbox, dir, script string, env ...string) (string, error) {
	t.Helper()
	p, err := sb.Start(sandbox.Spec{Path: "/bin/sh", Args: []string{"-c", script}, Dir: dir, Env: env, Name: "t"})
	require.NoError(t, err)
	_ = p.Stdin().Close()
	errs := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(p.Stderr()); errs <- b }()
	out, _ := io.ReadAll(p.Stdout())
	werr := p.Wait()
	p.End(time.Second)
	return string(out) + string(<-errs), werr
}

// The agent writes its working directory and its home; the system is
// read-only; leashd's database, token and the other chats' worktrees are
// not there at all.
func TestAgentSeesNoneOfLeashdsState(t *testing.T) {
	l := newLayout(t)
	sb := l.sandbox(t, true)
	out, err := run(t, sb, l.work, `
		echo mine > `+l.work+`/made && echo wrote-work
		echo cfg > `+l.home+`/.agentrc && echo wrote-home
		touch /usr/leashd-probe 2>/dev/null || echo system-read-only
		cat `+l.db+` 2>/dev/null || echo no-db
		cat `+l.state+`/web-token 2>/dev/null || echo no-token
		cat `+l.other+`/theirs.txt 2>/dev/null || echo no-other-chat
		echo probe > `+l.db+` 2>/dev/null; echo done`)
	require.NoError(t, err, out)
	for _, want := range []string{"wrote-work", "wrote-home", "system-read-only", "no-db", "no-token", "no-other-chat"} {
		assert.Contains(t, out, want)
	}
	b, err := os.ReadFile(l.db)
	require.NoError(t, err)
	assert.Equal(t, "the database", string(b), "the database is untouched")
	b, err = os.ReadFile(filepath.Join(l.work, "made"))
	require.NoError(t, err)
	assert.Equal(t, "mine\n", string(b))
}

// A chat's worktree lives in leashd's state directory: its own is there
// and writable, the other chats' are not, and a commit from it reaches the
// repository (whose git directory it shares).
func TestWorktreeInsideTheStateIsTheOnlyOneThere(t *testing.T) {
	l := newLayout(t)
	l.work = gittest.Repo(t)
	tree := filepath.Join(l.state, "worktrees", "this-chat")
	gittest.Git(t, l.work, "worktree", "add", "-q", "-b", "leashd/this-chat", tree)
	sb := l.sandbox(t, true)
	out, err := run(t, sb, tree, `
		ls `+filepath.Join(l.state, "worktrees")+`
		echo change > file.txt && git add file.txt &&
		git -c user.name=a -c user.email=a@b commit -qm agent && echo committed`)
	require.NoError(t, err, out)
	assert.Contains(t, out, "this-chat")
	assert.NotContains(t, out, "other-chat")
	assert.Contains(t, out, "committed")
	log := gittest.Git(t, l.work, "log", "--format=%s", "leashd/this-chat")
	assert.Equal(t, "agent\ninitial", log)
}

// leashd's own process is not there to read (/proc/<pid>/environ holds its
// tokens) or to signal; the agent has no capabilities even when leashd
// runs as root; no LEASHD_* variable reaches it.
func TestAgentCannotSeeLeashdsProcess(t *testing.T) {
	t.Setenv("LEASHD_TELEGRAM_BOT_TOKEN", "123:secret-token")
	l := newLayout(t)
	sb := l.sandbox(t, true)
	pid := os.Getpid()
	out, err := run(t, sb, l.work, `
		test -e /proc/`+strconv.Itoa(pid)+`/environ && echo sees-leashd
		grep -h CapEff /proc/self/status
		env`, "AGENT_SET=1")
	require.NoError(t, err, out)
	assert.NotContains(t, out, "sees-leashd")
	assert.Contains(t, out, "CapEff:\t0000000000000000")
	assert.NotContains(t, out, "secret-token")
	assert.NotContains(t, out, "LEASHD_")
	assert.Contains(t, out, "AGENT_SET=1")
}

// LEASHD_SANDBOX_NETWORK=off: no interface but loopback.
func TestNetworkOff(t *testing.T) {
	l := newLayout(t)
	out, err := run(t, l.sandbox(t, false), l.work, `cat /proc/net/dev`)
	require.NoError(t, err, out)
	assert.Contains(t, out, "lo:")
	lines := strings.Count(strings.TrimSpace(out), "\n") + 1
	assert.Equal(t, 3, lines, "two header lines and lo only:\n%s", out)
}

// Ending the process ends everything it started inside the sandbox.
func TestEndReachesInsideTheSandbox(t *testing.T) {
	l := newLayout(t)
	sb := l.sandbox(t, true)
	marker := filepath.Join(l.work, "still-running")
	p, err := sb.Start(sandbox.Spec{Path: "/bin/sh", Args: []string{"-c", "(sleep 1; while :; do date > " + marker + "; sleep 0.1; done) & echo started; read _ || true"}, Dir: l.work})
	require.NoError(t, err)
	line := make([]byte, 8)
	_, err = io.ReadFull(p.Stdout(), line)
	require.NoError(t, err)
	_ = p.Stdin().Close()
	require.NoError(t, p.Wait())
	p.End(time.Second)
	_ = os.Remove(marker)
	time.Sleep(1500 * time.Millisecond)
	_, err = os.Stat(marker)
	assert.True(t, os.IsNotExist(err), "a background job of the agent still runs after End")
}

// A trial that cannot work says why.
func TestMissingBwrapSaysHowToInstall(t *testing.T) {
	_, err := bwrap.New(bwrap.Options{Program: "leashd-no-such-bwrap"})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Contains(t, err.Error(), "apt-get install bubblewrap")
}

// An operator kept the database in the project directory itself: the
// project is the agent's, the database is still not there.
func TestDatabaseInTheWorkingDirectoryStaysHidden(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "leashd.db")
	require.NoError(t, os.WriteFile(db, []byte("the database"), 0o600))
	require.NoError(t, os.WriteFile(db+"-wal", []byte("its log"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main"), 0o644))
	w, err := bwrap.New(bwrap.Options{Program: testenv.Bwrap(t), Hide: []string{dir, db, db + "-wal", db + "-shm"}, Network: true})
	require.NoError(t, err)
	// The files hidden behind /dev/null cannot even be opened (bwrap
	// binds it without device access).
	out, err := run(t, &sandbox.Host{Wrap: w}, dir, `cat main.go; echo; cat leashd.db leashd.db-wal 2>/dev/null; { echo x >> leashd.db; } 2>/dev/null || echo db-refused`)
	require.NoError(t, err, out)
	assert.Equal(t, "package main\ndb-refused\n", out)
	b, err := os.ReadFile(db)
	require.NoError(t, err)
	assert.Equal(t, "the database", string(b))
}

// A program kept in a temp directory (a build's output) still runs in the
// private /tmp, and what else that directory's neighbours hold is not
// there.
func TestProgramUnderTmpRuns(t *testing.T) {
	l := newLayout(t)
	bin := t.TempDir()
	prog := filepath.Join(bin, "agent")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\necho agent-ran\n"), 0o755))
	secret := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(secret, "s"), []byte("x"), 0o600))
	p, err := l.sandbox(t, true).Start(sandbox.Spec{Path: prog, Dir: l.work})
	require.NoError(t, err)
	_ = p.Stdin().Close()
	out, _ := io.ReadAll(p.Stdout())
	require.NoError(t, p.Wait())
	p.End(time.Second)
	assert.Equal(t, "agent-ran\n", string(out))
	out2, err := run(t, l.sandbox(t, true), l.work, "ls "+secret+" 2>/dev/null || echo gone")
	require.NoError(t, err)
	assert.Equal(t, "gone\n", out2)
}
