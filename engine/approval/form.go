package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// The one reading of an elicitation form (a JSON schema object with
// "properties") as questions, and of the answers back into the form's
// content: used by the engine's Elicit (an MCP server asking through the
// Claude CLI) and by engine/agent/acp (an ACP agent's elicitation/create).

// FormField is one property of a form, asked as one question.
type FormField struct {
	Name     string
	Question interactions.Question
	Kind     string // "string", "number", "integer", "boolean", "array"
	Required bool
	// Custom is the companion free-text property ("<name>_custom") that
	// typed text at this select fills (FormOptions.Companions).
	Custom  string
	values  map[string]any // option label -> value sent
	lenient bool           // FormOptions.Lenient
}

// FormOptions choose how a form is read. The zero value reads it for
// asking one question at a time, strictly (Elicit).
type FormOptions struct {
	// Order asks these properties first, the rest after in the schema's
	// order; unknown names are ignored.
	Order []string
	// Together reads the form for asking all its questions at once, keyed
	// by their text (one AskUserQuestion): the header is the title as
	// given; a question without description is Message when it is the
	// only one, else its title or name; texts are made unique; a field
	// needs a name; a string's options come from oneOf, anyOf and enum and
	// keep their descriptions; an empty or repeated label is an error; a
	// property without "type" is text.
	// Otherwise the header is the title or name, the question the
	// description, title or name with the type or format added, repeated
	// labels are numbered, a choice offers at most 25 options and a
	// property needs a "type".
	Together bool
	Message  string
	// Companions: a string property "<name>_custom" beside a select
	// "<name>" (the Claude adapter's "Other" box) is not asked; typed text
	// at the select fills it.
	Companions bool
	// Lenient: an answer that is none of a select's options is sent as
	// typed (a multi-select's as its one pick) instead of being an error
	// the asker can ask again about.
	Lenient bool
}

// MaxFormFields bounds the questions one form may ask.
const MaxFormFields = 20

// Answers for a yes/no field.
const (
	elicitYes = "Yes"
	elicitNo  = "No"
)

