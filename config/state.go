package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// TokenFileName is the file in the state directory holding the API token
// leashd generated because LEASHD_WEB_TOKEN was not set.
const TokenFileName = "web-token"

// expandHome reads a leading "~/" as the home directory, as the store does
// (systemd's Environment= and .env files do not expand it).
func expandHome(path string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return path
}

// WebTokenFile is where leashd keeps the API token it generates when
// LEASHD_WEB_TOKEN is not set: web-token in the state directory.
func (c Config) WebTokenFile() string { return filepath.Join(c.StateDir(), TokenFileName) }

// stateFiles are the files leashd keeps in the state directory, checked
// by CheckState when they exist.
func (c Config) stateFiles() []string {
	db := expandHome(c.DBPath)
	return []string{db, db + "-wal", db + "-shm", db + ".lock", c.WebTokenFile(), c.VAPIDFile()}
}

// PrepareState makes the state directory (the database's) leashd's
// alone: it is created with mode 0700 when missing, and a directory, or a
// file leashd keeps in it (the database, its -wal and -shm files, the lock,
// the API token), that other users may read or write is refused, with the
// chmod that fixes it. leashd does not tighten them itself: a database
// others could read may have been read, and its owner should know.
func (c Config) PrepareState() error {
	dir := c.StateDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("LEASHD_DB_PATH=%s: its directory %s cannot be made: %w", c.DBPath, dir, err)
	}
	return c.CheckState()
}

// CheckState refuses a state directory, or a file leashd keeps in it,
// that others may read or write (see PrepareState). Missing files are
// fine; nothing is created or changed.
func (c Config) CheckState() error {
	if runtime.GOOS == "windows" { // no Unix modes to check
		return nil
	}
	dir := c.StateDir()
	var open []string // "path (mode)"
	var fixes []string
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("LEASHD_DB_PATH=%s: its directory %s: %w", c.DBPath, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("LEASHD_DB_PATH=%s: %s is not a directory", c.DBPath, dir)
	}
	if fi, err := os.Stat(expandHome(c.DBPath)); err == nil && fi.IsDir() {
		return fmt.Errorf("LEASHD_DB_PATH=%s is a directory: give the path of the database file, e.g. %s", c.DBPath, filepath.Join(c.DBPath, "leashd.db"))
	}
	if fi.Mode().Perm()&0o077 != 0 {
		open = append(open, fmt.Sprintf("the directory %s (mode %04o)", dir, fi.Mode().Perm()))
		fixes = append(fixes, "chmod 700 "+shellQuote(dir))
	}
	var files []string
	for _, f := range c.stateFiles() {
		fi, err := os.Stat(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("state file %s: %w", f, err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			open = append(open, fmt.Sprintf("%s (mode %04o)", f, fi.Mode().Perm()))
			files = append(files, shellQuote(f))
		}
	}
	if len(files) > 0 {
		fixes = append(fixes, "chmod 600 "+strings.Join(files, " "))
	}
	if len(open) == 0 {
		return nil
	}
	return fmt.Errorf("leashd's state is open to other users: %s; it holds the database of every request and answer and the API token, so only the user leashd runs as may read or write it. Fix: %s",
		strings.Join(open, ", "), strings.Join(fixes, "; "))
}

// shellQuote quotes a path for a command a person copies, when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '~' || r == '+' || r == ':' || r == ',' || r == '@' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// WebToken returns the API token kept in the state directory, creating it
// (32 random bytes as hex, mode 0600, written atomically) at first start;
// created says whether it was made now. A token file others may read or
// write, or one that cannot be read or holds no usable token, is refused
// with a message naming the file and the fix.
func (c Config) WebToken() (token string, created bool, err error) {
	path := c.WebTokenFile()
	token, err = readTokenFile(path, true)
	if !errors.Is(err, fs.ErrNotExist) {
		return token, false, err
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	token = hex.EncodeToString(b)
	switch err := writeNew(path, token+"\n"); {
	case errors.Is(err, fs.ErrExist): // another leashd made it meanwhile
		token, err = readTokenFile(path, true)
		return token, false, err
	case err != nil:
		return "", false, fmt.Errorf("writing the API token to %s: %w (set LEASHD_WEB_TOKEN, or make the state directory writable by the user leashd runs as)", path, err)
	}
	return token, true, nil
}

// ReadWebToken reads the API token a leashd with this configuration
// generated (WebTokenFile), for a client of it such as `leashd ask`.
func (c Config) ReadWebToken() (string, error) {
	path := c.WebTokenFile()
	tok, err := readTokenFile(path, false)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no API token: LEASHD_WEB_TOKEN is not set and %s does not exist (leashd writes it at its first start; is it running with this LEASHD_DB_PATH?); or give --token", path)
	}
	return tok, err
}

// readTokenFile reads a token file; private refuses one others may read
// or write. A missing file's error is fs.ErrNotExist.
func readTokenFile(path string, private bool) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("API token file %s: %w", path, err)
	}
	if private && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("API token file %s is open to other users (mode %04o): whoever read it can answer every request. Fix: chmod 600 %s, or delete it and leashd makes a new token",
			path, fi.Mode().Perm(), shellQuote(path))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("API token file %s cannot be read: %w (it must belong to the user leashd runs as, mode 0600; or delete it and leashd makes a new token)", path, err)
	}
	tok := strings.TrimSpace(string(b))
	if why := WeakSecret(tok); why != "" {
		return "", fmt.Errorf("API token file %s holds no usable token (%s): delete it and leashd makes a new one, or set LEASHD_WEB_TOKEN", path, why)
	}
	return tok, nil
}

// writeNew writes a new file of mode 0600 atomically: to a temporary file
// first, then linked into place, so that no reader ever sees it half
// written and an existing file is never replaced (fs.ErrExist).
func writeNew(path, content string) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*") // mode 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.WriteString(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil { // the new name survives a crash
		_ = d.Sync()
		d.Close()
	}
	return nil
}
