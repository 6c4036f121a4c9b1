package discord

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
)

// Every key leashd puts on a component decodes to itself, within
// Discord's 100 characters even with the longest interaction ID.
func TestCustomIDRoundTrip(t *testing.T) {
	long := strings.Repeat("a", connectors.MaxButtonIDLen)
	for _, k := range []buttonKey{{ID: long, Kind: 'q', Index: 99}, {ID: "x1", Kind: 'p', Index: 3}, {ID: "x1", Kind: 't', Index: 0}} {
		id := customID(k)
		assert.LessOrEqual(t, len(id), maxCustomID)
		got, err := parseCustomID(id, false, nil)
		require.NoError(t, err)
		assert.Equal(t, k, got.key)
	}
	got, err := parseCustomID(customID(buttonKey{ID: long, Done: true}), true, []string{"2", "0"})
	require.NoError(t, err)
	assert.Equal(t, []int{2, 0}, got.picks)
	assert.True(t, got.menu)
}

// Foreign, forged or altered components are refused with what is
// accepted.
func TestCustomIDRefused(t *testing.T) {
	for _, tc := range []struct {
		id     string
		menu   bool
		values []string
		want   string
	}{
		{"other:q1:0", false, nil, "expected \"leashd:\""},
		{"leashd:q1:x", false, nil, "no option index"},
		{"leashd:q1:0", false, []string{"1"}, "carries no values"},
		{"leashd:q1:0", true, []string{"1"}, "expected <interaction id>:done"},
		{"leashd:q1:done", true, []string{"1", "1"}, "distinct option indices"},
		{"leashd:q1:done", true, []string{"01"}, "distinct option indices"},
		{"leashd:q1:done", true, []string{"-1"}, "distinct option indices"},
		{"leashd:" + strings.Repeat("a", 100), false, nil, "at most 100"},
	} {
		_, err := parseCustomID(tc.id, tc.menu, tc.values)
		require.ErrorIs(t, err, connectors.ErrNotAButton, tc.id)
		assert.Contains(t, err.Error(), tc.want, tc.id)
	}
}

// FuzzParseCustomID: whatever a tap carries, parsing never panics, and
// what it accepts is a leashd key whose encoding gives it back.
func FuzzParseCustomID(f *testing.F) {
	f.Add("leashd:q1:0", false, "")
	f.Add("leashd:q1:done", true, "0,2")
	f.Add("leashd:abc:p3", false, "")
	f.Add("leashd:abc:t1", true, "1")
	f.Add("leashd::0", false, "")
	f.Fuzz(func(t *testing.T, id string, menu bool, values string) {
		var vs []string
		if values != "" {
			vs = strings.Split(values, ",")
		}
		got, err := parseCustomID(id, menu, vs)
		if err != nil {
			return
		}
		if customID(got.key) != id {
			t.Fatalf("%q parsed to %+v, which encodes as %q", id, got.key, customID(got.key))
		}
		if !menu && len(got.picks) > 0 || len(got.picks) > maxPicks {
			t.Fatalf("picks %v from %q", got.picks, values)
		}
	})
}

// Chat IDs and message references decode to what encoded them; others
// are refused.
func TestChatAndRefIDs(t *testing.T) {
	for _, r := range []chatRef{{channel: "500"}, {guild: "200", channel: "900"}} {
		got, err := parseChat(r.String())
		require.NoError(t, err)
		assert.Equal(t, r, got)
	}
	for _, bad := range []string{"slack:C1", "discord:", "discord:a1", "discord:1:2:3", "discord:1:"} {
		_, err := parseChat(bad)
		assert.ErrorIs(t, err, errBadChat, bad)
	}
	m, ok := parseRef(msgRef{"1", "2"}.String())
	assert.True(t, ok)
	assert.Equal(t, msgRef{"1", "2"}, m)
	_, ok = parseRef("1:2")
	assert.False(t, ok)
}

// FuzzParseChat: any chat ID either is refused or encodes back to itself.
func FuzzParseChat(f *testing.F) {
	f.Add("discord:500")
	f.Add("discord:200:900")
	f.Add("discord::")
	f.Fuzz(func(t *testing.T, id string) {
		r, err := parseChat(id)
		if err == nil && r.String() != id {
			t.Fatalf("%q parsed to %+v, which encodes as %q", id, r, r.String())
		}
	})
}

// The base URL (LEASHD_DISCORD_API_URL) stands for https://discord.com/,
// path prefix included; other hosts are left alone.
func TestRewrite(t *testing.T) {
	var got []string
	rt := rewrite{base: mustURL(t, "http://127.0.0.1:9/fake/"), next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r.URL.String())
		return &http.Response{StatusCode: 204, Body: http.NoBody}, nil
	})}
	for _, u := range []string{"https://discord.com/api/v9/users/@me", "https://cdn.discordapp.com/x.png"} {
		req, _ := http.NewRequest("GET", u, nil)
		_, err := rt.RoundTrip(req)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"http://127.0.0.1:9/fake/api/v9/users/@me", "https://cdn.discordapp.com/x.png"}, got)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}
