package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/leashd/leashd/interactions"
)

// pageSize is how many pending interactions Pending asks for at a time
// (the server's most).
const pageSize = 1000

// Pending lists the interactions pending in chat ("": every chat the
// token may see), oldest first, following GET /api/interactions's pages.
// With a program's token of LEASHD_API_TOKENS that is the requests it
// asked itself (and, when its scope says answer, those of its chats).
func (c *Client) Pending(ctx context.Context, chat string) ([]interactions.Interaction, error) {
	var out []interactions.Interaction
	cursor := ""
	for {
		q := url.Values{"limit": {strconv.Itoa(pageSize)}}
		if chat != "" {
			q.Set("chat", chat)
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page struct {
			Interactions []interactions.Interaction `json:"interactions"`
			Next         string                     `json:"next"`
		}
		if err := c.do(ctx, http.MethodGet, "/api/interactions?"+q.Encode(), nil, &page); err != nil {
			return out, err
		}
		out = append(out, page.Interactions...)
		if page.Next == "" || len(page.Interactions) == 0 {
			return out, nil
		}
		cursor = page.Next
	}
}
