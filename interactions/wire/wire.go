// Package wire holds the types of the web API's bodies that programs read
// back: the server (connectors/web) answers with them and the Go client
// (interactions/client) decodes them, so the two cannot drift apart. It
// imports nothing of leashd but the interactions package.
package wire

import (
	"time"

	"github.com/leashd/leashd/interactions"
)

// Outcome is how an interaction ended, as a program that asked sees it:
// the body of GET /api/interactions/{id}, which connectors/web answers
// and interactions/client reads.
type Outcome struct {
	ID string `json:"interaction_id"`
	// Status is "pending" (also while a restart of leashd interrupted it:
	// it can still be answered) or how it ended (an interactions.Status):
	// answered, rejected, expired, cancelled.
	Status string `json:"status"`
	// Answer is the answer as one line: the label, labels joined with
	// ", " (multi-select), or the free text.
	Answer string `json:"answer"`
	// Answers are the chosen option labels (none for free text).
	Answers []string `json:"answers"`
	// Decision is a plan review's or tool approval's decision.
	Decision string `json:"decision"`
	// Text is a rejection's reason, or why it expired or was cancelled.
	Text string `json:"text"`
	By   string `json:"by"`
	// Approved says whether the answer lets the asker go ahead: answered,
	// and for an approval its first option.
	Approved   bool       `json:"approved"`
	ResolvedAt *time.Time `json:"resolved_at"`
}

// Resolution converts the outcome to the interactions package's.
func (o Outcome) Resolution() interactions.Resolution {
	r := interactions.Resolution{Status: interactions.Status(o.Status), Answer: o.Answer, Decision: o.Decision, Text: o.Text, By: o.By}
	if o.ResolvedAt != nil {
		r.At = *o.ResolvedAt
	}
	return r
}
