package web

import "context"

// Names the external tests use; the package exports only what cmd/leashd
// (and other packages) need.
const MaxAskTimeout = maxAskTimeout
const MaxAskWait = maxAskWait

var ParseAsk = parseAsk

type AskRequest = askRequest
type AskResponse = askResponse
type Asker = programAsker

var OutcomeOf = outcomeOf

// WaitPushes waits until the pushes being sent are done.
func WaitPushes(c *Connector) { c.push.wg.Wait() }

// PageShown reports whether a visible page of chat reported in.
func PageShown(c *Connector, chat string) bool { return c.push.shown(chat) }

// PushSubscriptionsOf are the chat's subscriptions kept.
func PushSubscriptionsOf(c *Connector, chat string) []PushSubscription {
	s, _ := c.push.cfg.Store.PushSubscriptions(context.Background(), chat)
	return s
}
