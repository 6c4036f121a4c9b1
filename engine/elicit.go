package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// ElicitationRequest is an MCP server asking the person for input through
// the agent (MCP elicitation): a form of fields, or a link to open.
type ElicitationRequest struct {
	Server  string // the MCP server asking
	Message string // what it says
	// URL is set in URL mode: the person opens the link and says when done.
	URL string
	// Schema is the form's JSON schema (an object with "properties");
	// PropertyOrder, when given, is the order to ask them in.
	Schema        json.RawMessage
	PropertyOrder []string
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitationResponse is the person's answer: accept with the form's
// Content, decline, or cancel (nobody answered).
type ElicitationResponse struct {
	Action  string
	Content map[string]any
}

// Elicitor is implemented by the TurnHandler the engine gives an agent's
// session: an agent whose tools may ask the person for input calls it. It
// blocks until the person answered; ctx ends it early (cancel).
type Elicitor interface {
	Elicit(ctx context.Context, req ElicitationRequest) ElicitationResponse
}

// field is one form property as a question.
type field struct {
	name     string
	question interactions.Question
	kind     string         // "string", "number", "integer", "boolean", "array"
	values   map[string]any // option label -> value sent
	required bool
}

// Answers for a URL-mode elicitation and a yes/no field.
const (
	elicitOpened = "Done"
	elicitYes    = "Yes"
	elicitNo     = "No"
)

// formFields reads an elicitation's schema as questions, in PropertyOrder
// when given (unknown names ignored, missing ones after), else in the
// order the schema lists them. A property of a type leashd cannot ask is
// an error naming it and the accepted types.
func formFields(schema json.RawMessage, order []string) ([]field, error) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil, errors.New("the form has no schema")
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("the form's schema is not a JSON object: %w", err)
	}
	names, props, err := orderedObject(s.Properties)
	if err != nil {
		return nil, fmt.Errorf("the form's \"properties\": %w", err)
	}
	if len(names) == 0 {
		return nil, errors.New(`the form's schema has no "properties"`)
	}
	if len(names) > 20 {
		return nil, fmt.Errorf("the form has %d fields; leashd asks at most 20", len(names))
	}
	if len(order) > 0 {
		var sorted []string
		for _, n := range order {
			if _, ok := props[n]; ok && !slices.Contains(sorted, n) {
				sorted = append(sorted, n)
			}
		}
		for _, n := range names {
			if !slices.Contains(sorted, n) {
				sorted = append(sorted, n)
			}
		}
		names = sorted
	}
	var out []field
	for _, n := range names {
		f, err := formField(n, props[n])
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", n, err)
		}
		f.required = slices.Contains(s.Required, n)
		out = append(out, f)
	}
	return out, nil
}

// orderedObject decodes a JSON object keeping its keys' order.
func orderedObject(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil, nil
	}
	props := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &props); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, nil, err
	}
	var names []string
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
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, props, nil
}

type choice struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

type propSchema struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []choice        `json:"oneOf"`
	AnyOf       []choice        `json:"anyOf"`
	Items       json.RawMessage `json:"items"`
	Format      string          `json:"format"`
	Default     any             `json:"default"`
}

