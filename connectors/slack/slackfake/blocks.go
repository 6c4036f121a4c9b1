package slackfake

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Block Kit limits the fake enforces, as Slack does.
const (
	MaxBlocks         = 50   // blocks in a message
	MaxTextObject     = 3000 // characters of a section's or context element's text
	MaxButtonText     = 75   // characters of a button's (plain_text) text
	MaxButtonValue    = 2000 // characters of a button's value
	MaxID             = 255  // characters of an action_id or block_id
	MaxActionElements = 25   // elements in an actions block
	MaxContextElems   = 10   // elements in a context block
)

// ValidateBlocks checks a message's blocks (JSON, as sent in the blocks
// field; empty means none) against Slack's limits and returns what is
// wrong, each problem with its JSON pointer as Slack reports it.
func ValidateBlocks(raw string) []string {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	var blocks []map[string]any
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return []string{"blocks are not a JSON array of objects: " + err.Error()}
	}
	c := blockCheck{blockIDs: map[string]bool{}, actionIDs: map[string]bool{}}
	if len(blocks) > MaxBlocks {
		c.bad("/blocks", "no more than %d items allowed, got %d", MaxBlocks, len(blocks))
	}
	for i, b := range blocks {
		c.block(fmt.Sprintf("/blocks/%d", i), b)
	}
	return c.errs
}

// blockCheck collects what is wrong with one message's blocks
// (ValidateBlocks); IDs must be unique within the message.
type blockCheck struct {
	errs      []string
	blockIDs  map[string]bool
	actionIDs map[string]bool
}

// bad records a problem at the JSON pointer ptr.
func (c *blockCheck) bad(ptr, format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...)+" [json-pointer:"+ptr+"]")
}

// id checks a block_id or action_id: absent (Slack generates one), or 1 to
// MaxID characters and unique among seen.
func (c *blockCheck) id(ptr, kind string, v any, seen map[string]bool) {
	s, _ := v.(string)
	if v == nil {
		return // Slack generates one
	}
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		c.bad(ptr, "%s must not be empty", kind)
	case n > MaxID:
		c.bad(ptr, "%s must be at most %d characters, got %d", kind, MaxID, n)
	}
	if seen[s] {
		c.bad(ptr, "%s %q is not unique within the message", kind, s)
	}
	seen[s] = true
}

// text checks a text object: plain_text (or mrkdwn unless plainOnly), not
// blank, at most max characters.
func (c *blockCheck) text(ptr string, v any, max int, plainOnly bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		c.bad(ptr, "a text object is required")
		return
	}
	typ, _ := obj["type"].(string)
	if typ != "plain_text" && (plainOnly || typ != "mrkdwn") {
		c.bad(ptr+"/type", "text type %q not allowed here", typ)
	}
	t, _ := obj["text"].(string)
	switch n := utf8.RuneCountInString(t); {
	case strings.TrimSpace(t) == "":
		c.bad(ptr+"/text", "must be more than 0 characters")
	case n > max:
		c.bad(ptr+"/text", "must be less than %d characters, got %d", max+1, n)
	}
}

// block checks one block, at ptr, by its type.
func (c *blockCheck) block(ptr string, b map[string]any) {
	c.id(ptr+"/block_id", "block_id", b["block_id"], c.blockIDs)
	switch b["type"] {
	case "section":
		c.section(ptr, b)
	case "context":
		c.context(ptr, b)
	case "actions":
		c.actions(ptr, b)
	case "header":
		c.text(ptr+"/text", b["text"], 150, true)
	case "divider", "image", "rich_text", "input", "file", "video":
	default:
		c.bad(ptr+"/type", "unknown block type %v", b["type"])
	}
}

// section checks a section block: text or fields, each within its limit.
func (c *blockCheck) section(ptr string, b map[string]any) {
	if b["text"] == nil && b["fields"] == nil {
		c.bad(ptr, "a section needs text or fields")
	}
	if b["text"] != nil {
		c.text(ptr+"/text", b["text"], MaxTextObject, false)
	}
	fields, _ := b["fields"].([]any)
	for j, f := range fields {
		c.text(fmt.Sprintf("%s/fields/%d", ptr, j), f, 2000, false)
	}
}

// context checks a context block: 1 to MaxContextElems images or texts.
func (c *blockCheck) context(ptr string, b map[string]any) {
	els, _ := b["elements"].([]any)
	if len(els) == 0 || len(els) > MaxContextElems {
		c.bad(ptr+"/elements", "a context block needs 1 to %d elements, got %d", MaxContextElems, len(els))
	}
	for j, el := range els {
		if m, ok := el.(map[string]any); ok && m["type"] == "image" {
			continue
		}
		c.text(fmt.Sprintf("%s/elements/%d", ptr, j), el, MaxTextObject, false)
	}
}

// actions checks an actions block: 1 to MaxActionElements elements with
// unique action_ids, buttons with a short plain text and value.
func (c *blockCheck) actions(ptr string, b map[string]any) {
	els, _ := b["elements"].([]any)
	if len(els) == 0 || len(els) > MaxActionElements {
		c.bad(ptr+"/elements", "an actions block needs 1 to %d elements, got %d", MaxActionElements, len(els))
	}
	for j, el := range els {
		eptr := fmt.Sprintf("%s/elements/%d", ptr, j)
		m, _ := el.(map[string]any)
		c.id(eptr+"/action_id", "action_id", m["action_id"], c.actionIDs)
		if m["type"] != "button" {
			continue
		}
		c.text(eptr+"/text", m["text"], MaxButtonText, true)
		if v, ok := m["value"].(string); ok && utf8.RuneCountInString(v) > MaxButtonValue {
			c.bad(eptr+"/value", "must be at most %d characters, got %d", MaxButtonValue, utf8.RuneCountInString(v))
		}
	}
}
