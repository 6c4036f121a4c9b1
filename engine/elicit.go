package engine

import (
	"context"
	"strings"

	"github.com/leashd/leashd/engine/approval"

	"github.com/leashd/leashd/engine/agent"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Answer for a URL-mode elicitation.
const elicitOpened = "Done"

// maxElicitTries is how often a field is asked again after an answer that
// does not fit it.
const maxElicitTries = 3

// Elicit implements Elicitor: the server's message is said in the chat,
// then each form field is asked as a question, one at a time (a link in
// URL mode, with Done to say it was opened). A declined question declines
// the form; one that expired or was cancelled cancels it.
func (t *turn) Elicit(ctx context.Context, req agent.ElicitationRequest) agent.ElicitationResponse {
	t.budget.pause()
	defer t.budget.resume()
	server := connectors.Truncate(strings.Join(strings.Fields(approval.PlainText(req.Server)), " "), 100)
	msg := strings.TrimSpace(approval.PlainText(req.Message))
	head := "MCP server " + server
	if req.URL != "" {
		_, res, err := t.e.coord.Request(ctx, interactions.Interaction{
			ChatID: t.c.id, Kind: interactions.KindQuestion, Header: connectors.Truncate(head, 100),
			Question: approval.Excerpt(approval.OrDefault(msg, "The MCP server asks you to open a link.")+"\n\nOpen this link: "+approval.PlainText(req.URL)+"\nthen choose "+elicitOpened+".", 40),
			Options:  []interactions.Choice{{Label: elicitOpened, Description: "I have opened the link and finished there"}},
			Index:    1, Total: 1,
		})
		if err != nil {
			return agent.ElicitationResponse{Action: agent.ElicitCancel}
		}
		return approval.ElicitAction(res, nil)
	}
	fields, err := approval.FormFields(req.Schema, approval.FormOptions{Order: req.PropertyOrder})
	if err != nil {
		t.e.log.Warn("unreadable elicitation form", "chat", t.c.id, "server", server, "err", err)
		t.e.say(ctx, t.c.id, head+" asked for input leashd could not show ("+err.Error()+"); it was declined.")
		return agent.ElicitationResponse{Action: agent.ElicitDecline}
	}
	if msg != "" {
		t.e.say(ctx, t.c.id, head+" asks: "+approval.Excerpt(msg, 40))
	}
	content := map[string]any{}
	for i, f := range fields {
		q := f.Question
		for try := 1; ; try++ {
			_, res, err := t.e.coord.Request(ctx, interactions.Interaction{
				ChatID: t.c.id, Kind: interactions.KindQuestion,
				Header: q.Header, Question: q.Question, Options: q.Options, MultiSelect: q.MultiSelect,
				Index: i + 1, Total: len(fields),
			})
			if err != nil {
				return agent.ElicitationResponse{Action: agent.ElicitCancel}
			}
			if res.Status != interactions.StatusAnswered {
				return approval.ElicitAction(res, nil)
			}
			verr := f.Fill(res.Answer, content)
			if verr == nil {
				break
			}
			if try == maxElicitTries {
				t.e.say(ctx, t.c.id, "That does not fit ("+verr.Error()+"); the form was declined.")
				return agent.ElicitationResponse{Action: agent.ElicitDecline}
			}
			t.e.say(ctx, t.c.id, "That does not fit ("+verr.Error()+"); please answer again.")
		}
	}
	return agent.ElicitationResponse{Action: agent.ElicitAccept, Content: content}
}
