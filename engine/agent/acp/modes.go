package acp

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/leashd/leashd/engine/agent"
)

// modeAliases are the ACP mode IDs (lower case) that mean each engine
// mode, the agent's own names first: Claude's adapter uses Claude Code's
// names; Gemini CLI calls accept-edits autoEdit and bypass yolo.
var modeAliases = map[agent.Mode][]string{
	agent.ModeDefault:     {"default", "ask", "read-only"},
	agent.ModeAcceptEdits: {"acceptedits", "autoedit", "auto_edit", "auto-edit", "accept-edits"},
	agent.ModePlan:        {"plan", "planning"},
	agent.ModeBypass:      {"bypasspermissions", "yolo", "full-access", "bypass"},
}

// modeIDLocked finds the agent's mode for an engine mode: by ID, then by
// name.
func (s *session) modeIDLocked(m agent.Mode) (string, bool) {
	for _, alias := range modeAliases[m] {
		for _, am := range s.modes {
			if strings.ToLower(string(am.Id)) == alias || strings.ToLower(am.Name) == alias {
				return string(am.Id), true
			}
		}
	}
	for _, am := range s.modes {
		if strings.EqualFold(string(am.Id), string(m)) {
			return string(am.Id), true
		}
	}
	return "", false
}

// ModeName implements agent.ModeNamer.
func (s *session) ModeName(m agent.Mode) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.modeIDLocked(m)
	if !ok {
		return ""
	}
	return s.modeNameLocked(id)
}

func (s *session) modeNameLocked(id string) string {
	for _, am := range s.modes {
		if string(am.Id) == id {
			return am.Name
		}
	}
	return id
}

// SetMode implements agent.Session: session/set_mode with the agent's own
// mode for m. A mode the agent lacks is refused, naming the agent's modes.
func (s *session) SetMode(ctx context.Context, m agent.Mode) error {
	s.mu.Lock()
	id, ok := s.modeIDLocked(m)
	cur := s.current
	var names []string
	for _, am := range s.modes {
		names = append(names, fmt.Sprintf("%s (%s)", am.Name, am.Id))
	}
	sid := s.id
	s.mu.Unlock()
	if len(names) == 0 {
		return fmt.Errorf("%w: the agent offers no modes", agent.ErrModeUnsupported)
	}
	if !ok {
		return fmt.Errorf("%w: the agent has no %s mode; its modes are %s", agent.ErrModeUnsupported, m, strings.Join(names, ", "))
	}
	if id == cur {
		return nil
	}
	if _, err := call[sdk.SetSessionModeResponse](ctx, s, sdk.AgentMethodSessionSetMode, sdk.SetSessionModeRequest{SessionId: sdk.SessionId(sid), ModeId: sdk.SessionModeId(id)}); err != nil {
		return err
	}
	s.mu.Lock()
	s.setCurrentLocked(id)
	s.mu.Unlock()
	return nil
}

func (s *session) setCurrentLocked(id string) {
	s.current = id
	if s.modeMoved != nil {
		close(s.modeMoved)
	}
	s.modeMoved = make(chan struct{})
}

// awaitModeChange waits (up to d) until the agent reports a mode other
// than from.
func (s *session) awaitModeChange(from string, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		s.mu.Lock()
		if s.current != from {
			s.mu.Unlock()
			return
		}
		if s.modeMoved == nil {
			s.modeMoved = make(chan struct{})
		}
		ch := s.modeMoved
		s.mu.Unlock()
		select {
		case <-ch:
		case <-t.C:
			return
		case <-s.done:
			return
		}
	}
}
