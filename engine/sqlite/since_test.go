package sqlite_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/sqlite"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 22, 8, 30, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"90m":                       now.Add(-90 * time.Minute),
		"1h30m":                     now.Add(-90 * time.Minute),
		" 24h ":                     now.Add(-24 * time.Hour),
		"7d":                        now.AddDate(0, 0, -7),
		"2026-11-22T08:00:00Z":      time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC),
		"2026-11-22T09:00:00+01:00": time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC),
		"2026-11-20":                time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC),
	} {
		got, err := sqlite.ParseSince(in, now)
		require.NoError(t, err, in)
		assert.True(t, want.Equal(got), "%q: got %v, want %v", in, got, want)
	}

	berlin := time.FixedZone("CET", 3600)
	got, err := sqlite.ParseSince("2026-11-20", now.In(berlin))
	require.NoError(t, err)
	assert.True(t, time.Date(2026, 11, 19, 23, 0, 0, 0, time.UTC).Equal(got), "a date is midnight local time: %v", got)

	for in, msg := range map[string]string{
		"":           "--since is empty",
		"yesterday":  `--since "yesterday" is not understood`,
		"-2h":        "must be positive",
		"0s":         "must be positive",
		"0d":         "from 1 to",
		"99999999d":  "from 1 to",
		"1.5d":       "is not understood",
		"2026-13-01": "is not understood",
		"+3d":        "is not understood",
	} {
		_, err := sqlite.ParseSince(in, now)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), msg, in)
		if msg != "--since is empty" {
			assert.Contains(t, err.Error(), "--since", "the error names the flag")
		}
	}
	_, err = sqlite.ParseSince("soon", now)
	assert.ErrorContains(t, err, sqlite.SinceForms, "the error says what is accepted")
}

// FuzzParseSince: any input either parses or fails with an error naming
// the flag; a relative value always lands before now.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"90m", "7d", "24h", "2026-11-22", "2026-11-22T08:00:00Z", "-1h", "0d", "1.5d", "", "d", "100000000d", "9223372036854775807ns", "2026-11-22T08:00:00+99:00"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 22, 8, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, in string) {
		got, err := sqlite.ParseSince(in, now)
		if err != nil {
			if !strings.Contains(err.Error(), "--since") {
				t.Fatalf("error for %q does not name the flag: %v", in, err)
			}
			return
		}
		v := strings.TrimSpace(in)
		if _, perr := time.Parse(time.RFC3339Nano, v); perr == nil {
			return
		}
		if _, perr := time.Parse(time.DateOnly, v); perr == nil {
			return
		}
		if !got.Before(now) {
			t.Fatalf("relative %q gave %v, not before %v", in, got, now)
		}
	})
}
