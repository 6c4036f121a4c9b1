package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/approval"
	"github.com/leashd/leashd/interactions"
	"github.com/leashd/leashd/interactions/client"
)

// What a hook does when Claude Code runs it. Each reads the event from
// stdin and asks the running leashd whether the person is away; at the
// desk, and whenever leashd cannot be reached, it prints nothing and
// exits 0 — no decision, so Claude Code goes on as without the hook — and
// it does so within a second (hookReach).

// hookReach bounds how long a hook tries to reach leashd before it gives
// up with no decision.
const hookReach = 800 * time.Millisecond

// maxHookInput bounds the event read from stdin.
const maxHookInput = 4 << 20

// hookInput is the event Claude Code writes on a hook's stdin (the fields
// leashd reads).
type hookInput struct {
	SessionID             string           `json:"session_id"`
	TranscriptPath        string           `json:"transcript_path"`
	Cwd                   string           `json:"cwd"`
	HookEventName         string           `json:"hook_event_name"`
	ToolName              string           `json:"tool_name"`
	ToolInput             json.RawMessage  `json:"tool_input"`
	PermissionSuggestions []map[string]any `json:"permission_suggestions"`
	LastAssistantMessage  string           `json:"last_assistant_message"`
	Message               string           `json:"message"`
	NotificationType      string           `json:"notification_type"`
}

// hookFlags are a hook's flags, as install wrote them.
type hookFlags struct {
	chat, url, token string
}

