package acp

import (
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/leashd/leashd/engine/agent"
)

// update shows a session/update: text streams to the chat, tool calls are
// counted (and named), a plan is shown as a checklist, a mode change noted.
func (s *session) update(u sdk.SessionUpdate) {
	s.mu.Lock()
	if s.replaying {
		s.mu.Unlock()
		return
	}
	h, stopped := s.h, s.stopped
	s.mu.Unlock()
	switch {
	case u.AgentMessageChunk != nil:
		// After /stop (session/cancel) the person wants nothing more of
		// this turn: text the agent still streams before the cancel lands
		// (Claude Code may answer its aborted tool first) is not shown.
		if t := u.AgentMessageChunk.Content.Text; t != nil && h != nil && !stopped {
			s.mu.Lock()
			s.text.WriteString(t.Text)
			s.mu.Unlock()
			h.Text(t.Text)
		}
	case u.ToolCall != nil:
		tc := u.ToolCall
		name := toolName(tc.Meta, string(tc.Kind), tc.Title, tc.RawInput)
		s.mu.Lock()
		s.tools[string(tc.ToolCallId)] = name
		s.mu.Unlock()
		if h != nil {
			h.ToolUse(name, rawJSON(tc.RawInput))
		}
	case u.Plan != nil:
		var b strings.Builder
		b.WriteString("Plan:")
		for _, e := range u.Plan.Entries {
			mark := "☐"
			switch e.Status {
			case sdk.PlanEntryStatusCompleted:
				mark = "☑"
			case sdk.PlanEntryStatusInProgress:
				mark = "▶"
			}
			b.WriteString("\n" + mark + " " + e.Content)
		}
		checklist := b.String()
		s.mu.Lock()
		same := checklist == s.plan
		s.plan = checklist
		s.mu.Unlock()
		if !same && h != nil {
			h.Text("\n\n" + checklist + "\n\n")
		}
	case u.CurrentModeUpdate != nil:
		s.mu.Lock()
		s.setCurrentLocked(string(u.CurrentModeUpdate.CurrentModeId))
		s.mu.Unlock()
		s.log.Debug("agent mode changed", "mode", u.CurrentModeUpdate.CurrentModeId)
	}
}

// toolName names a tool call as Claude Code would: the Claude adapter
// says it in _meta.claudeCode.toolName; otherwise the ACP kind stands in
// (execute with a command is Bash, edit with a path Edit, …).
func toolName(meta map[string]any, kind, title string, rawInput any) string {
	if cc, ok := meta["claudeCode"].(map[string]any); ok {
		if n, ok := cc["toolName"].(string); ok && n != "" {
			return n
		}
	}
	in, _ := rawInput.(map[string]any)
	has := func(k string) bool { _, ok := in[k].(string); return ok }
	switch kind {
	case "execute":
		if has("command") {
			return "Bash"
		}
	case "edit":
		if has("file_path") && has("old_string") {
			return "Edit"
		}
		if has("file_path") && has("content") {
			return "Write"
		}
	case "read":
		if has("file_path") {
			return "Read"
		}
	case "fetch":
		if has("url") {
			return "WebFetch"
		}
	case "switch_mode":
		if has("plan") {
			return agent.ToolExitPlanMode
		}
	}
	if n, ok := kindNames[kind]; ok {
		return n
	}
	if kind != "" && kind != "other" {
		return kind
	}
	if title != "" {
		return title
	}
	return "tool"
}

// kindNames name ACP tool kinds for people when the agent gives no tool
// name leashd knows.
var kindNames = map[string]string{
	"read": "Read", "edit": "Edit", "delete": "Delete", "move": "Move", "search": "Search",
	"execute": "Shell", "think": "Think", "fetch": "Fetch", "switch_mode": "Mode switch",
}
