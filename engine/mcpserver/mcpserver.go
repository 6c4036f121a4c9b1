// Package mcpserver is leashd's MCP server: an asker (like an agent, not a
// connector) that lets any MCP client — an agent leashd did not start —
// put questions, approvals and permission prompts to the people of a chat. It serves streamable HTTP on
// the web address at /mcp (?chat=CHAT, default "mcp"), and stdio in
// `leashd mcp`, which proxies to a running leashd over its HTTP API.
//
// Tools:
//   - ask_user: AskUserQuestion's input ({"questions":[{"question","header",
//     "options":[{"label","description"}],"multiSelect"}]}); the questions are
//     asked one at a time; the result is one line per question,
//     "question"="answer".
//   - request_approval: {"action","details"} → "approved" or "denied: <reason>".
//   - permission_prompt: the --permission-prompt-tool contract, when the
//     caller gives Options.PermissionResult:
//     {"tool_name","input","tool_use_id"} → the text of
//     {"behavior":"allow","updatedInput":…} or {"behavior":"deny","message":…};
//     AskUserQuestion and ExitPlanMode become a question flow and a plan
//     review, as for the CLI leashd runs itself.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/approval"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// Flows is how the tools ask people: *interactions.Coordinator in process, or
// interactions/client over a running leashd's API.
type Flows interface {
	approval.Flows
	interactions.InputHandler
}

// DefaultChat is the chat of /mcp without ?chat=.
const DefaultChat = "mcp"

// Tool names.
const (
	ToolAskUser          = "ask_user"
	ToolRequestApproval  = "request_approval"
	ToolPermissionPrompt = "permission_prompt"
)

// Options configure a server.
type Options struct {
	// WorkDir is not used: a caller's ExitPlanMode planFilePath is never
	// opened (the plan must come inline). It stays so callers that set it
	// still build.
	WorkDir string
	// Version is reported to clients.
	Version string
	Log     *slog.Logger
	// PermissionResult renders a decision as the permission_prompt tool
	// returns it: the --permission-prompt-tool contract, which the agent's
	// driver knows (cmd passes the Claude driver's). Without it the tool is not
	// offered.
	PermissionResult func(input json.RawMessage, resp agent.PermissionResponse) any
	// MayAsk, when set, refuses a chat the request's credential may not
	// ask in (its context carries the credential): 403 with its error.
	// Else it names who asks ("" : the MCP server), which requests made
	// through the request carry as their Asker ("mcp:" + name).
	MayAsk func(ctx context.Context, chatID string) (name string, err error)
	// Limits bound the sessions and calls of HTTP clients (Handler).
	Limits Limits
}

// New returns an MCP server whose tools ask in chatID through a.
func New(a Flows, chatID string, o Options) *mcp.Server {
	if o.Version == "" {
		o.Version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "leashd", Version: o.Version}, &mcp.ServerOptions{
		Logger:       o.Log,
		Instructions: "leashd puts questions and approvals to a person in the chat " + chatID + " (Telegram, Slack or the web page) and returns their answer.",
	})
	t := tools{a: a, chat: chatID, result: o.PermissionResult}
	s.AddTool(&mcp.Tool{
		Name:        ToolAskUser,
		Description: "Ask the user one or more questions (like AskUserQuestion) and wait for the answers. Each question has a short header and 2-4 options; the user may also answer in their own words. Returns one line per question: \"question\"=\"answer\".",
		InputSchema: json.RawMessage(askSchema),
	}, t.askUser)
	s.AddTool(&mcp.Tool{
		Name:        ToolRequestApproval,
		Description: "Ask the user to approve an action before you take it, and wait. Returns \"approved\" or \"denied: <reason>\".",
		InputSchema: json.RawMessage(approvalSchema),
	}, t.requestApproval)
	if t.result == nil {
		return s
	}
	s.AddTool(&mcp.Tool{
		Name:        ToolPermissionPrompt,
		Description: "A --permission-prompt-tool: asks the user whether a tool call may run. Returns {\"behavior\":\"allow\",\"updatedInput\":…} or {\"behavior\":\"deny\",\"message\":…} as text.",
		InputSchema: json.RawMessage(permissionSchema),
	}, t.permissionPrompt)
	return s
}

const askSchema = `{"type":"object","properties":{"questions":{"type":"array","minItems":1,"maxItems":4,"items":{"type":"object",
"properties":{"question":{"type":"string"},"header":{"type":"string"},"multiSelect":{"type":"boolean"},
"options":{"type":"array","items":{"type":"object","properties":{"label":{"type":"string"},"description":{"type":"string"}},"required":["label"]}}},
"required":["question"]}}},"required":["questions"]}`

