package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/leashd/leashd/engine/approval"

	"github.com/leashd/leashd/engine/agent"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/leashd/leashd/interactions"
)

// acpForm is how an ACP agent's form is read: all questions asked at once
// in one AskUserQuestion, the Claude adapter's "<name>_custom" ("Other")
// fields filled by typed text, and typed text at a select sent as typed.
func acpForm(message string) approval.FormOptions {
	return approval.FormOptions{Together: true, Message: message, Companions: true, Lenient: true}
}

// formFields reads a form's requestedSchema as questions (engine.FormFields).
func formFields(schema json.RawMessage, message string) ([]approval.FormField, error) {
	return approval.FormFields(schema, acpForm(message))
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// askInput is an AskUserQuestion input for the engine.
func askInput(fs []approval.FormField) json.RawMessage {
	qs := make([]interactions.Question, len(fs))
	for i, f := range fs {
		qs[i] = f.Question
	}
	return rawJSON(map[string]any{"questions": qs})
}

// answersOf reads the answers the engine attached to an AskUserQuestion.
func answersOf(updated json.RawMessage) map[string]string {
	var in struct {
		Answers map[string]string `json:"answers"`
	}
	_ = json.Unmarshal(updated, &in)
	return in.Answers
}

type elicitResponse struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// elicit answers elicitation/create: a form is asked as questions one at a
// time; a URL is shown as a link that waits for elicitation/complete or a
// tap on Done. Accept, decline and cancel follow what the person did:
// answered, rejected, or nobody answered.
func (s *session) elicit(ctx context.Context, params json.RawMessage) (any, *sdk.RequestError) {
	var p struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
		URL             string          `json:"url"`
		ElicitationID   string          `json:"elicitationId"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	h := s.handler()
	if h == nil {
		return elicitResponse{Action: "cancel"}, nil
	}
	if p.Mode == "url" || p.URL != "" && len(p.RequestedSchema) == 0 {
		return s.elicitURL(ctx, h, p.Message, p.URL, p.ElicitationID), nil
	}
	fs, err := formFields(p.RequestedSchema, p.Message)
	if err != nil {
		s.log.Warn("unreadable elicitation form", "err", err)
		return nil, sdk.NewInvalidParams(map[string]any{"error": "leashd cannot ask this form: " + err.Error()})
	}
	resp := h.Permission(ctx, agent.PermissionRequest{ToolName: agent.ToolAskUserQuestion, Input: askInput(fs)})
	if resp.NoAnswer {
		s.awaitStop(resp.StopFollows)
	}
	switch {
	case resp.Allow:
		answers := answersOf(resp.UpdatedInput)
		content := map[string]any{}
		for _, f := range fs {
			a, ok := answers[f.Question.Question]
			if !ok {
				continue
			}
			if err := f.Fill(a, content); err != nil {
				return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
			}
		}
		return elicitResponse{Action: "accept", Content: content}, nil
	case resp.NoAnswer:
		return elicitResponse{Action: "cancel"}, nil
	default:
		return elicitResponse{Action: "decline"}, nil
	}
}

// urlWait is a URL elicitation waiting for elicitation/complete.
type urlWait struct {
	once   sync.Once
	done   bool
	cancel context.CancelFunc
	mu     sync.Mutex
}

func (w *urlWait) complete() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	w.once.Do(w.cancel)
}

// linkDone is the option a person taps once done at the link.
const linkDone = "Done"

func (s *session) elicitURL(ctx context.Context, h agent.TurnHandler, message, url, id string) elicitResponse {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &urlWait{cancel: cancel}
	if id != "" {
		s.mu.Lock()
		s.urls[id] = w
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.urls, id)
			s.mu.Unlock()
		}()
	}
	q := interactions.Question{
		Header:   "Open link",
		Question: strings.TrimSpace(orDefault(message, "The agent asks you to open this link.") + "\n" + url),
		Options:  []interactions.Choice{{Label: linkDone, Description: "I have finished at the link"}},
	}
	resp := h.Permission(qctx, agent.PermissionRequest{ToolName: agent.ToolAskUserQuestion, Input: rawJSON(map[string]any{"questions": []interactions.Question{q}})})
	w.mu.Lock()
	completed := w.done
	w.mu.Unlock()
	switch {
	case completed || resp.Allow:
		return elicitResponse{Action: "accept"}
	case resp.NoAnswer:
		return elicitResponse{Action: "cancel"}
	default:
		return elicitResponse{Action: "decline"}
	}
}

// vendorQuestion answers the question extensions of Cursor's adapter and
// of the sandbox agent: {"questions":[{"question","header","options":[
// {"label","description"}|"label"],"multiSelect"|"allowMultiple"}]} (or a
// single question at the top level). The answer is {"outcome":"answered",
// "answers":{question: answer}} (multi-select: a list), or "rejected" /
// "cancelled". A shape leashd cannot read is answered with an invalid-params
// error saying what it expected.
func (s *session) vendorQuestion(ctx context.Context, method string, params json.RawMessage) (any, *sdk.RequestError) {
	qs, err := vendorQuestions(params)
	if err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("leashd cannot read %s: %v; expected {\"questions\":[{\"question\",\"options\":[{\"label\",\"description\"}],\"multiSelect\"}]}", method, err)})
	}
	h := s.handler()
	if h == nil {
		return map[string]any{"outcome": "cancelled"}, nil
	}
	resp := h.Permission(ctx, agent.PermissionRequest{ToolName: agent.ToolAskUserQuestion, Input: rawJSON(map[string]any{"questions": qs})})
	if resp.NoAnswer {
		s.awaitStop(resp.StopFollows)
	}
	switch {
	case resp.Allow:
		answers := answersOf(resp.UpdatedInput)
		out := map[string]any{}
		for _, q := range qs {
			a, ok := answers[q.Question]
			if !ok {
				continue
			}
			if q.MultiSelect {
				if picks, ok := approval.PickedLabels(a, q.Options); ok {
					out[q.Question] = picks
					continue
				}
				out[q.Question] = []any{a}
				continue
			}
			out[q.Question] = a
		}
		return map[string]any{"outcome": "answered", "answers": out}, nil
	case resp.NoAnswer:
		return map[string]any{"outcome": "cancelled"}, nil
	default:
		return map[string]any{"outcome": "rejected"}, nil
	}
}

func vendorQuestions(params json.RawMessage) ([]interactions.Question, error) {
	type vq struct {
		Question      string            `json:"question"`
		Prompt        string            `json:"prompt"`
		Header        string            `json:"header"`
		Title         string            `json:"title"`
		Options       []json.RawMessage `json:"options"`
		MultiSelect   bool              `json:"multiSelect"`
		AllowMultiple bool              `json:"allowMultiple"`
	}
	var p struct {
		vq
		Questions []vq `json:"questions"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	list := p.Questions
	if len(list) == 0 && (p.Question != "" || p.Prompt != "") {
		list = []vq{p.vq}
	}
	if len(list) == 0 {
		return nil, errors.New("no questions")
	}
	if len(list) > approval.MaxFormFields {
		return nil, fmt.Errorf("%d questions; leashd asks at most %d", len(list), approval.MaxFormFields)
	}
	var out []interactions.Question
	seen := map[string]bool{}
	for i, q := range list {
		text := orDefault(q.Question, q.Prompt)
		if strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("question %d has no text", i+1)
		}
		if seen[text] {
			return nil, fmt.Errorf("question %d repeats %q", i+1, text)
		}
		seen[text] = true
		iq := interactions.Question{Question: text, Header: orDefault(q.Header, q.Title), MultiSelect: q.MultiSelect || q.AllowMultiple}
		labels := map[string]bool{}
		for _, raw := range q.Options {
			var o interactions.Choice
			var str string
			if json.Unmarshal(raw, &str) == nil {
				o.Label = str
			} else if err := json.Unmarshal(raw, &o); err != nil {
				return nil, fmt.Errorf("question %d: an option is neither a string nor {\"label\",\"description\"}", i+1)
			}
			o.Label = strings.TrimSpace(o.Label)
			if o.Label == "" || labels[o.Label] {
				return nil, fmt.Errorf("question %d: an option label is empty or repeated", i+1)
			}
			labels[o.Label] = true
			iq.Options = append(iq.Options, o)
		}
		if len(iq.Options) == 0 {
			iq.MultiSelect = false
		}
		out = append(out, iq)
	}
	return out, nil
}