// formField makes one property a question: string with enum or oneOf a
// single choice, array with items' enum or anyOf a multiple choice,
// boolean Yes/No, number, integer and plain string free text.
func formField(name string, raw json.RawMessage) (field, error) {
	var p propSchema
	if err := json.Unmarshal(raw, &p); err != nil {
		return field{}, fmt.Errorf("not a schema object: %w", err)
	}
	f := field{name: name, kind: p.Type, values: map[string]any{}}
	q := interactions.Question{Header: connectors.Truncate(firstNonEmpty(p.Title, name), 100), Question: firstNonEmpty(p.Description, p.Title, name)}
	addChoices := func(cs []choice, enum []any, names []string) error {
		for i, c := range cs {
			label := firstNonEmpty(c.Title, fmt.Sprint(c.Const))
			q.Options = append(q.Options, interactions.Option{Label: uniqueLabel(q.Options, label)})
			f.values[q.Options[len(q.Options)-1].Label] = cs[i].Const
		}
		for i, v := range enum {
			label := fmt.Sprint(v)
			if i < len(names) && names[i] != "" {
				label = names[i]
			}
			q.Options = append(q.Options, interactions.Option{Label: uniqueLabel(q.Options, label)})
			f.values[q.Options[len(q.Options)-1].Label] = v
		}
		if len(q.Options) == 0 {
			return errors.New("a choice without options")
		}
		if len(q.Options) > 25 {
			return fmt.Errorf("%d options; leashd offers at most 25", len(q.Options))
		}
		return nil
	}
	switch p.Type {
	case "string", "":
		if len(p.OneOf) > 0 || len(p.Enum) > 0 {
			if err := addChoices(p.OneOf, p.Enum, p.EnumNames); err != nil {
				return field{}, err
			}
		} else if p.Type == "" {
			return field{}, errors.New(`no "type" (accepted: string, number, integer, boolean, array)`)
		}
		f.kind = "string"
		if p.Format != "" && len(q.Options) == 0 {
			q.Question += " (" + p.Format + ")"
		}
	case "number", "integer":
		q.Question += " (" + p.Type + ")"
	case "boolean":
		q.Options = []interactions.Option{{Label: elicitYes}, {Label: elicitNo}}
		f.values[elicitYes], f.values[elicitNo] = true, false
	case "array":
		var items propSchema
		if len(p.Items) > 0 {
			if err := json.Unmarshal(p.Items, &items); err != nil {
				return field{}, fmt.Errorf(`"items" is not a schema object: %w`, err)
			}
		}
		if err := addChoices(append(items.AnyOf, items.OneOf...), items.Enum, items.EnumNames); err != nil {
			return field{}, fmt.Errorf(`an array needs "items" with "enum" or "anyOf" options: %w`, err)
		}
		q.MultiSelect = true
	default:
		return field{}, fmt.Errorf("type %q cannot be asked (accepted: string, number, integer, boolean, array of options)", p.Type)
	}
	f.question = q
	return f, nil
}

func uniqueLabel(opts []interactions.Option, label string) string {
	label = connectors.Truncate(strings.TrimSpace(label), 200)
	if label == "" {
		label = "(empty)"
	}
	base := label
	for i := 2; slices.ContainsFunc(opts, func(o interactions.Option) bool { return o.Label == label }); i++ {
		label = base + " (" + strconv.Itoa(i) + ")"
	}
	return label
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// value converts an answer for the form's content, or says why it does
// not fit the field.
func (f field) value(answer string) (any, error) {
	switch {
	case f.question.MultiSelect:
		out := []any{}
		for _, l := range splitLabels(answer, f.question.Options) {
			v, ok := f.values[l]
			if !ok {
				return nil, fmt.Errorf("%q is not one of the options", l)
			}
			out = append(out, v)
		}
		return out, nil
	case len(f.question.Options) > 0:
		if v, ok := f.values[answer]; ok {
			return v, nil
		}
		for _, o := range f.question.Options { // typed, in another case
			if strings.EqualFold(strings.TrimSpace(answer), o.Label) {
				return f.values[o.Label], nil
			}
		}
		if f.kind == "boolean" {
			return nil, fmt.Errorf("%q is not Yes or No", answer)
		}
		return nil, fmt.Errorf("%q is not one of the options", answer)
	case f.kind == "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(answer), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", answer)
		}
		return n, nil
	case f.kind == "number":
		n, err := strconv.ParseFloat(strings.TrimSpace(answer), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", answer)
		}
		return n, nil
	}
	return answer, nil
}

