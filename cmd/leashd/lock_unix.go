//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockInstance makes sure one leashd serves a database: two would mark
// each other's pending interactions as interrupted at start-up and poll
// the same bots (Telegram answers the second with 409 Conflict). The lock
// is an flock on "<db>.lock", released when the process exits however it
// exits; the file records the holder's PID for the error message.
func lockInstance(dbPath string) (release func(), err error) {
	path := dbPath + ".lock"
	if rest, ok := strings.CutPrefix(path, "~/"); ok { // as the store expands it
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("LEASHD_DB_PATH=%s: lock file %s: %w", dbPath, path, err)
		}
		path = filepath.Join(home, rest)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("LEASHD_DB_PATH=%s: lock file %s: %w", dbPath, path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("LEASHD_DB_PATH=%s: lock file %s: %w", dbPath, path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := "another process"
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
				holder = "another leashd (pid " + strconv.Itoa(pid) + ")"
			}
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is already serving with LEASHD_DB_PATH=%s: run one leashd per database (and per bot), or give this one its own LEASHD_DB_PATH", holder, dbPath)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
