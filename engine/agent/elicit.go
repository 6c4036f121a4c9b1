package agent

import (
	"context"
	"encoding/json"
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