// splitLabels splits a multi-select answer (labels joined with ", ") back
// into labels, preferring the options' own labels (which may hold ", ").
func splitLabels(answer string, opts []interactions.Option) []string {
	var out []string
	rest := answer
	for rest != "" {
		found := false
		for _, o := range opts {
			if rest == o.Label || strings.HasPrefix(rest, o.Label+", ") {
				out = append(out, o.Label)
				rest = strings.TrimPrefix(strings.TrimPrefix(rest, o.Label), ", ")
				found = true
				break
			}
		}
		if !found {
			label, r, _ := strings.Cut(rest, ", ")
			out = append(out, label)
			rest = r
		}
	}
	return out
}

// maxElicitTries is how often a field is asked again after an answer that
// does not fit it.
const maxElicitTries = 3

// Elicit implements Elicitor: the server's message is said in the chat,
// then each form field is asked as a question, one at a time (a link in
// URL mode, with Done to say it was opened). A declined question declines
// the form; one that expired or was cancelled cancels it.
func (t *turn) Elicit(ctx context.Context, req ElicitationRequest) ElicitationResponse {
	t.budget.pause()
	defer t.budget.resume()
	server := connectors.Truncate(strings.Join(strings.Fields(plainText(req.Server)), " "), 100)
	msg := strings.TrimSpace(plainText(req.Message))
	head := "MCP server " + server
	if req.URL != "" {
		_, res, err := t.e.coord.Request(ctx, interactions.Interaction{
			ChatID: t.c.id, Kind: interactions.KindQuestion, Header: connectors.Truncate(head, 100),
			Question: excerpt(firstNonEmpty(msg, "The MCP server asks you to open a link.")+"\n\nOpen this link: "+plainText(req.URL)+"\nthen choose "+elicitOpened+".", 40),
			Options:  []interactions.Option{{Label: elicitOpened, Description: "I have opened the link and finished there"}},
			Index:    1, Total: 1,
		})
		if err != nil {
			return ElicitationResponse{Action: ElicitCancel}
		}
		return elicitAction(res, nil)
	}
	fields, err := formFields(req.Schema, req.PropertyOrder)
	if err != nil {
		t.e.log.Warn("unreadable elicitation form", "chat", t.c.id, "server", server, "err", err)
		t.e.say(ctx, t.c.id, head+" asked for input leashd could not show ("+err.Error()+"); it was declined.")
		return ElicitationResponse{Action: ElicitDecline}
	}
	if msg != "" {
		t.e.say(ctx, t.c.id, head+" asks: "+excerpt(msg, 40))
	}
	content := map[string]any{}
	for i, f := range fields {
		q := f.question
		for try := 1; ; try++ {
			_, res, err := t.e.coord.Request(ctx, interactions.Interaction{
				ChatID: t.c.id, Kind: interactions.KindQuestion,
				Header: q.Header, Question: q.Question, Options: q.Options, MultiSelect: q.MultiSelect,
				Index: i + 1, Total: len(fields),
			})
			if err != nil {
				return ElicitationResponse{Action: ElicitCancel}
			}
			if res.Status != interactions.StatusAnswered {
				return elicitAction(res, nil)
			}
			v, verr := f.value(res.Answer)
			if verr == nil {
				content[f.name] = v
				break
			}
			if try == maxElicitTries {
				t.e.say(ctx, t.c.id, "That does not fit ("+verr.Error()+"); the form was declined.")
				return ElicitationResponse{Action: ElicitDecline}
			}
			t.e.say(ctx, t.c.id, "That does not fit ("+verr.Error()+"); please answer again.")
		}
	}
	return ElicitationResponse{Action: ElicitAccept, Content: content}
}

// elicitAction maps how a question ended to the elicitation's action.
func elicitAction(res interactions.Resolution, content map[string]any) ElicitationResponse {
	switch res.Status {
	case interactions.StatusAnswered:
		return ElicitationResponse{Action: ElicitAccept, Content: content}
	case interactions.StatusRejected:
		return ElicitationResponse{Action: ElicitDecline}
	}
	return ElicitationResponse{Action: ElicitCancel}
}
