package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leashd/leashd/engine/agent"
)

// ToolSendFile is the tool every agent leashd starts gets: it sends a file
// from the agent's working directory to its chat.
const ToolSendFile = "send_file"

// SendServerName is the MCP server's name in the agent's configuration:
// agents see its tool as mcp__leashd__send_file.
const SendServerName = "leashd"

// FileSender sends a file from a chat's working directory to the chat
// (*engine.Engine); the error, for the agent, says why not.
type FileSender interface {
	SendFile(ctx context.Context, chatID, path, caption string) (string, error)
}

// SendServer serves send_file to the agents leashd starts, on a loopback
// address of its own (whatever LEASHD_WEB_ADDR is). Each session gets a
// credential of its own (Session), tied to the one chat it serves, that
// can do nothing but send files there: it cannot ask, answer or list
// anything, so an agent holding it cannot approve its own requests.
type SendServer struct {
	send FileSender
	log  *slog.Logger
	ln   net.Listener
	srv  *http.Server
	url  string

	mu     sync.Mutex
	grants map[string]string // credential → chat ("" until bound)
	byChat map[string]string // chat → its session's credential
}

// maxUnbound bounds the credentials minted for sessions not (yet) tied to
// a chat (spares): the oldest are dropped past it.
const maxUnbound = 64

// NewSendServer starts serving send_file on 127.0.0.1.
func NewSendServer(send FileSender, log *slog.Logger) (*SendServer, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &SendServer{send: send, log: log, grants: map[string]string{}, byChat: map[string]string{}}
	var err error
	s.ln, s.srv, s.url, err = serveSendFile(s.authorize, s.serverFor, log)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// serveSendFile serves send_file on a new loopback address: authorize
// puts the caller's key (a chat, a credential) in the context, and
// serverFor gives the MCP server for it.
func serveSendFile(authorize func(http.Handler) http.Handler, serverFor func(key string) *mcp.Server, log *slog.Logger) (net.Listener, *http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, "", fmt.Errorf("send_file's MCP server cannot listen on 127.0.0.1: %w", err)
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return serverFor(chatFrom(r.Context()))
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: log})
	mux := http.NewServeMux()
	mux.Handle("/mcp", authorize(mcpHandler))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("send_file's MCP server stopped", "err", err)
		}
	}()
	return ln, srv, "http://" + ln.Addr().String() + "/mcp", nil
}

// URL is the server's MCP endpoint.
func (s *SendServer) URL() string { return s.url }

// Close stops the server.
func (s *SendServer) Close() error { return s.srv.Close() }

// Session mints a new session's credential (engine.SessionTools): the
// MCP server with it, and bind, which ties it to the session's chat (and
// retires the chat's previous session's credential: a chat has one
// session at a time).
func (s *SendServer) Session() ([]agent.MCPServer, func(chatID string)) {
	tok := newToken()
	s.mu.Lock()
	s.grants[tok] = ""
	s.dropUnboundLocked()
	s.mu.Unlock()
	bind := func(chatID string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if old := s.byChat[chatID]; old != "" && old != tok {
			delete(s.grants, old)
		}
		s.grants[tok] = chatID
		s.byChat[chatID] = tok
	}
	return []agent.MCPServer{{Name: SendServerName, URL: s.url, Headers: map[string]string{"Authorization": "Bearer " + tok}}}, bind
}

// dropUnboundLocked keeps at most maxUnbound credentials without a chat.
func (s *SendServer) dropUnboundLocked() {
	n := 0
	for tok, chat := range s.grants {
		if chat == "" {
			n++
			if n > maxUnbound {
				delete(s.grants, tok)
			}
		}
	}
}

func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

type chatKey struct{}

func chatFrom(ctx context.Context) string {
	c, _ := ctx.Value(chatKey{}).(string)
	return c
}

// authorize lets through requests whose credential is tied to a chat, with
// the chat in their context; others get 401 or 403.
func (s *SendServer) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || tok == "" {
			httpError(w, http.StatusUnauthorized, "a session credential (Authorization: Bearer …) is required")
			return
		}
		s.mu.Lock()
		chat, known := s.grants[tok]
		s.mu.Unlock()
		switch {
		case !known:
			httpError(w, http.StatusUnauthorized, "unknown or retired session credential")
			return
		case chat == "":
			httpError(w, http.StatusForbidden, "this session serves no chat yet")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), chatKey{}, chat)))
	})
}

// serverFor is the MCP server of one chat, with send_file only.
func (s *SendServer) serverFor(chat string) *mcp.Server {
	return sendFileServer(s.log, func(ctx context.Context, in SendFileInput) (string, error) {
		return s.send.SendFile(ctx, chat, in.Path, in.Caption)
	})
}

// sendFileServer is an MCP server with send_file alone, done by send.
func sendFileServer(log *slog.Logger, send func(context.Context, SendFileInput) (string, error)) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: SendServerName, Version: "1"}, &mcp.ServerOptions{
		Logger:       log,
		Instructions: "leashd connects you to the person's chat. Use send_file to send them a file from your working directory (a picture, a report, a build).",
	})
	srv.AddTool(&mcp.Tool{
		Name:        ToolSendFile,
		Description: "Send a file from your working directory to the person's chat (pictures are shown as pictures). path is relative to the working directory (or absolute inside it); caption is optional text sent with it.",
		InputSchema: json.RawMessage(sendFileSchema),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in, err := ParseSendFile(req.Params.Arguments)
		if err != nil {
			return toolError(err.Error()), nil
		}
		out, err := send(ctx, in)
		if err != nil {
			return toolError("Not sent: " + err.Error()), nil
		}
		return text(out), nil
	})
	return srv
}

const sendFileSchema = `{"type":"object","properties":{"path":{"type":"string","description":"the file's path, relative to the working directory"},
"caption":{"type":"string","description":"text sent with the file"}},"required":["path"]}`

// SendFileInput is send_file's input.
type SendFileInput struct {
	Path    string `json:"path"`
	Caption string `json:"caption"`
}

// maxCaption bounds a caption (Telegram's is 1024 characters).
const maxCaption = 1024

// ParseSendFile reads send_file's input: {"path": "…", "caption": "…"}.
func ParseSendFile(args json.RawMessage) (SendFileInput, error) {
	var in SendFileInput
	if err := strictJSON(args, &in); err != nil {
		return in, fmt.Errorf("send_file takes {\"path\": \"…\", \"caption\": \"…\"}: %w", err)
	}
	if strings.TrimSpace(in.Path) == "" {
		return in, errors.New("path is required: the file's path, relative to the working directory")
	}
	if strings.ContainsRune(in.Path, 0) {
		return in, errors.New("path holds a NUL character")
	}
	if r := []rune(in.Caption); len(r) > maxCaption {
		return in, fmt.Errorf("caption is %d characters; at most %d are accepted", len(r), maxCaption)
	}
	return in, nil
}

// ChatOf is the chat a session's credential sends to; false when the
// credential is unknown, retired or tied to no chat yet. A runner's
// send_file presents the credential its agent was given (RunnerSendServer).
func (s *SendServer) ChatOf(credential string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	chat := s.grants[credential]
	return chat, chat != ""
}
