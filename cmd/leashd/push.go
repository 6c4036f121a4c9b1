package main

import (
	"context"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/engine/sqlite"
)

// usePush turns on the page's push notifications: the VAPID keys kept
// beside the database (made at first start) and the subscriptions in it.
func (s *settings) usePush(db *sqlite.Store) error {
	if s.webApp == nil || db == nil || !s.web.Serves() || !s.web.PageOn() {
		return nil
	}
	priv, pub, err := s.VAPIDKeys(webpush.GenerateVAPIDKeys)
	if err != nil {
		return err
	}
	s.webApp.Push = &web.Push{PublicKey: pub, PrivateKey: priv, Store: pushStore{db}, ExtraHosts: s.push.Hosts(), Subscriber: s.push.Subscriber}
	return nil
}

// pushStore keeps the page's push subscriptions in the database.
type pushStore struct{ db *sqlite.Store }

func (p pushStore) SavePushSubscription(ctx context.Context, s web.PushSubscription) error {
	return p.db.SavePushSubscription(ctx, sqlite.PushSubscription(s))
}

func (p pushStore) PushSubscriptions(ctx context.Context, chatID string) ([]web.PushSubscription, error) {
	subs, err := p.db.PushSubscriptions(ctx, chatID)
	out := make([]web.PushSubscription, len(subs))
	for i, s := range subs {
		out[i] = web.PushSubscription(s)
	}
	return out, err
}

func (p pushStore) DeletePushSubscription(ctx context.Context, endpoint string) error {
	return p.db.DeletePushSubscription(ctx, endpoint)
}
