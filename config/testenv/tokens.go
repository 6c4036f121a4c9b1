package testenv

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/config"
)

// Tokens is an http.RoundTripper that sends each known leashd's API token
// (Authorization: Bearer) with requests to it, as a client that found the
// token would; requests that carry an Authorization header already, or go
// elsewhere, are sent as they are. The zero value is ready to use.
type Tokens struct{ m sync.Map } // base URL → token

// Set registers the token of the leashd at baseURL (e.g.
// "http://127.0.0.1:8080").
func (k *Tokens) Set(baseURL, token string) { k.m.Store(strings.TrimRight(baseURL, "/"), token) }

// RoundTrip implements http.RoundTripper.
func (k *Tokens) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") == "" {
		if tok, ok := k.m.Load(r.URL.Scheme + "://" + r.URL.Host); ok {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+tok.(string))
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Client is an http.Client sending the registered tokens.
func (k *Tokens) Client() *http.Client { return &http.Client{Transport: k} }

// WebToken waits (up to 10 s) for the API token a leashd generated in
// stateDir (the directory of its LEASHD_DB_PATH) and returns it.
func WebToken(t testing.TB, stateDir string) string {
	t.Helper()
	path := filepath.Join(stateDir, config.TokenFileName)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err == nil && strings.TrimSpace(string(b)) != "" {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("no API token in %s: %v", path, err)
		}
	}
}

// PrivateDir is a new temporary directory of mode 0700, as leashd wants
// its state directory (t.TempDir makes 0755 ones, which leashd refuses).
func PrivateDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