const approvalSchema = `{"type":"object","properties":{"action":{"type":"string","description":"what you want to do, in one line"},
"details":{"type":"string","description":"what the user should know to decide"}},"required":["action"]}`

const permissionSchema = `{"type":"object","properties":{"tool_name":{"type":"string"},"input":{"type":"object"},"tool_use_id":{"type":"string"}},"required":["tool_name","input"]}`

type tools struct {
	a      Flows
	chat   string
	result func(json.RawMessage, agent.PermissionResponse) any
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func toolError(s string) *mcp.CallToolResult {
	r := text(s)
	r.IsError = true
	return r
}

// AskInput is ask_user's input.
type AskInput struct {
	Questions []interactions.Question `json:"questions"`
}

// ParseAsk reads ask_user's arguments; the error names what is wrong.
func ParseAsk(args json.RawMessage) (AskInput, error) {
	var in AskInput
	if err := strictJSON(args, &in); err != nil {
		return in, fmt.Errorf(`ask_user: %w; expected {"questions":[{"question","header","options":[{"label","description"}],"multiSelect"}]}`, err)
	}
	if len(in.Questions) == 0 || len(in.Questions) > 4 {
		return in, fmt.Errorf("ask_user: questions: %d given; ask 1 to 4", len(in.Questions))
	}
	for i, q := range in.Questions {
		if strings.TrimSpace(q.Question) == "" {
			return in, fmt.Errorf("ask_user: questions[%d].question: missing", i)
		}
		seen := map[string]bool{}
		for j, o := range q.Options {
			switch {
			case strings.TrimSpace(o.Label) == "":
				return in, fmt.Errorf("ask_user: questions[%d].options[%d].label: missing", i, j)
			case seen[o.Label]:
				return in, fmt.Errorf("ask_user: questions[%d].options[%d].label: %q is given twice", i, j, o.Label)
			}
			seen[o.Label] = true
		}
		if q.MultiSelect && len(q.Options) == 0 {
			return in, fmt.Errorf("ask_user: questions[%d].multiSelect: needs options", i)
		}
	}
	return in, nil
}

func strictJSON(b json.RawMessage, v any) error {
	if len(b) == 0 {
		b = json.RawMessage("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid arguments (%v)", err)
	}
	return nil
}

func (t tools) askUser(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx = interactions.WithAsker(ctx, askerOf(req))
	in, err := ParseAsk(req.Params.Arguments)
	if err != nil {
		return toolError(err.Error()), nil
	}
	res, err := t.a.Ask(ctx, t.chat, in.Questions)
	if err != nil {
		return toolError("The question could not be asked: " + err.Error()), nil
	}
	var b strings.Builder
	for _, q := range in.Questions {
		a, ok := res.Answers[q.Question]
		if !ok {
			break
		}
		fmt.Fprintf(&b, "%q=%q\n", q.Question, a)
	}
	if !res.Complete() {
		why := res.Last.Text
		if why == "" {
			why = string(res.Last.Status)
		}
		return toolError(b.String() + fmt.Sprintf("The user did not answer (%s): %s", res.Last.Status, why)), nil
	}
	return text(strings.TrimSuffix(b.String(), "\n")), nil
}

// ApprovalInput is request_approval's input.
type ApprovalInput struct {
	Action  string `json:"action"`
	Details string `json:"details"`
}

// ParseApproval reads request_approval's arguments.
func ParseApproval(args json.RawMessage) (ApprovalInput, error) {
	var in ApprovalInput
	if err := strictJSON(args, &in); err != nil {
		return in, fmt.Errorf(`request_approval: %w; expected {"action","details"}`, err)
	}
	if strings.TrimSpace(in.Action) == "" {
		return in, errors.New("request_approval: action: missing: what you want to do")
	}
	return in, nil
}

// Approval options of request_approval.
const (
	Approve = "Approve"
	Deny    = "Deny"
)

func (t tools) requestApproval(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx = interactions.WithAsker(ctx, askerOf(req))
	in, err := ParseApproval(req.Params.Arguments)
	if err != nil {
		return toolError(err.Error()), nil
	}
	q := strings.TrimSpace(in.Action)
	if d := strings.TrimSpace(in.Details); d != "" {
		q += "\n\n" + d
	}
	resp, err := t.a.RequestInput(ctx, interactions.InputRequest{
		ChatID: t.chat, Header: "Approval", Prompt: q,
		Options: []interactions.Choice{{Label: Approve, Description: "Go ahead"}, {Label: Deny, Description: "Do not; typed text is sent as the reason"}},
	})
	switch {
	case errors.Is(err, interactions.ErrExpired):
		return text("denied: no answer came in time"), nil
	case errors.Is(err, interactions.ErrCancelled):
		return text("denied: the request was cancelled"), nil
	case err != nil:
		return toolError("The approval could not be asked: " + err.Error()), nil
	case resp.Rejected:
		return text("denied: " + orText(resp.Reason, "the user rejected it")), nil
	case resp.Value == Approve:
		return text("approved"), nil
	case resp.Value == Deny:
		return text("denied: the user chose Deny"), nil
	default:
		return text("denied: " + resp.Value), nil // typed: the reason
	}
}

func orText(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// PermissionInput is permission_prompt's input.
type PermissionInput struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

// ParsePermission reads permission_prompt's arguments. Fields the agent
// may add later are ignored.
func ParsePermission(args json.RawMessage) (PermissionInput, error) {
	var in PermissionInput
	if err := json.Unmarshal(args, &in); err != nil {
		return in, fmt.Errorf(`permission_prompt: invalid arguments (%v); expected {"tool_name","input":{…},"tool_use_id"}`, err)
	}
	if strings.TrimSpace(in.ToolName) == "" {
		return in, errors.New("permission_prompt: tool_name: missing")
	}
	if t := strings.TrimSpace(string(in.Input)); !strings.HasPrefix(t, "{") {
		return in, errors.New("permission_prompt: input: must be the tool's input object")
	}
	return in, nil
}

func (t tools) permissionPrompt(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx = interactions.WithAsker(ctx, askerOf(req))
	in, err := ParsePermission(req.Params.Arguments)
	if err != nil {
		return toolError(err.Error()), nil
	}
	resp := approval.AskPermission(ctx, t.a, t.chat, agent.PermissionRequest{ToolName: in.ToolName, Input: in.Input, ToolUseID: in.ToolUseID})
	b, err := json.Marshal(t.result(in.Input, resp))
	if err != nil {
		return nil, err
	}
	return text(string(b)), nil
}

// Handler serves the MCP server over streamable HTTP (mount it at /mcp
// behind the API's token check). The chat is ?chat= (default "mcp"); one
// that no connector serves gets 404 (serves returns why). Its sessions and
// calls are held to o.Limits (sessions.go).
func Handler(a Flows, serves func(chatID string) error, o Options) http.Handler {
	sessions := newSessionTable(o.Limits, o.Log)
	servers := newServerCache(func(chat string) *mcp.Server {
		s := New(a, chat, o)
		s.AddReceivingMiddleware(sessions.middleware)
		return s
	})
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return servers.get(chatOf(r))
	}, &mcp.StreamableHTTPOptions{
		Logger: o.Log,
		// The web connector checks the token and the host itself.
		DisableLocalhostProtection: true,
		// No SessionTimeout: the session table closes idle sessions, and
		// counts an open event stream as use, which the SDK does not.
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chat := chatOf(r)
		if err := validChat(chat); err != nil {
			httpError(w, http.StatusBadRequest, "chat: "+err.Error())
			return
		}
		if !mayAsk(w, r, chat, o.MayAsk) {
			return
		}
		if err := serves(chat); err != nil {
			httpError(w, http.StatusNotFound, err.Error())
			return
		}
		sessions.serve(w, r, h)
	})
}

