//go:build !unix

package httpserver

// fdLimit is 0 (unknown) where RLIMIT_NOFILE does not exist.
func fdLimit() uint64 { return 0 }
