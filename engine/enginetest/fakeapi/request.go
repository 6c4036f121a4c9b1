package fakeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// Step answers one model call; it may inspect the request.
type Step func(*Request) Reply

// Request is a recorded call.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Raw    []byte

	Model    string
	Stream   bool
	Messages []Message
	Tools    []string // tool names offered to the model
	System   json.RawMessage
	// Reply is what the fake answered: for a scripted call that needed
	// preparation (see Prepared), the reply sent once it was done.
	Reply Reply

	abandoned chan struct{}
}

// Abandoned is closed when the client went away while the fake held the
// reply open (Reply.Hold): the CLI interrupted or dropped the call. It
// stays open for a call the fake answered in full.
func (r *Request) Abandoned() <-chan struct{} { return r.abandoned }

// Message is a conversation message, content normalised to blocks.
type Message struct {
	Role    string
	Content []Block
}

// Block is a content block.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	// Source is an image block's picture (images.go).
	Source *ImageSource `json:"source,omitempty"`
}

// ResultText is a tool_result's content as text (a string, or its text
// blocks joined by newlines).
func (b Block) ResultText() string {
	c := bytes.TrimSpace(b.Content)
	if len(c) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var bs []Block
	if json.Unmarshal(c, &bs) == nil {
		var parts []string
		for _, x := range bs {
			if x.Type == "text" {
				parts = append(parts, x.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(c)
}

// ToolResult finds the tool_result for a tool_use ID anywhere in the
// conversation.
func (r *Request) ToolResult(toolUseID string) (Block, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		for _, b := range r.Messages[i].Content {
			if b.Type == "tool_result" && b.ToolUseID == toolUseID {
				return b, true
			}
		}
	}
	return Block{}, false
}

// UserTexts are the text blocks of user messages, in order (the CLI adds
// system reminders as text blocks too).
func (r *Request) UserTexts() []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// HasUserText reports whether any user text block contains s.
func (r *Request) HasUserText(s string) bool {
	for _, t := range r.UserTexts() {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// texts are the request's system prompt and message texts.
func (r *Request) texts() []string {
	var out []string
	sys := bytes.TrimSpace(r.System)
	if len(sys) > 0 {
		for _, b := range normalise(sys) {
			out = append(out, b.Text)
		}
	}
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// DeferredTools are the tool names the request lists as deferred (loaded
// with ToolSearch before use): the lines after "deferred tools …:" in its
// prompt. Old CLIs list none.
func (r *Request) DeferredTools() []string {
	var names []string
	for _, t := range r.texts() {
		for rest := t; ; {
			i := strings.Index(rest, "deferred tools")
			if i < 0 {
				break
			}
			rest = rest[i+len("deferred tools"):]
			j := strings.Index(rest, ":\n")
			if j < 0 {
				break
			}
			for _, line := range strings.Split(rest[j+2:], "\n") {
				line = strings.TrimSpace(line)
				if !toolName.MatchString(line) {
					break
				}
				if !slices.Contains(names, line) {
					names = append(names, line)
				}
			}
		}
	}
	return names
}

var (
	toolName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(__[A-Za-z0-9_-]+)*$`)
	planFile = regexp.MustCompile(`(?:create your plan at|plan file already exists at) (\S+\.md)`)
)

// PlanFile is the plan file the request's plan-mode prompt names ("" when
// it names none).
func (r *Request) PlanFile() string {
	for _, t := range r.texts() {
		if m := planFile.FindStringSubmatch(t); m != nil {
			return m[1]
		}
	}
	return ""
}

func normalise(c json.RawMessage) []Block {
	c = bytes.TrimSpace(c)
	if len(c) == 0 {
		return nil
	}
	var str string
	if json.Unmarshal(c, &str) == nil {
		return []Block{{Type: "text", Text: str}}
	}
	var bs []Block
	_ = json.Unmarshal(c, &bs)
	return bs
}