// FormFields reads a form's schema as questions, in o.Order when given,
// else in the order the schema lists its properties: a string with
// oneOf/enum is a single choice, an array of anyOf/enum items a multiple
// choice, a boolean Yes/No, a number, integer or other string free text.
// A property leashd cannot ask is an error naming it and what is accepted.
func FormFields(schema json.RawMessage, o FormOptions) ([]FormField, error) {
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
	if len(names) > MaxFormFields {
		return nil, fmt.Errorf("the form has %d fields; leashd asks at most %d", len(names), MaxFormFields)
	}
	if len(o.Order) > 0 {
		var sorted []string
		for _, n := range o.Order {
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
	var out []FormField
	for _, n := range names {
		if o.Together && strings.TrimSpace(n) == "" {
			return nil, errors.New("a field has no name")
		}
		f, err := formField(n, props[n], o.Together)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", n, err)
		}
		f.Required = slices.Contains(s.Required, n)
		f.lenient = o.Lenient
		if base, ok := strings.CutSuffix(n, "_custom"); o.Companions && ok && f.Kind == "string" && len(f.Question.Options) == 0 {
			if i := slices.IndexFunc(out, func(f FormField) bool { return f.Name == base }); i >= 0 && len(out[i].Question.Options) > 0 {
				out[i].Custom = n
				continue
			}
		}
		out = append(out, f)
	}
	if o.Together {
		// Question texts key the answers: make them unique and never empty.
		seen := map[string]int{}
		for i := range out {
			q := &out[i].Question
			if strings.TrimSpace(q.Question) == "" {
				q.Question = o.Message
				if len(out) > 1 || strings.TrimSpace(q.Question) == "" {
					q.Question = firstNonEmpty(q.Header, out[i].Name)
				}
			}
			base := q.Question
			for n := 2; seen[q.Question] > 0; n++ {
				q.Question = fmt.Sprintf("%s (%d)", base, n)
			}
			seen[q.Question]++
		}
	}
	return out, nil
}

// orderedObject decodes a JSON object keeping its keys' order.
func orderedObject(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
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
	Const       any    `json:"const"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

type propSchema struct {
	Type        any             `json:"type"`
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

// formField makes one property a question (see FormFields and
// FormOptions.Together).
func formField(name string, raw json.RawMessage, together bool) (FormField, error) {
	var p propSchema
	if err := json.Unmarshal(raw, &p); err != nil {
		return FormField{}, fmt.Errorf("not a schema object: %w", err)
	}
	typ, isString := p.Type.(string)
	if !isString && p.Type != nil && !together {
		return FormField{}, fmt.Errorf(`not a schema object: "type" is %v, not a string`, p.Type)
	}
	b := fieldBuilder{f: FormField{Name: name, Kind: typ, values: map[string]any{}}, together: together}
	b.q = interactions.Question{Header: connectors.Truncate(firstNonEmpty(p.Title, name), 100), Question: firstNonEmpty(p.Description, p.Title, name)}
	if together {
		b.q = interactions.Question{Header: p.Title, Question: p.Description}
	}
	if err := b.ofType(typ, p); err != nil {
		return FormField{}, err
	}
	b.f.Question = b.q
	return b.f, nil
}

// fieldBuilder gathers a field's question and the value each option
// stands for.
type fieldBuilder struct {
	f        FormField
	q        interactions.Question
	together bool
}

// ofType asks the property as its JSON type says: choices for strings with
// options and arrays, Yes/No for booleans, free text for the rest.
func (b *fieldBuilder) ofType(typ string, p propSchema) error {
	switch typ {
	case "string", "":
		switch {
		case b.together:
			if err := b.addChoices(append(p.OneOf, p.AnyOf...), p.Enum, p.EnumNames); err != nil {
				return err
			}
		case len(p.OneOf) > 0 || len(p.Enum) > 0:
			if err := b.addChoices(p.OneOf, p.Enum, p.EnumNames); err != nil {
				return err
			}
		case typ == "":
			return errors.New(`no "type" (accepted: string, number, integer, boolean, array)`)
		}
		b.f.Kind = "string"
		if p.Format != "" && len(b.q.Options) == 0 && !b.together {
			b.q.Question += " (" + p.Format + ")"
		}
	case "number", "integer":
		if !b.together {
			b.q.Question += " (" + typ + ")"
		}
	case "boolean":
		_ = b.add(elicitYes, "", true)
		_ = b.add(elicitNo, "", false)
	case "array":
		return b.ofArray(p)
	default:
		return fmt.Errorf("type %q cannot be asked (accepted: string, number, integer, boolean, array of options)", typ)
	}
	return nil
}

// ofArray asks an array of options as a multiple choice.
func (b *fieldBuilder) ofArray(p propSchema) error {
	var items propSchema
	if len(p.Items) > 0 {
		if err := json.Unmarshal(p.Items, &items); err != nil {
			return fmt.Errorf(`"items" is not a schema object: %w`, err)
		}
	}
	err := b.addChoices(append(items.AnyOf, items.OneOf...), items.Enum, items.EnumNames)
	if err == nil && len(b.q.Options) == 0 {
		err = errors.New("none given")
	}
	if err != nil {
		return fmt.Errorf(`an array needs "items" with "enum" or "anyOf" options: %w`, err)
	}
	b.q.MultiSelect = true
	return nil
}

// add offers one option standing for v. Asked together (FormOptions.Together),
// labels must be distinct as given;
// asked alone, they are made unique.
func (b *fieldBuilder) add(label, desc string, v any) error {
	if b.together {
		label = strings.TrimSpace(label)
		if label == "" {
			return errors.New("an option has no title or value")
		}
		if _, dup := b.f.values[label]; dup {
			return fmt.Errorf("two options are labelled %q", label)
		}
	} else {
		label, desc = uniqueLabel(b.q.Options, label), ""
	}
	b.f.values[label] = v
	b.q.Options = append(b.q.Options, interactions.Choice{Label: label, Description: desc})
	return nil
}

// addChoices offers a schema's oneOf/anyOf choices and enum values.
func (b *fieldBuilder) addChoices(cs []choice, enum []any, names []string) error {
	for _, c := range cs {
		if err := b.add(firstNonEmpty(c.Title, fmt.Sprint(c.Const)), c.Description, c.Const); err != nil {
			return err
		}
	}
	for i, v := range enum {
		label := fmt.Sprint(v)
		if i < len(names) && names[i] != "" {
			label = names[i]
		}
		if err := b.add(label, "", v); err != nil {
			return err
		}
	}
	if b.together {
		return nil
	}
	if len(b.q.Options) == 0 {
		return errors.New("a choice without options")
	}
	if len(b.q.Options) > 25 {
		return fmt.Errorf("%d options; leashd offers at most 25", len(b.q.Options))
	}
	return nil
}

func uniqueLabel(opts []interactions.Choice, label string) string {
	label = connectors.Truncate(strings.TrimSpace(label), 200)
	if label == "" {
		label = "(empty)"
	}
	base := label
	for i := 2; slices.ContainsFunc(opts, func(o interactions.Choice) bool { return o.Label == label }); i++ {
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

// Fill puts a question's answer into the form's content: option labels as
// their values, numbers as numbers, typed text at a select into its
// companion field (FormOptions.Companions), or as typed (Lenient). An
// answer that does not fit the field is an error saying why.
func (f FormField) Fill(answer string, content map[string]any) error {
	opts, lenient := f.Question.Options, f.lenient
	switch {
	case f.Question.MultiSelect:
		if picks, ok := f.picks(answer, lenient); ok {
			content[f.Name] = picks
			return nil
		}
		if f.Custom != "" {
			content[f.Name] = []any{}
			content[f.Custom] = answer
			return nil
		}
		if lenient {
			content[f.Name] = []any{answer}
			return nil
		}
		for _, l := range splitLabels(answer, opts) {
			if _, ok := f.values[l]; !ok {
				return fmt.Errorf("%q is not one of the options", l)
			}
		}
		return fmt.Errorf("%q is not one of the options", answer)
	case len(opts) > 0:
		if v, ok := f.values[answer]; ok {
			content[f.Name] = v
			return nil
		}
		if f.Custom != "" {
			content[f.Custom] = answer
			return nil
		}
		if lenient {
			break // as typed, or as a number below
		}
		for _, o := range opts { // typed, in another case
			if strings.EqualFold(strings.TrimSpace(answer), o.Label) {
				content[f.Name] = f.values[o.Label]
				return nil
			}
		}
		if f.Kind == "boolean" {
			return fmt.Errorf("%q is not Yes or No", answer)
		}
		return fmt.Errorf("%q is not one of the options", answer)
	}
	switch f.Kind {
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(answer), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", answer)
		}
		content[f.Name] = n
	case "number":
		n, err := strconv.ParseFloat(strings.TrimSpace(answer), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", answer)
		}
		content[f.Name] = n
	default:
		content[f.Name] = answer
	}
	return nil
}

// picks reads a multi-select answer (labels joined with ", ") as the
// options' values; ok is false when a part is no option. Lenient reads
// labels in the options' order only (PickedLabels); otherwise in any order.
func (f FormField) picks(answer string, lenient bool) ([]any, bool) {
	labels, ok := PickedLabels(answer, f.Question.Options)
	if !lenient {
		labels, ok = splitLabels(answer, f.Question.Options), true
	}
	out := []any{}
	for _, l := range labels {
		v, known := f.values[l]
		if !known {
			return nil, false
		}
		out = append(out, v)
	}
	return out, ok
}

// PickedLabels reads a multi-select answer (labels in option order joined
// with ", ") back into the labels; ok is false when it is not made of
// them alone.
func PickedLabels(answer string, opts []interactions.Choice) ([]string, bool) {
	picks := []string{}
	rest := answer
	for _, o := range opts {
		if rest == "" {
			break
		}
		if rest == o.Label {
			picks = append(picks, o.Label)
			rest = ""
		} else if r, ok := strings.CutPrefix(rest, o.Label+", "); ok {
			picks = append(picks, o.Label)
			rest = r
		}
	}
	return picks, rest == "" && len(picks) > 0
}

// splitLabels splits a multi-select answer (labels joined with ", ") back
// into labels, preferring the options' own labels (which may hold ", ").
func splitLabels(answer string, opts []interactions.Choice) []string {
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
