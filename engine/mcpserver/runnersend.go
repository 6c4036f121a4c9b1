package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leashd/leashd/engine"
)

// Forward hands a file an agent on a runner sends to the leashd server,
// with the credential the agent presented and the chat that credential
// was granted for (remote.Runner.SendFile); the server checks both and
// sends the file to the chat. It returns the server's answer for the
// agent.
type Forward func(ctx context.Context, chat, credential, name, caption string, data []byte) (string, error)

// RunnerSendServer serves send_file to the agents a runner starts, on a
// loopback address of the runner's machine. The file is on the runner's
// disk, so it is read here, inside the runner's working directory (no
// path or symlink leads out), and its bytes go to the server over the
// runner's connection. The server's own send_file address is on the
// server's loopback, which an agent on another machine cannot reach; the
// runner points its agents here instead (cmd/leashd rewrites the URL in
// the agent's MCP configuration).
//
// Only a credential a session on this runner was started with is taken
// (Grant): another local user of the machine cannot make the runner read
// its agents' files. Knowing each credential's chat here also lets an
// agent a restarted server adopted send files, though that server never
// minted its credential.
type RunnerSendServer struct {
	dir     string
	limit   int64
	forward Forward
	log     *slog.Logger
	ln      net.Listener
	srv     *http.Server
	url     string

	mu     sync.Mutex
	grants map[string]string // credential → chat
	order  []string          // credentials, oldest first
}

// maxGrants bounds the credentials a runner remembers: far more sessions
// than it runs at once; the oldest are forgotten first.
const maxGrants = 4096

// Grant lets credential send files to chat: the session started with it
// serves that chat.
func (s *RunnerSendServer) Grant(credential, chat string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.grants[credential]; !ok {
		s.order = append(s.order, credential)
	}
	s.grants[credential] = chat
	for len(s.order) > maxGrants {
		delete(s.grants, s.order[0])
		s.order = s.order[1:]
	}
}

// NewRunnerSendServer starts serving send_file on 127.0.0.1 for files in
// dir of at most limit bytes.
func NewRunnerSendServer(dir string, limit int64, forward Forward, log *slog.Logger) (*RunnerSendServer, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &RunnerSendServer{dir: dir, limit: limit, forward: forward, log: log, grants: map[string]string{}}
	var err error
	s.ln, s.srv, s.url, err = serveSendFile(s.authorize, s.serverFor, log)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// URL is the server's MCP endpoint.
func (s *RunnerSendServer) URL() string { return s.url }

// Close stops the server.
func (s *RunnerSendServer) Close() error { return s.srv.Close() }

// maxCredential bounds the credential a caller presents: the server's
// are 43 characters.
const maxCredential = 256

// authorize lets through requests with a credential granted here (the
// server checks it again); the context carries it.
func (s *RunnerSendServer) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || tok == "" || len(tok) > maxCredential {
			httpError(w, http.StatusUnauthorized, "a session credential (Authorization: Bearer …) is required")
			return
		}
		s.mu.Lock()
		_, known := s.grants[tok]
		s.mu.Unlock()
		if !known {
			httpError(w, http.StatusUnauthorized, "unknown session credential: no agent on this runner was started with it")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), chatKey{}, tok)))
	})
}

// serverFor is the MCP server of the session holding credential.
func (s *RunnerSendServer) serverFor(credential string) *mcp.Server {
	return sendFileServer(s.log, func(ctx context.Context, in SendFileInput) (string, error) {
		data, name, err := engine.ReadWorkFile(s.dir, in.Path, s.limit)
		if err != nil {
			return "", err
		}
		if s.forward == nil {
			return "", errors.New("this runner sends no files")
		}
		s.mu.Lock()
		chat := s.grants[credential]
		s.mu.Unlock()
		return s.forward(ctx, chat, credential, name, in.Caption, data)
	})
}
