//go:build unix

package httpserver

import "syscall"

// fdLimit is the process's open-file limit (RLIMIT_NOFILE, soft), or 0
// when it cannot be read. Go raises the soft limit to the hard one at
// start-up, so this is what leashd can really open.
func fdLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	if int64(r.Cur) < 0 { // RLIM_INFINITY: no limit to derive a cap from
		return 0
	}
	return uint64(r.Cur)
}