// runHookEvent is `leashd hook permission-request|stop|notify`.
func runHookEvent(ctx context.Context, cfg settings, sub string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("leashd hook "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f hookFlags
	fs.StringVar(&f.chat, "chat", "", "")
	fs.StringVar(&f.url, "url", "", "")
	fs.StringVar(&f.token, "token", "", "")
	if err := fs.Parse(args); err != nil || f.chat == "" {
		// Claude Code runs this: a hook that cannot work decides nothing.
		fmt.Fprintf(stderr, "leashd hook %s: %v (--chat is required; reinstall with leashd hook install)\n", sub, err)
		return nil
	}
	var in hookInput
	if err := json.NewDecoder(io.LimitReader(stdin, maxHookInput)).Decode(&in); err != nil {
		fmt.Fprintf(stderr, "leashd hook %s: reading the event: %v\n", sub, err)
		return nil
	}
	c, ok := hookClient(cfg, f, in, stderr)
	if !ok {
		return nil
	}
	if sub == "prompt" {
		// Typed at the terminal: the person is at the desk now.
		actx, cancel := context.WithTimeout(ctx, hookReach)
		defer cancel()
		if _, err := c.DeskActive(actx, f.chat); err != nil {
			fmt.Fprintln(stderr, "leashd hook: leashd is not reachable:", err)
		}
		return nil
	}
	if !hookAway(ctx, c, f.chat, stderr) {
		return nil // at the desk, or leashd is not there
	}
	var out any
	switch sub {
	case "permission-request":
		out = hookPermission(ctx, c, f.chat, in)
	case "stop":
		out = hookStop(ctx, c, f.chat, in)
	case "notify":
		hookNotify(ctx, c, f.chat, in)
	}
	if out == nil {
		return nil
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// hookClient returns a client of the running leashd, found as leashd ask
// finds it; false (a line on stderr says why) when it cannot be.
func hookClient(cfg settings, f hookFlags, in hookInput, stderr io.Writer) (*client.Client, bool) {
	url := f.url
	if url == "" {
		u, err := apiURL(cfg)
		if err != nil {
			fmt.Fprintln(stderr, "leashd hook:", err)
			return nil, false
		}
		url = u
	}
	tok, err := clientToken(cfg, f.token)
	if err != nil {
		fmt.Fprintln(stderr, "leashd hook:", err)
		return nil, false
	}
	src := interactions.Source{Kind: interactions.SourceHook, SessionID: in.SessionID, Cwd: in.Cwd}
	return client.New(url, tok, client.WithSource(src)), true
}

// hookAway asks leashd whether the person is away; false at the desk, and
// when leashd cannot be reached within hookReach (a line on stderr).
func hookAway(ctx context.Context, c *client.Client, chat string, stderr io.Writer) bool {
	actx, cancel := context.WithTimeout(ctx, hookReach)
	defer cancel()
	st, err := c.Away(actx, chat)
	if err != nil {
		fmt.Fprintln(stderr, "leashd hook: leashd is not reachable, the terminal decides:", err)
		return false
	}
	return st.Away
}

// permissionOutput is a PermissionRequest hook's decision.
type permissionOutput struct {
	HookSpecificOutput struct {
		HookEventName string         `json:"hookEventName"`
		Decision      map[string]any `json:"decision"`
	} `json:"hookSpecificOutput"`
}

// hookPermission relays a permission dialog to the chat, as leashd's MCP
// permission_prompt does (approval.AskPermission): a tool approval, a plan
// review, or AskUserQuestion's questions. No answer (expired, withdrawn,
// back at the desk) is no decision: the terminal shows the dialog.
func hookPermission(ctx context.Context, c *client.Client, chat string, in hookInput) any {
	if in.ToolName == "" {
		return nil
	}
	input := in.ToolInput
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage("{}")
	}
	if in.ToolName == agent.ToolExitPlanMode {
		if _, _, refusal, _ := approval.PlanOf(input, ""); refusal != "" {
			return nil // no plan in the event to show: the terminal shows it
		}
	}
	req := agent.PermissionRequest{ToolName: in.ToolName, Input: input}
	resp := approval.AskPermission(ctx, c, chat, req)
	if resp.NoAnswer || ctx.Err() != nil {
		return nil
	}
	var out permissionOutput
	out.HookSpecificOutput.HookEventName = "PermissionRequest"
	if !resp.Allow {
		if strings.HasPrefix(resp.Message, "The approval could not be asked") || strings.HasPrefix(resp.Message, "The question could not be asked") || strings.HasPrefix(resp.Message, "The plan could not be shown") {
			return nil // leashd refused to ask: the terminal decides
		}
		out.HookSpecificOutput.Decision = map[string]any{"behavior": "deny", "message": resp.Message}
		return out
	}
	// Claude Code takes an allow of ExitPlanMode only with updatedInput
	// (2.1.332 shows the plan dialog anyway without it): always sent.
	d := map[string]any{"behavior": "allow"}
	if len(resp.UpdatedInput) > 0 {
		d["updatedInput"] = resp.UpdatedInput
	}
	if ups := hookPermissionUpdates(resp.UpdatedPermissions); len(ups) > 0 {
		d["updatedPermissions"] = ups
	}
	out.HookSpecificOutput.Decision = d
	return out
}

// hookPermissionUpdates writes permission updates as Claude Code's hooks
// take them.
func hookPermissionUpdates(ups []agent.PermissionUpdate) []map[string]any {
	var out []map[string]any
	for _, u := range ups {
		m := map[string]any{"type": u.Type, "destination": "session"}
		switch u.Type {
		case "setMode":
			m["mode"] = string(u.Mode)
		case "addRules":
			var rules []map[string]string
			for _, r := range u.Rules {
				rule := map[string]string{"toolName": r.ToolName}
				if r.RuleContent != "" {
					rule["ruleContent"] = r.RuleContent
				}
				rules = append(rules, rule)
			}
			m["rules"], m["behavior"] = rules, u.Behavior
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// stopOutput is a Stop hook's decision: block, with the next instruction
// as the reason, continues the same session.
type stopOutput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// hookStop sends the session's last message to the chat as a text
// request; what the person types there comes back as the next
// instruction. No answer is no decision: the session stops and waits at
// its prompt.
func hookStop(ctx context.Context, c *client.Client, chat string, in hookInput) any {
	msg := strings.TrimSpace(in.LastAssistantMessage)
	if msg == "" {
		msg = lastAssistantText(in.TranscriptPath)
	}
	if msg == "" {
		msg = "(no text)"
	}
	where := in.Cwd
	if where == "" {
		where = "your terminal"
	}
	const tail = "\n\nType the next instruction to continue this session, or /back to leave it at the terminal."
	room := interactions.MaxQuestionBytes - len(tail)
	if len(msg) > room {
		msg = strings.ToValidUTF8(msg[:room-len("…")], "") + "…"
	}
	o, err := c.Ask1(ctx, client.Request{ChatID: chat, Kind: "text", Header: "Claude Code finished in " + pathTail(where, 70), Question: msg + tail})
	if err != nil || o.Status != string(interactions.StatusAnswered) || strings.TrimSpace(o.Answer) == "" {
		return nil
	}
	return stopOutput{Decision: "block", Reason: "The user, away from the desk, sent this next instruction from their phone through leashd; continue with it:\n\n" + o.Answer}
}

// hookNotify tells the chat that the terminal is waiting, when away (a
// permission dialog nobody answered in the chat is shown there now).
func hookNotify(ctx context.Context, c *client.Client, chat string, in hookInput) {
	text := "Claude Code is waiting at the terminal"
	if in.Cwd != "" {
		text += " in " + in.Cwd
	}
	if m := strings.TrimSpace(in.Message); m != "" {
		text += ": " + m
	}
	nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, _ = c.AwayNotice(nctx, chat, approval.OneLine(text, 1000))
}

// lastAssistantText is the last assistant text of a Claude Code
// transcript (JSON lines), for a CLI whose Stop event does not carry it.
func lastAssistantText(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	last := ""
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Type != "assistant" {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(line.Message.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
				last = b.Text
			}
		}
	}
	return last
}

// pathTail is a path on one line, its end kept when it is longer than n
// runes (the project's directory names it best).
func pathTail(p string, n int) string {
	r := []rune(strings.Join(strings.Fields(p), " "))
	if len(r) <= n {
		return string(r)
	}
	return "…" + string(r[len(r)-n+1:])
}
