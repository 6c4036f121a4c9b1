package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/leashd/leashd/interactions"
)

// WithSource marks every request the client starts as relayed from src
// (an agent's hook: `leashd hook`), which leashd audits with it.
func WithSource(src interactions.Source) Option {
	return func(c *Client) { c.source = &src }
}

// AwayState is whether a chat's person is away from the desk (GET and
// POST /api/away).
type AwayState struct {
	ChatID string     `json:"chat_id"`
	Away   bool       `json:"away"`
	Since  *time.Time `json:"since,omitempty"`
	// Released counts the hooks' requests a change back to the desk
	// returned to their terminals.
	Released int `json:"released,omitempty"`
}

// Away asks leashd whether chat's person is away from the desk.
func (c *Client) Away(ctx context.Context, chat string) (AwayState, error) {
	var out AwayState
	err := c.do(ctx, http.MethodGet, "/api/away?chat="+url.QueryEscape(chat), nil, &out)
	return out, err
}

// SetAway says chat's person is away from the desk (on) or back.
func (c *Client) SetAway(ctx context.Context, chat string, on bool) (AwayState, error) {
	var out AwayState
	err := c.do(ctx, http.MethodPost, "/api/away", map[string]any{"chat_id": chat, "away": on}, &out)
	return out, err
}

// AwayNotice shows text in chat when its person is away from the desk;
// shown is false at the desk.
func (c *Client) AwayNotice(ctx context.Context, chat, text string) (shown bool, err error) {
	var out struct {
		Shown bool `json:"shown"`
	}
	err = c.do(ctx, http.MethodPost, "/api/away/notice", map[string]string{"chat_id": chat, "text": text}, &out)
	return out.Shown, err
}

// DeskActive tells leashd a prompt was typed in the terminal whose hooks
// ask in chat (LEASHD_AWAY_AFTER_SECONDS counts idle time from it).
func (c *Client) DeskActive(ctx context.Context, chat string) (AwayState, error) {
	var out AwayState
	err := c.do(ctx, http.MethodPost, "/api/away/activity", map[string]string{"chat_id": chat}, &out)
	return out, err
}
