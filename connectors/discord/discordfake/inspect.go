package discordfake

import (
	"encoding/json"
	"strings"
)

// Button is a button as a person sees it.
type Button struct {
	Label    string
	CustomID string
	Style    int
}

// Menu is a select menu: its custom_id and options.
type Menu struct {
	CustomID  string
	MaxValues int
	Options   []MenuOption
}

// MenuOption is one option of a Menu.
type MenuOption struct {
	Label, Value, Description string
	Default                   bool
}

// Buttons lists the buttons of components, in order.
func Buttons(components json.RawMessage) []Button {
	var out []Button
	for _, c := range items(components) {
		if c.Type == 2 {
			out = append(out, Button{Label: c.Label, CustomID: c.CustomID, Style: c.Style})
		}
	}
	return out
}

// Menus lists the select menus of components.
func Menus(components json.RawMessage) []Menu {
	var out []Menu
	for _, c := range items(components) {
		if c.Type != 3 {
			continue
		}
		m := Menu{CustomID: c.CustomID, MaxValues: 1}
		if c.MaxValues != nil {
			m.MaxValues = *c.MaxValues
		}
		for _, o := range c.Options {
			m.Options = append(m.Options, MenuOption(o))
		}
		out = append(out, m)
	}
	return out
}

func items(components json.RawMessage) []component {
	var rows []component
	if json.Unmarshal(components, &rows) != nil {
		return nil
	}
	var out []component
	for _, r := range rows {
		for _, raw := range r.Components {
			var c component
			if json.Unmarshal(raw, &c) == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// HasComponents reports whether a message shows buttons or menus.
func (m Message) HasComponents() bool { return len(items(m.Components)) > 0 }

// Labels are the message's button labels and menu option labels, joined
// by " | ".
func (m Message) Labels() string {
	var out []string
	for _, b := range Buttons(m.Components) {
		out = append(out, b.Label)
	}
	for _, menu := range Menus(m.Components) {
		for _, o := range menu.Options {
			out = append(out, o.Label)
		}
	}
	return strings.Join(out, " | ")
}
