//go:build unix

package agentproc

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

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
	state, _ := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(child)).Output()
	s := strings.TrimSpace(string(state))
	assert.True(t, s == "" || strings.HasPrefix(s, "Z"), "the agent's child is still running (state %q)", s)
}
