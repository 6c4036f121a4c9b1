package slack

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestButtonKeysRoundTrip(t *testing.T) {
	for _, k := range []buttonKey{
		{ID: "aB3_-x9Z", Kind: 'q', Index: 0},
		{ID: "aB3_-x9Z", Kind: 'q', Index: 99},
		{ID: "id", Kind: 'p', Index: 3},
		{ID: "id", Kind: 't', Index: 2},
		{ID: "id", Done: true},
	} {
		got, err := parseAction(actionIDOf(k), k.String())
		require.NoError(t, err, k.String())
		assert.Equal(t, k, got)
		assert.LessOrEqual(t, len(actionIDOf(k)), 255, "Slack's action_id limit")
	}
}

func TestParseActionRefusesWhatIsNotOurs(t *testing.T) {
	for _, tc := range []struct{ actionID, value, want string }{
		{"leashd:id:1", "id:2", "does not match"},
		{"id:1", "id:1", "does not match"},
		{"leashd::1", ":1", "expected <interaction id>"},
		{"leashd:id", "id", "expected <interaction id>"},
		{"leashd:id:x", "id:x", "no option index"},
		{"leashd:id:01", "id:01", "no option index"},
		{"leashd:id:-1", "id:-1", "no option index"},
		{"leashd:id:100", "id:100", "no option index"},
		{"leashd:id:q1", "id:q1", "no option index"},
		{"leashd:i d:1", "i d:1", "expected <interaction id>"},
		{"x", strings.Repeat("a", 41) + ":1", "expected <interaction id>"},
	} {
		_, err := parseAction(tc.actionID, tc.value)
		require.Error(t, err, tc.value)
		assert.ErrorIs(t, err, errBadKey)
		assert.Contains(t, err.Error(), tc.want, tc.value)
	}
}

func TestChatIDs(t *testing.T) {
	for _, id := range []string{"slack:D024BE91L", "slack:C123:1700000000.000100"} {
		ref, err := parseChat(id)
		require.NoError(t, err)
		assert.Equal(t, id, ref.String())
	}
	ref, _ := parseChat("slack:C123:1700000000.000100")
	assert.Equal(t, chatRef{channel: "C123", thread: "1700000000.000100"}, ref)
	for _, bad := range []string{"", "slack:", "telegram:42", "slack:c123", "slack:C1:abc", "slack:C1:1.2:3", "slack:C1:", "C1"} {
		_, err := parseChat(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "expected slack:<channel> or slack:<channel>:<thread_ts>")
	}
	r, ok := parseRef("C1:1700000000.000100")
	require.True(t, ok)
	assert.Equal(t, "C1:1700000000.000100", r.String())
	for _, bad := range []string{"", "C1", "C1:", "c1:1.1", "C1:1", "msg-abc"} {
		_, ok := parseRef(bad)
		assert.False(t, ok, bad)
	}
}

// FuzzParseAction: whatever a tap carries, parsing never panics; what it
// accepts re-encodes to exactly the same action_id and value.
func FuzzParseAction(f *testing.F) {
	for _, s := range [][2]string{
		{"leashd:abc:1", "abc:1"}, {"leashd:abc:p3", "abc:p3"}, {"leashd:abc:t0", "abc:t0"},
		{"leashd:abc:done", "abc:done"}, {"leashd:abc:1", "abc:2"}, {"", ""}, {"leashd:a:99", "a:99"},
		{"leashd:a:007", "a:007"}, {"leashd:ü:1", "ü:1"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, actionID, value string) {
		k, err := parseAction(actionID, value)
		if err != nil {
			if !strings.Contains(err.Error(), "not a leashd button") {
				t.Fatalf("error does not say what was wrong: %v", err)
			}
			return
		}
		if k.String() != value || actionIDOf(k) != actionID {
			t.Fatalf("accepted %q/%q but re-encodes as %q/%q", actionID, value, actionIDOf(k), k.String())
		}
		if k.ID == "" || len(k.ID) > maxKeyIDLen || k.Index < 0 || k.Index > 99 {
			t.Fatalf("accepted an out-of-range key %+v", k)
		}
	})
}

// FuzzParseChat: chat IDs and message refs parse without panics and
// round-trip exactly.
func FuzzParseChat(f *testing.F) {
	for _, s := range []string{"slack:D1", "slack:C123:1700000000.000100", "slack:C1:", "telegram:1", "slack:C1:1.1:1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ref, err := parseChat(s); err == nil && ref.String() != s {
			t.Fatalf("parseChat(%q) = %+v, which prints as %q", s, ref, ref.String())
		}
		if r, ok := parseRef(s); ok && r.String() != s {
			t.Fatalf("parseRef(%q) = %+v, which prints as %q", s, r, r.String())
		}
	})
}
