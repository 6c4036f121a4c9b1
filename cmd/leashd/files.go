package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/leashd/leashd/engine"
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

// SendFile implements mcpserver.FileSender through the engine.
func (p *phoneFiles) SendFile(ctx context.Context, chatID, path, caption string) (string, error) {
	p.mu.Lock()
	eng := p.eng
	p.mu.Unlock()
	if eng == nil {
		return "", fmt.Errorf("leashd is starting; try again in a moment")
	}
	return eng.SendFile(ctx, chatID, path, caption)
}

func (p *phoneFiles) close() { _ = p.send.Close() }
