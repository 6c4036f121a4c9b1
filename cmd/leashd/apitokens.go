package main

import (
	"context"
	"errors"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/interactions"
)

// Programs' credentials and bounds (issue #30): the page's token may do
// everything; each token of LEASHD_API_TOKENS asks only in the chats of
// its scope, on the API and at /mcp alike, and every credential's POSTs
// are paced (LEASHD_API_RATE, LEASHD_API_BURST). What programs leave
// pending is capped by the coordinator (LEASHD_API_MAX_PENDING_PER_CHAT,
// LEASHD_API_MAX_PENDING).

// useCredentials builds every token the API and /mcp take, once the
// page's token is known (after useGeneratedToken), and gives them to the
// web app. Validate has checked LEASHD_API_TOKENS.
func (s *settings) useCredentials() error {
	toks, err := config.ParseAPITokens(s.api.Tokens)
	if err != nil {
		return err
	}
	s.creds = web.NewCredentials(s.web.Token, s.tokenFile, toks, s.api.Rate, s.api.Burst)
	if s.webApp != nil {
		s.webApp.Credentials = s.creds
	}
	return nil
}

// pendingCaps are the coordinator's caps on programs' pending requests.
func (s settings) pendingCaps() interactions.Opt {
	return interactions.WithCaps(interactions.Caps{
		PerChat: s.api.MaxPendingPerChat, All: s.api.MaxPending,
		PerChatSetting: "LEASHD_API_MAX_PENDING_PER_CHAT", AllSetting: "LEASHD_API_MAX_PENDING",
	})
}

// mcpMayAsk holds /mcp?chat= to the scope of the request's token, and
// names a program's token as who asks (the audit log's asked_by is then
// mcp:<name>).
func mcpMayAsk(ctx context.Context, chat string) (string, error) {
	c, ok := web.CredentialFrom(ctx)
	switch {
	case !ok || c.Page():
		return "", nil
	case !c.MayAsk(chat):
		return "", errors.New(c.ScopeError(chat, "ask"))
	}
	return c.Name, nil
}
