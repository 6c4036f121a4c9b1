package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent/sandbox/remote"
	"github.com/leashd/leashd/engine/mcpserver"
	"github.com/leashd/leashd/engine/stt"
)

// phoneFiles wires files between people and agents (issue #28): voice
// notes through LEASHD_STT_*, and leashd's send_file MCP server, which
// every agent session gets with a credential that sends to its own chat
// only.
type phoneFiles struct {
	send *mcpserver.SendServer

	mu  sync.Mutex
	eng *engine.Engine // set once built (use): the server starts before it
}

// wireFiles sets deps' Transcriber and SessionTools; use gives it the
// engine once built, close stops the send_file server.
func (s settings) wireFiles(log *slog.Logger, deps *engine.Deps) (*phoneFiles, error) {
	if s.stt.URL != "" {
		t, err := stt.New(s.stt.URL, s.stt.Model, s.stt.APIKey)
		if err != nil {
			return nil, err
		}
		deps.Transcriber = t
		log.Info("voice notes are transcribed", "stt_url", s.stt.URL)
	}
	p := &phoneFiles{}
	srv, err := mcpserver.NewSendServer(p, log.With("component", "send_file"))
	if err != nil {
		return nil, err
	}
	p.send = srv
	deps.SessionTools = srv
	return p, nil
}

// use hands the built engine to the send_file server.
func (p *phoneFiles) use(eng *engine.Engine) {
	p.mu.Lock()
	p.eng = eng
	p.mu.Unlock()
}

// engine is the built engine, or an error for the agent while leashd
// is starting.
func (p *phoneFiles) engine() (*engine.Engine, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.eng == nil {
		return nil, errors.New("leashd is starting; try again in a moment")
	}
	return p.eng, nil
}

// SendFile implements mcpserver.FileSender through the engine.
func (p *phoneFiles) SendFile(ctx context.Context, chatID, path, caption string) (string, error) {
	eng, err := p.engine()
	if err != nil {
		return "", err
	}
	return eng.SendFile(ctx, chatID, path, caption)
}

// fromRunner takes a file an agent on a runner sent (the runner's
// send_file read it there). The runner names the chat the credential was
// granted for on it; the credential, if this server minted it, must be
// that chat's, and the runner must run an agent for that chat, so a
// runner cannot send into chats it does not serve. A credential this
// server does not know belongs to a session an earlier run started, and
// a restarted server adopted since: the runner vouches for it.
func (p *phoneFiles) fromRunner(hub *remote.Hub, log *slog.Logger) func(context.Context, string, remote.FileUpload) (string, error) {
	return func(ctx context.Context, runner string, f remote.FileUpload) (string, error) {
		chat, known := p.send.ChatOf(f.Credential)
		switch {
		case known && f.Chat != "" && f.Chat != chat:
			log.Warn("a runner sent a file with a credential of another chat; refused", "runner", runner, "chat", f.Chat, "file", f.Name)
			return "", errors.New("this session credential belongs to another chat")
		case !known:
			chat = f.Chat
		}
		if chat == "" || !hub.Holds(runner, chat) {
			log.Warn("a runner sent a file for a chat it runs no agent for; refused", "runner", runner, "chat", chat, "file", f.Name)
			return "", errors.New("this runner runs no agent for the chat this credential sends to")
		}
		eng, err := p.engine()
		if err != nil {
			return "", err
		}
		return eng.SendFileData(ctx, chat, f.Name, f.Caption, f.Data)
	}
}

func (p *phoneFiles) close() { _ = p.send.Close() }
