package web

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzPushSubscription checks any subscription a page may send: it never
// panics, and one it accepts is https on a known push service (or the
// extra host) with keys of the right sizes.
func FuzzPushSubscription(f *testing.F) {
	f.Add("https://fcm.googleapis.com/fcm/send/x", "BLc4xRzKlKORKWlbdgFaBrrPK3ydWAHo4M0gs0i1oEKgPpWC5cW8OCzVrOQRv-1npXRWk8udnW3oYhIO4475rds", "5I2Bu2oKdyy9CwL8QVF0NQ", "")
	f.Add("https://a.push.apple.com:443/x", "AAAA", "AAAA", "*.example.org")
	f.Add("https://127.0.0.1:1/x", "", "", "127.0.0.1")
	f.Add("https://fcm.googleapis.com.@evil/x", "", "", "")
	f.Fuzz(func(t *testing.T, endpoint, p256dh, auth, extra string) {
		p := &pusher{cfg: Push{ExtraHosts: []string{extra}}}
		if p.checkSubscription(PushSubscription{ChatID: "c", Endpoint: endpoint, P256dh: p256dh, Auth: auth}) != nil {
			return
		}
		u, err := url.Parse(endpoint)
		if err != nil || u.Scheme != "https" || u.User != nil {
			t.Fatalf("accepted %q", endpoint)
		}
		host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		if !hostAllowed(host, []string{extra}) {
			t.Fatalf("accepted host %q", host)
		}
	})
}
