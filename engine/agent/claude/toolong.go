package claude

import (
	"fmt"
	"regexp"

	"github.com/leashd/leashd/engine/agent"
)

var (
	sniffType      = regexp.MustCompile(`^\s*\{\s*"type"\s*:\s*"([a-z_]+)"`)
	sniffRequestID = regexp.MustCompile(`"request_id"\s*:\s*"([^"\\]{1,200})"`)
)

// handleTooLong acts on a stdout line longer than the message limit from
// its first maxLine bytes, so that a huge message costs no more memory than
// the limit: the text being cut ends with a "… truncated (N bytes)" note
// and goes on as usual (an assistant message's text, a result); a control
// request is refused, since acting on part of a tool's input could do
// something nobody saw; anything else is skipped.
func (s *session) handleTooLong(tl *lineTooLongError) {
	note := "\n\n" + agent.TruncatedNote(tl.n-len(tl.head))
	fixed, noted, ok := closeTruncated(tl.head, note)
	var l *line
	if ok {
		l, _ = parseLine(fixed)
	}
	if l == nil { // not repairable: go by the line's type alone
		if m := sniffType.FindSubmatch(tl.head); m != nil {
			l = &line{Type: string(m[1])}
			if m := sniffRequestID.FindSubmatch(tl.head); m != nil {
				l.RequestID = string(m[1])
			}
		}
	}
	typ := ""
	if l != nil {
		typ = l.Type
	}
	s.log.Warn("a line from claude is longer than the message limit (LEASHD_MAX_AGENT_MESSAGE_BYTES); handled from its first bytes",
		"bytes", tl.n, "limit", s.a.maxLine, "type", typ, "start", quote(tl.start))
	switch {
	case l == nil:
		s.log.Error("skipping a line from claude longer than the limit", "bytes", tl.n, "limit", s.a.maxLine, "start", quote(tl.start))
	case l.Type == typeControlRequest:
		s.refuseTooLong(l, tl.n)
	case l.Type == typeResult && !ok:
		l.Result = note[2:]
		s.dispatch(l, tl.start)
	case l.Type == typeAssistant && !noted:
		s.dispatch(l, tl.start)
		if ts := s.currentTurn(); ts != nil && l.ParentToolUseID == nil {
			ts.h.Text(note)
		}
	default:
		s.dispatch(l, tl.start)
	}
}

// refuseTooLong answers a control request that was too long to read whole:
// a tool call is denied with a reason the model reads, anything else gets
// an error. The chat is told too.
func (s *session) refuseTooLong(l *line, n int) {
	if l.RequestID == "" {
		s.log.Error("skipping a control request from claude longer than the limit, without a readable request_id", "bytes", n)
		return
	}
	req, _ := l.request()
	msg := fmt.Sprintf("leashd refused this request: it was %d bytes, over leashd's limit of %d bytes for one message from the agent (LEASHD_MAX_AGENT_MESSAGE_BYTES). Nobody was asked. Use smaller steps (e.g. write the file in parts).", n, s.a.maxLine)
	var err error
	if req.Subtype == subtypeCanUseTool || req.Subtype == "" {
		err = s.send(outControlResponse{Type: typeControlResponse, Response: outSuccess{
			Subtype: subtypeSuccess, RequestID: l.RequestID, Response: permissionBody(req, agent.PermissionResponse{Message: msg}),
		}})
	} else {
		s.replyError(l.RequestID, msg)
	}
	if err != nil {
		s.log.Warn("answering claude's control request", "err", err)
	}
	if ts := s.currentTurn(); ts != nil {
		what := "request"
		if req.ToolName != "" {
			what = req.ToolName + " request"
		}
		ts.h.Text(fmt.Sprintf("\n\n… a %s of %d bytes from the agent was refused: over the %d-byte limit for one agent message.\n\n", what, n, s.a.maxLine))
	}
}
