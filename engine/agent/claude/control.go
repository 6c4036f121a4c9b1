package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/leashd/leashd/engine/agent"
)

// permission asks the turn's handler about a can_use_tool request on its
// own goroutine (a person may take minutes) and answers the CLI, unless
// the CLI withdrew the request meanwhile.
func (s *session) permission(reqID string, req controlRequest) {
	s.answerLater(reqID, func(ctx context.Context, ts *turnState) any {
		var resp agent.PermissionResponse
		switch {
		case ts == nil:
			resp = agent.PermissionResponse{Message: "leashd has no turn running to ask about this tool."}
		case ctx.Err() != nil:
			// Withdrawn or the turn ended before this goroutine ran: do
			// not show people a question that is already over.
			resp = agent.PermissionResponse{Message: "The request ended before it could be asked."}
		default:
			pr := req.permissionRequest()
			if s.resumable() != nil {
				pr.Ref = reqID
			}
			if pr.ToolName == agent.ToolExitPlanMode {
				pr.PlanDir = s.a.planDir // where its planFilePath may be read
			}
			resp = ts.h.Permission(ctx, pr)
		}
		return permissionBody(req, resp)
	}, "answering claude's permission request", "tool", req.ToolName)
}

// elicitation asks the turn's handler to put an MCP server's question to
// the person, on its own goroutine, and answers the CLI with accept,
// decline or cancel, unless the CLI withdrew the request meanwhile. With
// no turn, or a handler that cannot ask, it answers cancel at once (left
// unanswered, the agent would wait forever).
func (s *session) elicitation(reqID string, req controlRequest) {
	s.answerLater(reqID, func(ctx context.Context, ts *turnState) any {
		resp := agent.ElicitationResponse{Action: agent.ElicitCancel}
		var el agent.Elicitor
		if ts != nil {
			el, _ = ts.h.(agent.Elicitor)
		}
		switch {
		case el == nil:
			s.log.Info("claude asked for input from an MCP server with nobody to ask; cancelled", "server", req.MCPServerName)
		case ctx.Err() == nil:
			resp = el.Elicit(ctx, req.elicitationRequest())
		}
		switch resp.Action {
		case agent.ElicitAccept, agent.ElicitDecline:
		default:
			resp = agent.ElicitationResponse{Action: agent.ElicitCancel}
		}
		return elicitationBody{Action: resp.Action, Content: resp.Content}
	}, "answering claude's elicitation", "server", req.MCPServerName)
}

// answerLater decides a request the CLI sent (reqID) on its own goroutine
// with decide — given a context the turn's end or the CLI's withdrawal
// (control_cancel_request) cancels, and the turn, nil when none runs — and
// answers the CLI with what decide returns, unless the CLI withdrew the
// request meanwhile or the process is gone. failed and kv describe the
// request in the log when the answer cannot be sent.
func (s *session) answerLater(reqID string, decide func(ctx context.Context, ts *turnState) any, failed string, kv ...any) {
	ts := s.currentTurn()
	parent := s.ctx
	if ts != nil {
		parent = ts.ctx
	}
	ctx, cancel := context.WithCancelCause(parent)
	p := &perm{cancel: cancel, at: s.lineAt}
	s.mu.Lock()
	s.perms[reqID] = p
	s.mu.Unlock()
	go func() {
		defer cancel(nil)
		body := decide(ctx, ts)
		// Forgotten once answered (or not): only then may acks pass
		// its line, so a server killed before the answer went out has
		// the next one read the request again.
		defer s.forgetPerm(reqID)
		s.mu.Lock()
		withdrawn, letGo := p.withdrawn, s.letGoOf
		s.mu.Unlock()
		if letGo {
			return // let go of: the next leashd asks again and answers
		}
		if withdrawn {
			s.log.Debug("request withdrawn by claude; not answering", append([]any{"request_id", reqID}, kv...)...)
			return
		}
		if s.ctx.Err() != nil {
			return // the process is gone
		}
		err := s.send(outControlResponse{Type: typeControlResponse, Response: outSuccess{
			Subtype: subtypeSuccess, RequestID: reqID, Response: body,
		}})
		if err != nil {
			s.log.Warn(failed, append(kv, "err", err)...)
		}
	}()
}

// withdraw handles control_cancel_request: the decision's context is
// cancelled and no answer is sent.
func (s *session) withdraw(reqID string) {
	s.mu.Lock()
	p := s.perms[reqID]
	if p != nil {
		p.withdrawn = true
	}
	s.mu.Unlock()
	if p == nil {
		s.log.Debug("control_cancel_request for no pending request", "request_id", reqID)
		return
	}
	p.cancel(ErrRequestWithdrawn)
}

func (s *session) replyError(reqID, msg string) {
	err := s.send(outControlResponse{Type: typeControlResponse, Response: outError{Subtype: subtypeError, RequestID: reqID, Error: msg}})
	if err != nil {
		s.log.Warn("answering claude's control request", "err", err)
	}
}

// send writes one message to stdin.
func (s *session) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	s.writeMu.Lock()
	if s.stdinClosed {
		s.writeMu.Unlock()
		return fmt.Errorf("%w: its input is closed", agent.ErrSessionEnded)
	}
	_, err = s.stdin.Write(b)
	s.writeMu.Unlock()
	if err == nil {
		return nil
	}
	// A CLI that cannot be written to is dying or dead: say how it ended.
	select {
	case <-s.done:
		return s.endedErr()
	case <-time.After(2 * time.Second):
	}
	s.log.Warn("writing to claude failed; ending it", "err", err)
	s.kill()
	return fmt.Errorf("%w: writing to claude failed: %v", agent.ErrSessionEnded, err)
}

// control sends a control request and waits for its response.
func (s *session) control(ctx context.Context, body map[string]any) (json.RawMessage, error) {
	s.mu.Lock()
	s.seq++
	id := "leashd_" + strconv.Itoa(s.seq)
	ch := make(chan controlResponse, 1)
	s.waiting[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiting, id)
		s.mu.Unlock()
	}()
	subtype, _ := body["subtype"].(string)
	if err := s.send(outControlRequest{Type: typeControlRequest, RequestID: id, Request: body}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Subtype == subtypeError {
			return nil, fmt.Errorf("claude refused %s: %s", subtype, r.Error)
		}
		return r.Response, nil
	case <-s.done:
		return nil, s.endedErr()
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no answer from claude: %w", subtype, context.Cause(ctx))
	}
}
