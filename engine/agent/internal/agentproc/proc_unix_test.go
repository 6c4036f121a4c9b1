//go:build unix

package agentproc

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Signalling the agent's group reaches what the agent started, too.
func TestSignalReachesWhatTheAgentStarted(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
	SetGroup(cmd)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	child, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) }) // should it fail

	require.NoError(t, Signal(cmd.Process, syscall.SIGKILL))
	_ = cmd.Wait()
	// The child was killed with the group: once reaped by init it is gone;
	// until then it is a zombie, which signal 0 still finds, so ask ps.
	// SIGKILL is delivered at once but the child takes a moment to die on
	// a busy machine.
	var s string
	assert.Eventually(t, func() bool {
		state, _ := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(child)).Output()
		s = strings.TrimSpace(string(state))
		return s == "" || strings.HasPrefix(s, "Z")
	}, 5*time.Second, 10*time.Millisecond, "the agent's child is still running (state %q)", s)
}

// Once the agent has exited, EndGroup ends what it left running in its
// group (here a child that ignores SIGTERM, as a CLI flushing its files
// might take its time) and returns only when nothing of it runs.
func TestEndGroupOutlivesNothing(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sh -c 'trap \"\" TERM; echo $$; exec sleep 60' & read _")
	SetGroup(cmd)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	child, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	require.NoError(t, in.Close()) // the leader exits; the child stays
	_ = cmd.Wait()
	require.True(t, groupRuns(cmd.Process.Pid), "the child still runs in the group")

	EndGroup(cmd.Process.Pid, 200*time.Millisecond)
	assert.False(t, groupRuns(cmd.Process.Pid), "nothing of the group runs after EndGroup")
}

// EndGroup on a group that is already gone returns at once.
func TestEndGroupOfAGoneGroup(t *testing.T) {
	cmd := exec.Command("true")
	SetGroup(cmd)
	require.NoError(t, cmd.Run())
	start := time.Now()
	EndGroup(cmd.Process.Pid, time.Minute)
	assert.Less(t, time.Since(start), 30*time.Second, "it did not wait out the grace")
}
