package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// field is one property of a form elicitation, asked as one question.
type field struct {
	name   string
	q      interactions.Question
	kind   string         // string, array, boolean, number, integer
	values map[string]any // option label -> the value sent back
	custom string         // the companion free-text property ("<name>_custom"), if any
}

// maxFields bounds the questions one form may ask.
const maxFields = 20

// formFields reads a form's requestedSchema as questions, in the order the
// schema lists its properties: a string with oneOf/enum is a single-select
// (titles as labels, descriptions shown), an array of anyOf/enum items a
// multi-select, a boolean a yes/no, any other string or number free text.
// A string property "<name>_custom" beside a select "<name>" (the Claude
// adapter's "Other" box) is not asked: typed text at the select fills it.
func formFields(schema json.RawMessage, message string) ([]field, error) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil, errors.New("the form has no requestedSchema")
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("the form's requestedSchema is not a JSON object: %w", err)
	}
	names, props, err := orderedObject(s.Properties)
	if err != nil {
		return nil, fmt.Errorf("the form's properties: %w", err)
	}
	if len(names) == 0 {
		return nil, errors.New(`the form's requestedSchema has no "properties"`)
	}
	if len(names) > maxFields {
		return nil, fmt.Errorf("the form has %d fields; leashd asks at most %d", len(names), maxFields)
	}
	var out []field
	companion := map[string]bool{}
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			return nil, errors.New("a field has no name")
		}
		f, err := formField(n, props[n])
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", n, err)
		}
		if base, ok := strings.CutSuffix(n, "_custom"); ok && f.kind == "string" && len(f.q.Options) == 0 {
			if i := indexField(out, base); i >= 0 && len(out[i].q.Options) > 0 {
				out[i].custom = n
				companion[n] = true
				continue
			}
		}
		out = append(out, f)
	}
	// Question texts key the answers: make them unique and never empty.
	seen := map[string]int{}
	for i := range out {
		q := &out[i].q
		if strings.TrimSpace(q.Question) == "" {
			q.Question = message
			if len(out) > 1 || strings.TrimSpace(q.Question) == "" {
				q.Question = orDefault(q.Header, out[i].name)
			}
		}
		base := q.Question
		for n := 2; seen[q.Question] > 0; n++ {
			q.Question = fmt.Sprintf("%s (%d)", base, n)
		}
		seen[q.Question]++
	}
	return out, nil
}

