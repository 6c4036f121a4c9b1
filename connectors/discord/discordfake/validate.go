package discordfake

import (
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"
)

// Discord's limits the fake enforces.
const (
	MaxContent   = 2000
	MaxRows      = 5
	MaxRowItems  = 5
	MaxCustomID  = 100
	MaxLabel     = 80
	MaxOptions   = 25
	MaxOptionLen = 100
)

type component struct {
	Type        int               `json:"type"`
	Components  []json.RawMessage `json:"components"`
	CustomID    string            `json:"custom_id"`
	Label       string            `json:"label"`
	Style       int               `json:"style"`
	URL         string            `json:"url"`
	Options     []selectOption    `json:"options"`
	Placeholder string            `json:"placeholder"`
	MinValues   *int              `json:"min_values"`
	MaxValues   *int              `json:"max_values"`
}

type selectOption struct {
	Label       string `json:"label"`
	Value       string `json:"value"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
}

// ValidateMessage checks content and components against Discord's
// limits and returns every problem found (none: Discord takes it).
func ValidateMessage(content string, components json.RawMessage) []string {
	var errs []string
	if n := utf8.RuneCountInString(content); n > MaxContent {
		errs = append(errs, fmt.Sprintf("content: %d characters (at most %d)", n, MaxContent))
	}
	if len(components) == 0 || string(components) == "null" {
		return errs
	}
	var rows []component
	if err := json.Unmarshal(components, &rows); err != nil {
		return append(errs, "components: not a list of action rows: "+err.Error())
	}
	if len(rows) > MaxRows {
		errs = append(errs, fmt.Sprintf("components: %d action rows (at most %d)", len(rows), MaxRows))
	}
	ids := map[string]bool{}
	for i, row := range rows {
		errs = append(errs, validateRow(fmt.Sprintf("components[%d]", i), row, ids)...)
	}
	return errs
}

func validateRow(where string, row component, ids map[string]bool) []string {
	var errs []string
	if row.Type != 1 {
		return []string{fmt.Sprintf("%s: type %d at the top level (expected 1, an action row)", where, row.Type)}
	}
	if len(row.Components) == 0 || len(row.Components) > MaxRowItems {
		errs = append(errs, fmt.Sprintf("%s: %d components in a row (1 to %d)", where, len(row.Components), MaxRowItems))
	}
	for j, raw := range row.Components {
		var c component
		if err := json.Unmarshal(raw, &c); err != nil {
			errs = append(errs, fmt.Sprintf("%s.components[%d]: %v", where, j, err))
			continue
		}
		at := fmt.Sprintf("%s.components[%d]", where, j)
		if c.Type == 3 && len(row.Components) > 1 {
			errs = append(errs, at+": a select menu must be alone in its row")
		}
		errs = append(errs, validateItem(at, c, ids)...)
	}
	return errs
}

func validateItem(at string, c component, ids map[string]bool) []string {
	var errs []string
	if c.Type != 2 && c.Type != 3 {
		return []string{fmt.Sprintf("%s: type %d (expected 2, a button, or 3, a string select)", at, c.Type)}
	}
	if c.Type == 2 && c.Style == 5 {
		return nil // a link button has a URL, no custom_id
	}
	switch n := len(c.CustomID); {
	case n == 0 || n > MaxCustomID:
		errs = append(errs, fmt.Sprintf("%s: custom_id of %d characters (1 to %d)", at, n, MaxCustomID))
	case ids[c.CustomID]:
		errs = append(errs, fmt.Sprintf("%s: custom_id %q repeated within the message", at, c.CustomID))
	}
	ids[c.CustomID] = true
	if c.Type == 2 {
		if n := utf8.RuneCountInString(c.Label); n == 0 || n > MaxLabel {
			errs = append(errs, fmt.Sprintf("%s: label of %d characters (1 to %d)", at, n, MaxLabel))
		}
		if c.Style < 1 || c.Style > 4 {
			errs = append(errs, fmt.Sprintf("%s: style %d (1 to 5)", at, c.Style))
		}
		return errs
	}
	return append(errs, validateSelect(at, c)...)
}

func validateSelect(at string, c component) []string {
	var errs []string
	if n := len(c.Options); n == 0 || n > MaxOptions {
		errs = append(errs, fmt.Sprintf("%s: %d options (1 to %d)", at, n, MaxOptions))
	}
	lo, hi := 1, 1
	if c.MinValues != nil {
		lo = *c.MinValues
	}
	if c.MaxValues != nil {
		hi = *c.MaxValues
	}
	if lo < 0 || lo > MaxOptions || hi < 1 || hi > MaxOptions || lo > hi || hi > len(c.Options) {
		errs = append(errs, fmt.Sprintf("%s: min_values %d, max_values %d with %d options", at, lo, hi, len(c.Options)))
	}
	if utf8.RuneCountInString(c.Placeholder) > 150 {
		errs = append(errs, at+": placeholder over 150 characters")
	}
	values := map[string]bool{}
	for k, o := range c.Options {
		if n := utf8.RuneCountInString(o.Label); n == 0 || n > MaxOptionLen {
			errs = append(errs, fmt.Sprintf("%s.options[%d]: label of %d characters (1 to %d)", at, k, n, MaxOptionLen))
		}
		if n := utf8.RuneCountInString(o.Value); n == 0 || n > MaxOptionLen || values[o.Value] {
			errs = append(errs, fmt.Sprintf("%s.options[%d]: value %q empty, over %d characters or repeated", at, k, o.Value, MaxOptionLen))
		}
		values[o.Value] = true
		if utf8.RuneCountInString(o.Description) > MaxOptionLen {
			errs = append(errs, fmt.Sprintf("%s.options[%d]: description over %d characters", at, k, MaxOptionLen))
		}
	}
	return errs
}

var commandName = regexp.MustCompile(`^[-_\p{Ll}\p{N}]{1,32}$`)

// validateCommands checks application commands as Discord does: names of
// 1-32 lower-case letters, digits, - and _, descriptions of 1-100
// characters, at most 100 commands, 25 options each.
func validateCommands(raw json.RawMessage) []string {
	var cmds []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Options     []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"options"`
	}
	if err := json.Unmarshal(raw, &cmds); err != nil {
		return []string{"not a list of commands: " + err.Error()}
	}
	var errs []string
	if len(cmds) > 100 {
		errs = append(errs, fmt.Sprintf("%d commands (at most 100)", len(cmds)))
	}
	for i, c := range cmds {
		if !commandName.MatchString(c.Name) {
			errs = append(errs, fmt.Sprintf("[%d].name %q (1-32 lower-case letters, digits, - or _)", i, c.Name))
		}
		if n := utf8.RuneCountInString(c.Description); n == 0 || n > 100 {
			errs = append(errs, fmt.Sprintf("[%d].description of %d characters (1 to 100)", i, n))
		}
		if len(c.Options) > 25 {
			errs = append(errs, fmt.Sprintf("[%d]: %d options (at most 25)", i, len(c.Options)))
		}
		for j, o := range c.Options {
			if !commandName.MatchString(o.Name) || o.Description == "" || utf8.RuneCountInString(o.Description) > 100 {
				errs = append(errs, fmt.Sprintf("[%d].options[%d]: name %q or description invalid", i, j, o.Name))
			}
		}
	}
	return errs
}