// mayAsk answers 403 when the request's credential may not ask in chat
// (Options.MayAsk), and names the asker for the tools.
func mayAsk(w http.ResponseWriter, r *http.Request, chat string, check func(context.Context, string) (string, error)) bool {
	if check == nil {
		return true
	}
	r.Header.Del(askerHeader) // only leashd names the asker
	name, err := check(r.Context(), chat)
	if err != nil {
		httpError(w, http.StatusForbidden, err.Error())
		return false
	}
	if name != "" {
		r.Header.Set(askerHeader, engine.AskerMCP+":"+name)
	}
	return true
}

// askerHeader carries who asks from the HTTP handler (mayAsk) to the
// tools, which see the request's header (mcp.RequestExtra) but not its
// context.
const askerHeader = "X-Leashd-Asker"

// askerOf is who asks through a tool call: "mcp", or "mcp:<token name>".
func askerOf(req *mcp.CallToolRequest) string {
	if req != nil && req.Extra != nil {
		if a := req.Extra.Header.Get(askerHeader); a != "" {
			return a
		}
	}
	return engine.AskerMCP
}

func chatOf(r *http.Request) string {
	if c := r.URL.Query().Get("chat"); c != "" {
		return c
	}
	return DefaultChat
}

// validChat holds ?chat= to the coordinator's rule for chat IDs.
func validChat(id string) error {
	if err := interactions.CheckChatID(id); err != nil {
		var inv *interactions.InvalidError
		if errors.As(err, &inv) {
			return errors.New(inv.Problem)
		}
		return err
	}
	return nil
}

func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]string{"error": msg})
}
