//go:build unix

package agentproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// EndGroup makes sure nothing of the process group pgid outlives its
// leader, which has exited: what the agent started (an adapter's CLI
// flushing its transcript, a shell left behind) gets SIGTERM, and SIGKILL
// if it is still running after grace. It returns once no member runs, or
// after twice grace. Until then the session does not count as closed, so
// nothing an agent started writes to its files after leashd said it ended.
func EndGroup(pgid int, grace time.Duration) {
	if !groupRuns(pgid) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	if waitGroup(pgid, grace) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	waitGroup(pgid, grace)
}

// waitGroup polls until no member of pgid runs; false when grace passed.
func waitGroup(pgid int, grace time.Duration) bool {
	deadline := time.Now().Add(grace)
	for groupRuns(pgid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// groupRuns reports whether a member of process group pgid still runs. A
// zombie does not run: it waits for its parent (init, for an orphan) to
// reap it, and signal 0 would still find it. Without /proc (not Linux),
// signal 0 is all there is.
func groupRuns(pgid int) bool {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, path := range stats {
		if state, group, ok := readStat(path); ok && group == pgid && state != "Z" && state != "X" {
			return true
		}
	}
	return false
}

// readStat reads a process's state and process group from /proc/<pid>/stat:
// "pid (comm) state ppid pgrp …", where comm may hold spaces and parens.
func readStat(path string) (state string, pgrp int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, false // it exited meanwhile
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return "", 0, false
	}
	pgrp, err = strconv.Atoi(f[2])
	return f[0], pgrp, err == nil
}
