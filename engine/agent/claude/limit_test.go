package claude

import (
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// As CLIs 2.1.197 and 2.1.332 print it (signed in with a subscription).
const rejectedEvent = `{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1795613698,"rateLimitType":"five_hour","isUsingOverage":false},"uuid":"e0c2d342","session_id":"ca4b16f9"}`

func TestParseRateLimit(t *testing.T) {
	lim, err := parseRateLimit([]byte(rejectedEvent))
	require.NoError(t, err)
	assert.Equal(t, &agent.UsageLimit{ResetsAt: time.Unix(1795613698, 0).UTC(), Kind: "five_hour"}, lim)

	for _, ok := range []string{
		`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1795613698}}`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","utilization":0.9}}`,
	} {
		lim, err := parseRateLimit([]byte(ok))
		require.NoError(t, err, ok)
		assert.Nil(t, lim, "nothing stopped: %s", ok)
	}
	for in, msg := range map[string]string{
		`{"type":"rate_limit_event"}`:                                                        `without "rate_limit_info"`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected"}}`:                `"rejected" without "resetsAt"`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":-1}}`:  `"resetsAt" -1 is not a time in Unix seconds`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":"x"}}`: "rate_limit_event:",
		`{"type":"rate_limit_event","rate_limit_info":[]}`:                                   "rate_limit_event:",
	} {
		_, err := parseRateLimit([]byte(in))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
	}
}

func FuzzParseRateLimit(f *testing.F) {
	f.Add(rejectedEvent)
	f.Add(`{"rate_limit_info":{"status":"rejected","resetsAt":1e300}}`)
	f.Add(`{"rate_limit_info":{"status":"rejected","resetsAt":0.5}}`)
	f.Fuzz(func(t *testing.T, s string) {
		lim, err := parseRateLimit([]byte(s))
		if err != nil || lim == nil {
			return
		}
		if lim.ResetsAt.Unix() <= 0 {
			t.Fatalf("%q: a reset time before 1970: %v", s, lim.ResetsAt)
		}
	})
}
