package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// PushSubscription is a browser's Web Push subscription to a chat (the web
// page's "Notify me").
type PushSubscription struct {
	ChatID, Endpoint, P256dh, Auth string
}

// MaxPushSubscriptions is how many subscriptions a chat keeps: the
// oldest go when more are added.
const MaxPushSubscriptions = 20

// SavePushSubscription keeps a subscription (replacing the chat's one
// with the same endpoint), and at most MaxPushSubscriptions per chat.
func (s *Store) SavePushSubscription(ctx context.Context, p PushSubscription) error {
	lost := lostAttrs("a push subscription was not kept: the browser gets no pushes for the chat", "chat", p.ChatID)
	err := s.write(context.WithoutCancel(ctx), OpPush, lost, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO push_subscriptions (chat_id, endpoint, p256dh, auth, created_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (chat_id, endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth`,
			p.ChatID, p.Endpoint, p.P256dh, p.Auth, fmtTime(s.now())); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM push_subscriptions WHERE chat_id = ? AND rowid NOT IN
			(SELECT rowid FROM push_subscriptions WHERE chat_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?)`,
			p.ChatID, p.ChatID, MaxPushSubscriptions)
		return err
	})
	if err != nil {
		return fmt.Errorf("keeping a push subscription of chat %s: %w", p.ChatID, err)
	}
	return nil
}

// PushSubscriptions are a chat's subscriptions.
func (s *Store) PushSubscriptions(ctx context.Context, chatID string) ([]PushSubscription, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT chat_id, endpoint, p256dh, auth FROM push_subscriptions WHERE chat_id = ? ORDER BY rowid`, chatID)
	if err != nil {
		return nil, fmt.Errorf("reading the push subscriptions of chat %s: %w", chatID, err)
	}
	defer rows.Close()
	var out []PushSubscription
	for rows.Next() {
		var p PushSubscription
		if err := rows.Scan(&p.ChatID, &p.Endpoint, &p.P256dh, &p.Auth); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// DeletePushSubscription forgets an endpoint in every chat (its push
// service said it is gone, or the browser unsubscribed).
func (s *Store) DeletePushSubscription(ctx context.Context, endpoint string) error {
	err := s.write(context.WithoutCancel(ctx), OpPush, lostAttrs("a gone push subscription was not deleted; it is tried again next time"), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM push_subscriptions WHERE endpoint = ?`, endpoint)
		return err
	})
	if err != nil {
		return fmt.Errorf("deleting a push subscription: %w", err)
	}
	return nil
}
