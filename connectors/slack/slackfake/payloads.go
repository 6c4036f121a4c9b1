package slackfake

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"
)

// EventCallback wraps an inner event as Slack's event_callback.
func EventCallback(eventID string, inner map[string]any) map[string]any {
	return map[string]any{
		"token": "verif", "team_id": TeamID, "api_app_id": "A1", "type": "event_callback",
		"event_id": eventID, "event_time": time.Now().Unix(), "event": inner,
	}
}

// MessageEvent is a person's message. threadTS may be empty; channelType is
// "im" or "channel".
func MessageEvent(channel, channelType, user, ts, threadTS, text string) map[string]any {
	m := map[string]any{"type": "message", "channel": channel, "channel_type": channelType, "user": user, "text": text, "ts": ts, "event_ts": ts}
	if threadTS != "" {
		m["thread_ts"] = threadTS
	}
	return m
}

// MentionEvent is an app_mention.
func MentionEvent(channel, user, ts, threadTS, text string) map[string]any {
	m := map[string]any{"type": "app_mention", "channel": channel, "user": user, "text": text, "ts": ts, "event_ts": ts}
	if threadTS != "" {
		m["thread_ts"] = threadTS
	}
	return m
}

// BlockAction is a block_actions payload: user tapped the button
// actionID/value on message msg (its text taken from msg's blocks).
func BlockAction(user string, msg Message, actionID, value string) map[string]any {
	text := "x"
	for _, b := range Buttons(msg.Blocks) {
		if b.ActionID == actionID {
			text = b.Text
		}
	}
	return BlockActionText(user, msg, actionID, value, text)
}

// BlockActionText is BlockAction with the tapped button's text given.
func BlockActionText(user string, msg Message, actionID, value, text string) map[string]any {
	container := map[string]any{"type": "message", "message_ts": msg.TS, "channel_id": msg.Channel, "is_ephemeral": false}
	if msg.ThreadTS != "" {
		container["thread_ts"] = msg.ThreadTS
	}
	return map[string]any{
		"type":         "block_actions",
		"user":         map[string]any{"id": user, "username": user, "name": user, "team_id": TeamID},
		"api_app_id":   "A1",
		"token":        "verif",
		"container":    container,
		"trigger_id":   "trig",
		"team":         map[string]any{"id": TeamID},
		"channel":      map[string]any{"id": msg.Channel, "name": "chan"},
		"message":      map[string]any{"type": "message", "ts": msg.TS, "thread_ts": msg.ThreadTS, "text": msg.Text, "blocks": msg.Blocks},
		"response_url": "https://hooks.invalid/actions",
		"actions":      []any{map[string]any{"type": "button", "action_id": actionID, "block_id": "b", "value": value, "action_ts": "1.1", "text": map[string]any{"type": "plain_text", "text": text}}},
	}
}

// SlashCommand is a /leashd command payload (form fields as Slack sends them).
func SlashCommand(channel, user, text string) url.Values {
	return url.Values{
		"command": {"/leashd"}, "text": {text}, "channel_id": {channel}, "user_id": {user},
		"user_name": {user}, "team_id": {TeamID}, "trigger_id": {"trig"}, "response_url": {"https://hooks.invalid/cmd"},
	}
}

// FormMap turns form values into the map Socket Mode slash_commands
// payloads carry.
func FormMap(v url.Values) map[string]string {
	out := make(map[string]string, len(v))
	for k := range v {
		out[k] = v.Get(k)
	}
	return out
}

// Buttons lists the (action_id, value, text) of every button in blocks.
func Buttons(blocks json.RawMessage) []Button {
	var bs []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Text     struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	_ = json.Unmarshal(blocks, &bs)
	var out []Button
	for _, b := range bs {
		if b.Type != "actions" {
			continue
		}
		for _, e := range b.Elements {
			if e.Type == "button" {
				out = append(out, Button{ActionID: e.ActionID, Value: e.Value, Text: e.Text.Text})
			}
		}
	}
	return out
}

// Button is a button found in a message.
type Button struct{ ActionID, Value, Text string }

// Texts returns every text of every block (section text and fields,
// context elements, headers), joined by newlines: what a person reads.
func Texts(blocks json.RawMessage) string {
	var bs []map[string]any
	_ = json.Unmarshal(blocks, &bs)
	var parts []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if t, ok := x["text"].(string); ok && (x["type"] == "mrkdwn" || x["type"] == "plain_text") {
				parts = append(parts, t)
			}
			for k, y := range x {
				if k == "elements" && x["type"] == "actions" {
					continue // buttons are not prose
				}
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	for _, b := range bs {
		walk(b)
	}
	return strings.Join(parts, "\n")
}