func indexField(fs []field, name string) int {
	for i, f := range fs {
		if f.name == name {
			return i
		}
	}
	return -1
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

type choice struct {
	Const       any    `json:"const"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

type prop struct {
	Type        any             `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	OneOf       []choice        `json:"oneOf"`
	AnyOf       []choice        `json:"anyOf"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	Items       json.RawMessage `json:"items"`
}

func formField(name string, raw json.RawMessage) (field, error) {
	var p prop
	if err := json.Unmarshal(raw, &p); err != nil {
		return field{}, fmt.Errorf("not a JSON schema object: %w", err)
	}
	typ, _ := p.Type.(string)
	f := field{name: name, kind: typ, values: map[string]any{}}
	f.q.Header = p.Title
	f.q.Question = p.Description
	choices := func(cs []choice, enum []any, names []string) error {
		for i, c := range cs {
			label := orDefault(c.Title, fmt.Sprint(c.Const))
			if err := f.add(label, c.Description, c.Const); err != nil {
				return err
			}
			_ = i
		}
		for i, v := range enum {
			label := fmt.Sprint(v)
			if i < len(names) && names[i] != "" {
				label = names[i]
			}
			if err := f.add(label, "", v); err != nil {
				return err
			}
		}
		return nil
	}
	switch typ {
	case "string", "":
		f.kind = "string"
		if err := choices(append(p.OneOf, p.AnyOf...), p.Enum, p.EnumNames); err != nil {
			return field{}, err
		}
	case "array":
		var items prop
		if len(p.Items) > 0 {
			if err := json.Unmarshal(p.Items, &items); err != nil {
				return field{}, fmt.Errorf("items: %w", err)
			}
		}
		if err := choices(append(items.AnyOf, items.OneOf...), items.Enum, items.EnumNames); err != nil {
			return field{}, err
		}
		if len(f.q.Options) == 0 {
			return field{}, errors.New("an array needs items with anyOf or enum to choose from")
		}
		f.q.MultiSelect = true
	case "boolean":
		_ = f.add("Yes", "", true)
		_ = f.add("No", "", false)
	case "number", "integer":
	default:
		return field{}, fmt.Errorf("type %q cannot be asked (accepted: string, array, boolean, number, integer)", typ)
	}
	return f, nil
}

func (f *field) add(label, desc string, v any) error {
	label = strings.TrimSpace(label)
	if label == "" {
		return errors.New("an option has no title or value")
	}
	if _, dup := f.values[label]; dup {
		return fmt.Errorf("two options are labelled %q", label)
	}
	f.values[label] = v
	f.q.Options = append(f.q.Options, interactions.Option{Label: label, Description: desc})
	return nil
}

// value turns a question's answer into the form's content: option labels
// into their values; typed text into the companion field, or the value of
// a free-text field, or a number for a number field.
func (f field) value(answer string, content map[string]any) error {
	if v, ok := f.values[answer]; ok && !f.q.MultiSelect {
		content[f.name] = v
		return nil
	}
	if f.q.MultiSelect {
		if picks, ok := f.splitPicks(answer); ok {
			content[f.name] = picks
			return nil
		}
		if f.custom != "" {
			content[f.name] = []any{}
			content[f.custom] = answer
			return nil
		}
		content[f.name] = []any{answer}
		return nil
	}
	if f.custom != "" {
		content[f.custom] = answer
		return nil
	}
	switch f.kind {
	case "number":
		n, err := strconv.ParseFloat(strings.TrimSpace(answer), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", answer)
		}
		content[f.name] = n
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(answer), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", answer)
		}
		content[f.name] = n
	default:
		content[f.name] = answer
	}
	return nil
}

// splitPicks reads a multi-select answer (labels in option order joined
// with ", ") back into the options' values.
func (f field) splitPicks(answer string) ([]any, bool) {
	picks := []any{}
	rest := answer
	for _, o := range f.q.Options {
		if rest == "" {
			break
		}
		if rest == o.Label {
			picks = append(picks, f.values[o.Label])
			rest = ""
		} else if r, ok := strings.CutPrefix(rest, o.Label+", "); ok {
			picks = append(picks, f.values[o.Label])
			rest = r
		}
	}
	return picks, rest == "" && len(picks) > 0
}

// orderedObject decodes a JSON object's keys in order.
func orderedObject(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil, nil
	}
	props := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &props); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	var names []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name, _ := t.(string)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, nil, err
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names, props, nil
}

// askInput is an AskUserQuestion input for the engine.
func askInput(fs []field) json.RawMessage {
	qs := make([]interactions.Question, len(fs))
	for i, f := range fs {
		qs[i] = f.q
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
	resp := h.Permission(ctx, engine.PermissionRequest{ToolName: engine.ToolAskUserQuestion, Input: askInput(fs)})
	if resp.NoAnswer {
		s.awaitStop()
	}
	switch {
	case resp.Allow:
		answers := answersOf(resp.UpdatedInput)
		content := map[string]any{}
		for _, f := range fs {
			a, ok := answers[f.q.Question]
			if !ok {
				continue
			}
			if err := f.value(a, content); err != nil {
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

func (s *session) elicitURL(ctx context.Context, h engine.TurnHandler, message, url, id string) elicitResponse {
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
		Options:  []interactions.Option{{Label: linkDone, Description: "I have finished at the link"}},
	}
	resp := h.Permission(qctx, engine.PermissionRequest{ToolName: engine.ToolAskUserQuestion, Input: rawJSON(map[string]any{"questions": []interactions.Question{q}})})
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
	resp := h.Permission(ctx, engine.PermissionRequest{ToolName: engine.ToolAskUserQuestion, Input: rawJSON(map[string]any{"questions": qs})})
	if resp.NoAnswer {
		s.awaitStop()
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
				f := field{q: q, values: map[string]any{}}
				for _, o := range q.Options {
					f.values[o.Label] = o.Label
				}
				if picks, ok := f.splitPicks(a); ok {
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
	if len(list) > maxFields {
		return nil, fmt.Errorf("%d questions; leashd asks at most %d", len(list), maxFields)
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
			var o interactions.Option
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
